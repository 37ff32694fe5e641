/* kb1_053_min_dim reference: KernelBench level 1 problem 53 (53_Min_reduction_over_a_dimension), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_min_dim(const float *x, float *y, int batch, int dim1, int dim2)
{
	{
		const long O = (long)batch, R = (long)dim1, I = (long)dim2;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const float *xp = x + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					if (r == 0 || v < acc)
						acc = v;
				}
				y[o * I + i] = (float)(acc);
			}
		}
	}
}
