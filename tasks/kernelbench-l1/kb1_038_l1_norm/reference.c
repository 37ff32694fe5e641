/* kb1_038_l1_norm reference: KernelBench level 1 problem 38 (38_L1Norm_), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_l1_norm(const float *x, float *y, int batch, int dim)
{
	{
		const long O = (long)batch, R = (long)dim, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				double s = 0;
				for (long r = 0; r < R; r++) {
					const double v = x[(o * R + r) * I + i];
					s += fabs(v);
				}
				const double f = s / R;
				for (long r = 0; r < R; r++) {
					y[(o * R + r) * I + i] = (float)(x[(o * R + r) * I + i] / f);
				}
			}
		}
	}
}
