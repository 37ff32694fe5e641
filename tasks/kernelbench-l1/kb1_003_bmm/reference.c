/* kb1_003_bmm reference: KernelBench level 1 problem 3 (3_Batched_matrix_multiplication), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_bmm(const float *A, const float *B, float *C, int batch_size, int m, int k, int n)
{
	{
		const long gm = (long)m, gn = (long)n, gk = (long)k;
		for (long bt = 0; bt < (long)batch_size; bt++) {
			for (long ii = 0; ii < gm; ii++) {
				for (long jj = 0; jj < gn; jj++) {
					double acc = 0.0;
					for (long kk = 0; kk < gk; kk++) {
						acc += (double)A[bt * gm * gk + ii * gk + kk] * B[bt * gk * gn + kk * gn + jj];
					}
					C[(bt * gm + ii) * gn + jj] = (float)(acc);
				}
			}
		}
	}
}
