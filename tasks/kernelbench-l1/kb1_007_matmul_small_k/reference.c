/* kb1_007_matmul_small_k reference: KernelBench level 1 problem 7 (7_Matmul_with_small_K_dimension_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_matmul_small_k(const float *A, const float *B, float *C, int M, int N, int K)
{
	{
		const long gm = (long)M, gn = (long)N, gk = (long)K;
		for (long ii = 0; ii < gm; ii++) {
			for (long jj = 0; jj < gn; jj++) {
				double acc = 0.0;
				for (long kk = 0; kk < gk; kk++) {
					acc += (double)A[ii * gk + kk] * B[kk * gn + jj];
				}
				C[ii * gn + jj] = (float)(acc);
			}
		}
	}
}
