// matmul baseline: cuBLAS SGEMM in fp32 (no TF32), as PyTorch eager computes torch.mm by default.
/*
 * Row-major C = A B is column-major C^T = B^T A^T: one SGEMM with the operands swapped. The
 * handle is made on the first call, which the referee's warm-up block makes (never timed), as
 * a framework makes its handle once per process; the math mode is CUBLAS_DEFAULT_MATH, which
 * leaves TF32 off for SGEMM (torch.backends.cuda.matmul.allow_tf32 is False by default).
 */
#include <stdio.h>
#include <cublas_v2.h>

static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "matmul baseline: cuBLAS cannot be initialised\n");
		h = NULL;
	}
	return h;
}

extern "C" void matmul(const float *A, const float *B, float *C, int n)
{
	const float one = 1.0f, zero = 0.0f;
	cublasHandle_t h = blas();
	if (h && cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n) != CUBLAS_STATUS_SUCCESS)
		fprintf(stderr, "matmul baseline: cublasSgemm failed\n");
}
