// linear_gelu baseline: 16x16 shared-memory tiles for x W^T, bias and GELU in the epilogue.
#define TILE 16

__global__ static void linear_gelu_kernel(const float *x, const float *w, const float *b, float *y, int M, int N, int K)
{
	__shared__ float xs[TILE][TILE], ws[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	int wrow = blockIdx.x * TILE + threadIdx.y;
	float acc = 0.0f;
	for (int t = 0; t < K; t += TILE) {
		xs[threadIdx.y][threadIdx.x] = row < M && t + threadIdx.x < K ? x[(long)row * K + t + threadIdx.x] : 0.0f;
		ws[threadIdx.y][threadIdx.x] = wrow < N && t + threadIdx.x < K ? w[(long)wrow * K + t + threadIdx.x] : 0.0f;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += xs[threadIdx.y][k] * ws[threadIdx.x][k];
		__syncthreads();
	}
	if (row < M && col < N) {
		float v = acc + b[col];
		y[(long)row * N + col] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
}

extern "C" void linear_gelu(const float *x, const float *w, const float *b, float *y, int M, int N, int K)
{
	dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
	linear_gelu_kernel<<<grid, block>>>(x, w, b, y, M, N, K);
}
