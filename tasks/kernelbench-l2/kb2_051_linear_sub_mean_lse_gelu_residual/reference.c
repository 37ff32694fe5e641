/* kb2_051_linear_sub_mean_lse_gelu_residual reference: KernelBench level 2 problem 51 (51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_sub_mean_lse_gelu_residual(const float *x, const float *weight, const float *bias, const float *subtract, float *y, int batch_size, int in_features, int out_features)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t3 = malloc(sizeof(double) * (long)batch_size);
	double *t4 = malloc(sizeof(double) * (long)batch_size);
	double *t5 = malloc(sizeof(double) * (long)batch_size);
	if (!t1 || !t2 || !t3 || !t4 || !t5) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
		free(t5);
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
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_features; i1++) {
			t2[i0 * out_features + i1] = (double)t1[i0 * out_features + i1] - subtract[i1];
		}
	}
	{
		const long O = (long)batch_size, R = (long)out_features, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t2 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				t3[o * I + i] = acc / R;
			}
		}
	}
	{
		const long O = (long)batch_size, R = 1L, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t3 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp(xp[r * I] - m);
				}
				t4[o * I + i] = m + log(s);
			}
		}
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t4[i];
		t5[i] = 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < in_features; i1++) {
			y[i0 * in_features + i1] = (float)((double)t5[i0] + x[i0 * in_features + i1]);
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}
