// matmul_nt baseline: cuBLAS SGEMM in fp32 (no TF32), as PyTorch eager computes x @ W.T by default.
/*
 * Row-major C (M x N) = A (M x K) B^T, B N x K: column-major C^T = B A^T, where B read
 * column-major is B^T (K x N): SGEMM with op(B) = T. The handle is made on the first call (the
 * referee's untimed warm-up); CUBLAS_DEFAULT_MATH leaves TF32 off.
 */
#include <stdio.h>
#include <cublas_v2.h>

static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "matmul_nt baseline: cuBLAS cannot be initialised\n");
		h = NULL;
	}
	return h;
}

extern "C" void matmul_nt(const float *A, const float *B, float *C, int M, int N, int K)
{
	const float one = 1.0f, zero = 0.0f;
	cublasHandle_t h = blas();
	if (h && cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, K, A, K, &zero, C, N) != CUBLAS_STATUS_SUCCESS)
		fprintf(stderr, "matmul_nt baseline: cublasSgemm failed\n");
}
