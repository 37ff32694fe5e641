/* kb1_013_symmetric_matmul reference: KernelBench level 1 problem 13 (13_Matmul_for_symmetric_matrices), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_symmetric_matmul(const float *A, const float *B, float *C, int N)
{
	{
		const long gm = (long)N, gn = (long)N, gk = (long)N;
		for (long ii = 0; ii < gm; ii++) {
			for (long jj = 0; jj < gn; jj++) {
				double acc = 0.0;
				for (long kk = 0; kk < gk; kk++) {
					acc += (double)(ii >= kk ? A[ii * gk + kk] : A[kk * gk + ii]) * (kk >= jj ? B[kk * gn + jj] : B[jj * gn + kk]);
				}
				C[ii * gn + jj] = (float)(acc);
			}
		}
	}
}
