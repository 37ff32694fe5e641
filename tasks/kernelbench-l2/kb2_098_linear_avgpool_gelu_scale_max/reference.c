/* kb2_098_linear_avgpool_gelu_scale_max reference: KernelBench level 2 problem 98 (98_Matmul_AvgPool_GELU_Scale_Max), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_avgpool_gelu_scale_max(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
{
	const long pooled = (out_features - 16) / 16 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * pooled);
	double *t3 = malloc(sizeof(double) * (long)batch_size * pooled);
	double *t4 = malloc(sizeof(double) * (long)batch_size * pooled);
	if (!t1 || !t2 || !t3 || !t4) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
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
			double acc = 0.0;
			for (long q0 = 0; q0 < 16; q0++) {
				const long i0 = o0 * 16 - 0 + q0 * 1;
				if (i0 < 0 || i0 >= out_features) {
					continue;
				}
				acc += v2[nc * out_features + i0];
			}
			t2[nc * pooled + o0] = acc / 16.0;
		}
	}
	double *v4 = t2;
	for (long i = 0; i < (long)batch_size * pooled; i++) {
		double v = v4[i];
		t3[i] = 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
	}
	for (long i = 0; i < (long)batch_size * pooled; i++) {
		double v = t3[i];
		t4[i] = v * 2.0;
	}
	{
		const long O = (long)batch_size, R = (long)pooled, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t4 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					if (r == 0 || v > acc)
						acc = v;
				}
				y[o * I + i] = (float)(acc);
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
