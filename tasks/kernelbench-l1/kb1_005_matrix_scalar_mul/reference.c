/* kb1_005_matrix_scalar_mul reference: KernelBench level 1 problem 5 (5_Matrix_scalar_multiplication), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_matrix_scalar_mul(const float *A, float *C, int M, int N, float s)
{
	for (long i = 0; i < (long)M * N; i++) {
		double v = A[i];
		C[i] = (float)(v * s);
	}
}
