// matmul: shared-memory tiles of BLOCK x BLOCK.
#define BLOCK 32

__global__ void mm_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n)
{
	__shared__ float As[BLOCK][BLOCK], Bs[BLOCK][BLOCK + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	int r = blockIdx.y * BLOCK + ty, c = blockIdx.x * BLOCK + tx;
	float acc = 0.f;
	for (int t = 0; t < n; t += BLOCK) {
		As[ty][tx] = (r < n && t + tx < n) ? A[(size_t)r * n + t + tx] : 0.f;
		Bs[ty][tx] = (t + ty < n && c < n) ? B[(size_t)(t + ty) * n + c] : 0.f;
		__syncthreads();
#pragma unroll
		for (int k = 0; k < BLOCK; k++)
			acc += As[ty][k] * Bs[k][tx];
		__syncthreads();
	}
	if (r < n && c < n)
		C[(size_t)r * n + c] = acc;
}

extern "C" void matmul(const float *A, const float *B, float *C, int n)
{
	dim3 block(BLOCK, BLOCK), grid((n + BLOCK - 1) / BLOCK, (n + BLOCK - 1) / BLOCK);
	mm_tiled<<<grid, block>>>(A, B, C, n);
}
