/* kb1_018_matmul_transposed_both reference: KernelBench level 1 problem 18 (18_Matmul_with_transposed_both), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_matmul_transposed_both(const float *A, const float *B, float *C, int M, int K, int N)
{
	{
		const long gm = (long)M, gn = (long)N, gk = (long)K;
		for (long ii = 0; ii < gm; ii++) {
			for (long jj = 0; jj < gn; jj++) {
				double acc = 0.0;
				for (long kk = 0; kk < gk; kk++) {
					acc += (double)A[kk * gm + ii] * B[jj * gk + kk];
				}
				C[ii * gn + jj] = (float)(acc);
			}
		}
	}
}
