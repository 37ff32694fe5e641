/* kb1_028_hardsigmoid reference: KernelBench level 1 problem 28 (28_HardSigmoid), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_hardsigmoid(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0));
	}
}
