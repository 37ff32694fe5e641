/* kb1_001_square_matmul reference: KernelBench level 1 problem 1 (1_Square_matrix_multiplication_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_square_matmul(const float *A, const float *B, float *C, int N)
{
	{
		const long gm = (long)N, gn = (long)N, gk = (long)N;
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
