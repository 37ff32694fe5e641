/* kb1_011_tensor4d_matmul reference: KernelBench level 1 problem 11 (11_4D_tensor_matrix_multiplication), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_tensor4d_matmul(const float *A, const float *B, float *C, int b, int i, int j, int l, int k)
{
	{
		const long gm = (long)b * i * j, gn = (long)k, gk = (long)l;
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
