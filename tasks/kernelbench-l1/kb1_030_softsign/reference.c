/* kb1_030_softsign reference: KernelBench level 1 problem 30 (30_Softsign), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_softsign(const float *x, float *y, int batch, int dim)
{
	for (long i = 0; i < (long)batch * dim; i++) {
		double v = x[i];
		y[i] = (float)(v / (1.0 + fabs(v)));
	}
}
