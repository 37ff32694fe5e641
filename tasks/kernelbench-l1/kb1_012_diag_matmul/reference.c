/* kb1_012_diag_matmul reference: KernelBench level 1 problem 12 (12_Matmul_with_diagonal_matrices_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_diag_matmul(const float *A, const float *B, float *C, int N, int M)
{
	const float *v1 = A;
	for (long i0 = 0; i0 < N; i0++) {
		for (long i1 = 0; i1 < M; i1++) {
			C[i0 * M + i1] = (float)((double)v1[i0] * B[i0 * M + i1]);
		}
	}
}
