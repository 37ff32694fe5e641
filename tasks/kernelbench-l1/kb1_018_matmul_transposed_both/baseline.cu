// kb1_018_matmul_transposed_both baseline: cuBLAS SGEMM in fp32 (no TF32) as PyTorch eager runs it, one kernel per other operator.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cublas_v2.h>

/* The cuBLAS handle, made on the first call (the referee's untimed warm-up) as a framework
 * makes it once per process. CUBLAS_DEFAULT_MATH leaves TF32 off for SGEMM, as PyTorch does by
 * default (torch.backends.cuda.matmul.allow_tf32 is False). */
static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "baseline: cuBLAS cannot be initialised\n");
		h = NULL;
	}
	return h;
}

/* Row-major C[b] = alpha op(A[b]) op(B[b]) + beta C[b] for b < batch: the column-major SGEMM of
 * the transposes, operands swapped. ta: A is stored K x M; tb: B is stored N x K. A batch stride
 * of 0 shares the operand across the batch. Returns 0, or -1 after a message. */
static int gemm(int ta, int tb, long M, long N, long K, float alpha, const float *A, long sa, const float *B, long sb,
		float beta, float *C, long sc, long batch)
{
	cublasHandle_t h = blas();
	if (!h)
		return -1;
	cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	int lda = (int)(ta ? M : K), ldb = (int)(tb ? K : N);
	cublasStatus_t st = batch == 1
		? cublasSgemm(h, ob, oa, (int)N, (int)M, (int)K, &alpha, B, ldb, A, lda, &beta, C, (int)N)
		: cublasSgemmStridedBatched(h, ob, oa, (int)N, (int)M, (int)K, &alpha, B, ldb, sb, A, lda, sa, &beta, C,
					    (int)N, sc, (int)batch);
	if (st != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "baseline: cuBLAS SGEMM failed (%d)\n", (int)st);
		return -1;
	}
	return 0;
}

extern "C" void kb_matmul_transposed_both(const float *A, const float *B, float *C, int M, int K, int N)
{
	{
		const long gm = (long)M, gn = (long)N, gk = (long)K;
		gemm(1, 1, gm, gn, gk, 1.0f, A, 0, B, 0, 0.0f, C, 0, 1);
	}
}
