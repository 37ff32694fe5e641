/* kb1_004_matvec reference: KernelBench level 1 problem 4 (4_Matrix_vector_multiplication_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_matvec(const float *A, const float *B, float *C, int M, int K)
{
	{
		const long gm = (long)M, gn = 1L, gk = (long)K;
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
