// swiglu_mlp baseline: gate and up projections in tiled linear kernels, a gating kernel, the down projection.

#define TILE 16

/* y[M][N] = act(x[M][K] w[N][K]^T + b[N]); act 0: none, 1: exact GELU. b may be NULL. */
__global__ static void linear_kernel(const float *x, const float *w, const float *b, float *y, int M, int N, int K, int act)
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
		float v = acc + (b ? b[col] : 0.0f);
		if (act == 1)
			v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
		y[(long)row * N + col] = v;
	}
}

static void linear(const float *x, const float *w, const float *b, float *y, int M, int N, int K, int act)
{
	dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
	linear_kernel<<<grid, block>>>(x, w, b, y, M, N, K, act);
}

__global__ static void gate_kernel(const float *g, const float *u, float *h, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		h[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

extern "C" void swiglu_mlp(const float *x, const float *wg, const float *wu, const float *wd, float *y, int M, int D, int H)
{
	float *g, *u;
	long n = (long)M * H;
	if (cudaMalloc(&g, sizeof(float) * 2 * (size_t)n) != cudaSuccess)
		return;
	u = g + n;
	linear(x, wg, NULL, g, M, H, D, 0);
	linear(x, wu, NULL, u, M, H, D, 0);
	gate_kernel<<<(unsigned)((n + 255) / 256), 256>>>(g, u, g, n);
	linear(g, wd, NULL, y, M, D, H, 0);
	cudaFree(g);
}
