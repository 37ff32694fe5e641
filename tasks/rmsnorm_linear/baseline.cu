// rmsnorm_linear baseline: a per-row RMS-normalization kernel, then cuBLAS SGEMM in fp32 (no TF32) for xn W^T.
/*
 * As PyTorch eager runs linear(rms_norm(x) * g): a normalization pass writing xn, then a GEMM.
 * The handle and the scratch buffer for xn are made on the first call (the referee's untimed
 * warm-up) and kept: no cudaMalloc in a timed call. CUBLAS_DEFAULT_MATH leaves TF32 off.
 */
#include <stdio.h>
#include <cublas_v2.h>

static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "rmsnorm_linear baseline: cuBLAS cannot be initialised\n");
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

/* One block of 256 threads per row: the sum of squares by warp shuffles, then xn = x * inv * g. */
__global__ static void rmsnorm_kernel(const float *x, const float *g, float *xn, int D, float eps)
{
	__shared__ float part[8];
	const float *xr = x + (long)blockIdx.x * D;
	float *yr = xn + (long)blockIdx.x * D;
	float s = 0.0f;
	for (int k = threadIdx.x; k < D; k += blockDim.x)
		s += xr[k] * xr[k];
	for (int off = 16; off > 0; off >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, off);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = s;
	__syncthreads();
	s = 0.0f;
	for (int w = 0; w < 8; w++)
		s += part[w];
	float inv = rsqrtf(s / D + eps);
	for (int k = threadIdx.x; k < D; k += blockDim.x)
		yr[k] = xr[k] * inv * g[k];
}

extern "C" void rmsnorm_linear(const float *x, const float *g, const float *w, float *y, int M, int D, int N, float eps)
{
	const float one = 1.0f, zero = 0.0f;
	cublasHandle_t h = blas();
	float *xn = scratch((size_t)M * D);
	if (!h || !xn) {
		fprintf(stderr, "rmsnorm_linear baseline: cuBLAS or its scratch memory failed\n");
		return;
	}
	rmsnorm_kernel<<<M, 256>>>(x, g, xn, D, eps);
	if (cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, D, &one, w, D, xn, D, &zero, y, N) != CUBLAS_STATUS_SUCCESS)
		fprintf(stderr, "rmsnorm_linear baseline: cublasSgemm failed\n");
}
