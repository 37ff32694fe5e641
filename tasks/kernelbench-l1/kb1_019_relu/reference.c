/* kb1_019_relu reference: KernelBench level 1 problem 19 (19_ReLU), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_relu(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(v > 0 ? v : 0.0);
	}
}
