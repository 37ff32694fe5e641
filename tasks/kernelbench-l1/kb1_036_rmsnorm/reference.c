/* kb1_036_rmsnorm reference: KernelBench level 1 problem 36 (36_RMSNorm_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_rmsnorm(const float *x, float *y, int batch, int features, int dim1, int dim2)
{
	{
		const long O = (long)batch, R = (long)features, I = (long)dim1 * dim2;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				double s = 0;
				for (long r = 0; r < R; r++) {
					const double v = x[(o * R + r) * I + i];
					s += v * v;
				}
				const double f = sqrt(s / R + 1e-05);
				for (long r = 0; r < R; r++) {
					y[(o * R + r) * I + i] = (float)(x[(o * R + r) * I + i] / f);
				}
			}
		}
	}
}
