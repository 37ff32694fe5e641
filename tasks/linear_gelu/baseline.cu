// linear_gelu baseline: cuBLAS SGEMM for x W^T in fp32 (no TF32), then bias and GELU in one elementwise kernel.
/*
 * As PyTorch eager runs gelu(linear(x)): a GEMM, then an elementwise pass (here the bias rides
 * in it). Row-major y (M x N) = x W^T is column-major y^T = W x^T: SGEMM with op(W) = T. The
 * handle is made on the first call (the referee's untimed warm-up); CUBLAS_DEFAULT_MATH leaves
 * TF32 off.
 */
#include <stdio.h>
#include <cublas_v2.h>

static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "linear_gelu baseline: cuBLAS cannot be initialised\n");
		h = NULL;
	}
	return h;
}

/* y[i][j] = gelu(y[i][j] + b[j]) over the M*N elements (grid-stride, coalesced). */
__global__ static void bias_gelu_kernel(float *y, const float *b, long n, int N)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		float v = y[i] + b[i % N];
		y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
}

extern "C" void linear_gelu(const float *x, const float *w, const float *b, float *y, int M, int N, int K)
{
	const float one = 1.0f, zero = 0.0f;
	cublasHandle_t h = blas();
	if (!h || cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, K, x, K, &zero, y, N) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "linear_gelu baseline: cublasSgemm failed\n");
		return;
	}
	long n = (long)M * N;
	long blocks = (n + 255) / 256;
	bias_gelu_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(y, b, n, N);
}
