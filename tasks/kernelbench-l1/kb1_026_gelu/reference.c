/* kb1_026_gelu reference: KernelBench level 1 problem 26 (26_GELU_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_gelu(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(0.5 * v * (1.0 + erf(v * 0.7071067811865476)));
	}
}
