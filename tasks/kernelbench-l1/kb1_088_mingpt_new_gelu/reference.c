/* kb1_088_mingpt_new_gelu reference: KernelBench level 1 problem 88 (88_MinGPTNewGelu), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_mingpt_new_gelu(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
	}
}
