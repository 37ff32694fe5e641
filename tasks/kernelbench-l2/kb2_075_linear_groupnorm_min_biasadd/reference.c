/* kb2_075_linear_groupnorm_min_biasadd reference: KernelBench level 2 problem 75 (75_Gemm_GroupNorm_Min_BiasAdd), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_groupnorm_min_biasadd(const float *x, const float *weight, const float *bias, const float *gn_weight, const float *gn_bias, const float *bias2, float *y, int batch_size, int in_features, int out_features)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_features);
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
	{
		const long A = 1L, G = (long)batch_size * 512, B = (out_features / 512) * 1L;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += t1[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = t1[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					t2[j] = (t1[j] - mean) * rstd * gn_weight[(g % 512) * (out_features / 512) + b / (1L)] + gn_bias[(g % 512) * (out_features / 512) + b / (1L)];
				}
			}
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
					if (r == 0 || v < acc)
						acc = v;
				}
				t3[o * I + i] = acc;
			}
		}
	}
	for (long i0 = 0; i0 < 1; i0++) {
		for (long i1 = 0; i1 < out_features; i1++) {
			for (long i2 = 0; i2 < batch_size; i2++) {
				for (long i3 = 0; i3 < 1; i3++) {
					y[i1 * batch_size + i2] = (float)((double)t3[i2] + bias2[i1]);
				}
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
}
