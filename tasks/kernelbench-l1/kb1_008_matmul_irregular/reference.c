/* kb1_008_matmul_irregular reference: KernelBench level 1 problem 8 (8_Matmul_with_irregular_shapes_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_matmul_irregular(const float *A, const float *B, float *C, int M, int K, int N)
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
