/* kb2_099_linear_gelu_softmax reference: KernelBench level 2 problem 99 (99_Matmul_GELU_Softmax), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_gelu_softmax(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_features);
	if (!t1 || !t2) {
		free(t1);
		free(t2);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long gm = (long)batch_size, gn = (long)out_features, gk = (long)in_features;
		for (long ii = 0; ii < gm; ii++) {
			for (long jj = 0; jj < gn; jj++) {
				double acc = bias[jj];
				for (long kk = 0; kk < gk; kk++) {
					acc += (double)x[ii * gk + kk] * weight[jj * gk + kk];
				}
				t1[ii * gn + jj] = acc;
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t1[i];
		t2[i] = 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
	}
	{
		const long O = (long)batch_size, R = (long)out_features, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t2 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp((double)xp[r * I] - m);
				}
				for (long r = 0; r < R; r++) {
					y[o * R * I + i + r * I] = (float)(exp((double)xp[r * I] - m) / s);
				}
			}
		}
	}
	free(t1);
	free(t2);
}
