// swiglu_mlp baseline: cuBLAS SGEMMs in fp32 (no TF32) for the gate, up and down projections, one gating kernel.
/*
 * As PyTorch eager runs down(silu(gate(x)) * up(x)): three GEMMs and the elementwise gating.
 * The handle and the scratch buffer for g and u are made on the first call (the referee's
 * untimed warm-up) and kept: no cudaMalloc in a timed call. CUBLAS_DEFAULT_MATH leaves TF32 off.
 */
#include <stdio.h>
#include <cublas_v2.h>

static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "swiglu_mlp baseline: cuBLAS cannot be initialised\n");
		h = NULL;
	}
	return h;
}

/* A device buffer of at least n floats, kept between calls (grown only when a call needs more). */
static float *scratch(size_t n)
{
	static float *p;
	static size_t cap;
	if (n > cap) {
		cudaFree(p);
		p = NULL;
		cap = 0;
		if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess)
			return NULL;
		cap = n;
	}
	return p;
}

/* Row-major y (M x N) = x (M x K) W^T with W N x K. */
static int gemm_nt(cublasHandle_t h, const float *x, const float *w, float *y, int M, int N, int K)
{
	const float one = 1.0f, zero = 0.0f;
	return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, K, x, K, &zero, y, N) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

__global__ static void gate_kernel(float *g, const float *u, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

extern "C" void swiglu_mlp(const float *x, const float *wg, const float *wu, const float *wd, float *y, int M, int D, int H)
{
	cublasHandle_t h = blas();
	long n = (long)M * H, blocks = (n + 255) / 256;
	float *g = scratch(2 * (size_t)n), *u = g ? g + n : NULL;
	if (!h || !g || gemm_nt(h, x, wg, g, M, H, D) || gemm_nt(h, x, wu, u, M, H, D)) {
		fprintf(stderr, "swiglu_mlp baseline: cuBLAS or its scratch memory failed\n");
		return;
	}
	gate_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(g, u, n);
	if (gemm_nt(h, g, wd, y, M, D, H))
		fprintf(stderr, "swiglu_mlp baseline: cublasSgemm failed\n");
}
