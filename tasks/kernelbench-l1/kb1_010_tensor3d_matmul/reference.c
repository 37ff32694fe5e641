/* kb1_010_tensor3d_matmul reference: KernelBench level 1 problem 10 (10_3D_tensor_matrix_multiplication), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_tensor3d_matmul(const float *A, const float *B, float *C, int N, int M, int K, int L)
{
	{
		const long gm = (long)N * M, gn = (long)L, gk = (long)K;
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
