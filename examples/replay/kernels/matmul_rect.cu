// matmul_rect baseline: 16x16 shared-memory tiles, one output element per thread.
#define TILE 16

__global__ static void matmul_rect_kernel(const float *A, const float *B, float *C, int M, int N, int K)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int t = 0; t < K; t += TILE) {
		As[threadIdx.y][threadIdx.x] = row < M && t + threadIdx.x < K ? A[(long)row * K + t + threadIdx.x] : 0.0f;
		Bs[threadIdx.y][threadIdx.x] = col < N && t + threadIdx.y < K ? B[(long)(t + threadIdx.y) * N + col] : 0.0f;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N)
		C[(long)row * N + col] = acc;
}

extern "C" void matmul_rect(const float *A, const float *B, float *C, int M, int N, int K)
{
	dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
	matmul_rect_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
