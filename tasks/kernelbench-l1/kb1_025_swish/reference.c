/* kb1_025_swish reference: KernelBench level 1 problem 25 (25_Swish), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_swish(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(v / (1.0 + exp(-v)));
	}
}
