/* kb2_030_linear_groupnorm_hardtanh reference: KernelBench level 2 problem 30 (30_Gemm_GroupNorm_Hardtanh), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_groupnorm_hardtanh(const float *x, const float *weight, const float *bias, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_features, int out_features)
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
	{
		const long A = 1L, G = (long)batch_size * 16, B = (out_features / 16) * 1L;
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
					t2[j] = (t1[j] - mean) * rstd * gn_weight[(g % 16) * (out_features / 16) + b / (1L)] + gn_bias[(g % 16) * (out_features / 16) + b / (1L)];
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t2[i];
		y[i] = (float)(fmin(fmax(v, -2.0), 2.0));
	}
	free(t1);
	free(t2);
}
