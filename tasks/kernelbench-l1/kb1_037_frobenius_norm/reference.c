/* kb1_037_frobenius_norm reference: KernelBench level 1 problem 37 (37_FrobeniusNorm_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_frobenius_norm(const float *x, float *y, int batch, int features, int dim1, int dim2)
{
	{
		const long O = 1L, R = (long)batch * features * dim1 * dim2, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				double s = 0;
				for (long r = 0; r < R; r++) {
					const double v = x[(o * R + r) * I + i];
					s += v * v;
				}
				const double f = sqrt(s);
				for (long r = 0; r < R; r++) {
					y[(o * R + r) * I + i] = (float)(x[(o * R + r) * I + i] / f);
				}
			}
		}
	}
}
