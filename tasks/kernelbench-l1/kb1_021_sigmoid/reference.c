/* kb1_021_sigmoid reference: KernelBench level 1 problem 21 (21_Sigmoid), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_sigmoid(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(1.0 / (1.0 + exp(-v)));
	}
}
