/* kb2_055_linear_maxpool_sum_scale reference: KernelBench level 2 problem 55 (55_Matmul_MaxPool_Sum_Scale), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_maxpool_sum_scale(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
{
	const long pooled = (out_features - 2) / 2 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * pooled);
	double *t3 = malloc(sizeof(double) * (long)batch_size);
	if (!t1 || !t2 || !t3) {
		free(t1);
		free(t2);
		free(t3);
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
	double *v2 = t1;
	for (long nc = 0; nc < (long)batch_size; nc++) {
		for (long o0 = 0; o0 < pooled; o0++) {
			double acc = -INFINITY;
			for (long q0 = 0; q0 < 2; q0++) {
				const long i0 = o0 * 2 - 0 + q0 * 1;
				if (i0 < 0 || i0 >= out_features) {
					continue;
				}
				const double v = v2[nc * out_features + i0];
				acc = v > acc ? v : acc;
			}
			t2[nc * pooled + o0] = acc;
		}
	}
	double *v4 = t2;
	{
		const long O = (long)batch_size, R = (long)pooled, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = v4 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				t3[o * I + i] = acc;
			}
		}
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t3[i];
		y[i] = (float)(v * 0.5);
	}
	free(t1);
	free(t2);
	free(t3);
}
