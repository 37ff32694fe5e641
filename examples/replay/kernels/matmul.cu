// matmul baseline: 16x16 shared-memory tiles, one output element per thread.
#define TILE 16

__global__ static void matmul_kernel(const float *A, const float *B, float *C, int n)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int t = 0; t < n; t += TILE) {
		As[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < n ? A[(long)row * n + t + threadIdx.x] : 0.0f;
		Bs[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < n ? B[(long)(t + threadIdx.y) * n + col] : 0.0f;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < n && col < n)
		C[(long)row * n + col] = acc;
}

extern "C" void matmul(const float *A, const float *B, float *C, int n)
{
	dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
	matmul_kernel<<<grid, block>>>(A, B, C, n);
}
