/* kb1_015_lower_triangular_matmul reference: KernelBench level 1 problem 15 (15_Matmul_for_lower_triangular_matrices), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_lower_triangular_matmul(const float *A, const float *B, float *C, int M)
{
	{
		const long gm = (long)M, gn = (long)M, gk = (long)M;
		for (long ii = 0; ii < gm; ii++) {
			for (long jj = 0; jj < gn; jj++) {
				if (jj > ii) {
					C[ii * gn + jj] = (float)(0.0);
					continue;
				}
				double acc = 0.0;
				for (long kk = jj; kk < ii + 1; kk++) {
					acc += (double)A[ii * gk + kk] * B[kk * gn + jj];
				}
				C[ii * gn + jj] = (float)(acc);
			}
		}
	}
}
