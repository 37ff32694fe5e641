// matmul: 64x64 tiles, each thread computes a 4x4 block of C in registers.
#define BLOCK 64
#define TK 16

__global__ void __launch_bounds__(256) mm_reg(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n)
{
	__shared__ float As[TK][BLOCK + 4], Bs[TK][BLOCK + 4];
	int tid = threadIdx.x, tr = (tid / 16) * 4, tc = (tid % 16) * 4;
	int row0 = blockIdx.y * BLOCK, col0 = blockIdx.x * BLOCK;
	float acc[4][4] = {};
	for (int k0 = 0; k0 < n; k0 += TK) {
		for (int i = tid; i < BLOCK * TK; i += 256) {
			int r = i / TK, k = i % TK;
			As[k][r] = (row0 + r < n && k0 + k < n) ? A[(size_t)(row0 + r) * n + k0 + k] : 0.f;
			int kk = i / BLOCK, cc = i % BLOCK;
			Bs[kk][cc] = (k0 + kk < n && col0 + cc < n) ? B[(size_t)(k0 + kk) * n + col0 + cc] : 0.f;
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < TK; k++) {
			float a[4], b[4];
#pragma unroll
			for (int i = 0; i < 4; i++) {
				a[i] = As[k][tr + i];
				b[i] = Bs[k][tc + i];
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			if (row0 + tr + i < n && col0 + tc + j < n)
				C[(size_t)(row0 + tr + i) * n + col0 + tc + j] = acc[i][j];
}

extern "C" void matmul(const float *A, const float *B, float *C, int n)
{
	dim3 grid((n + BLOCK - 1) / BLOCK, (n + BLOCK - 1) / BLOCK);
	mm_reg<<<grid, 256>>>(A, B, C, n);
}
