/* kb2_039_linear_scale_batchnorm_4096 reference: KernelBench level 2 problem 39 (39_Gemm_Scale_BatchNorm), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_scale_batchnorm_4096(const float *x, const float *weight, const float *bias, const float *scale, const float *bn_weight, const float *bn_bias, float *y, int batch_size, int in_features, int out_features)
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
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_features; i1++) {
			t2[i0 * out_features + i1] = (double)t1[i0 * out_features + i1] * scale[i1];
		}
	}
	{
		const long A = (long)batch_size, G = (long)out_features, B = 1L;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += t2[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = t2[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					y[j] = (float)((t2[j] - mean) * rstd * bn_weight[g] + bn_bias[g]);
				}
			}
		}
	}
	free(t1);
	free(t2);
}
