/* kb2_084_linear_batchnorm_scale_softmax reference: KernelBench level 2 problem 84 (84_Gemm_BatchNorm_Scaling_Softmax), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_batchnorm_scale_softmax(const float *x, const float *weight, const float *bias, const float *bn_weight, const float *bn_bias, const float *scale, float *y, int batch_size, int in_features, int out_features)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_features);
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
		const long A = (long)batch_size, G = (long)out_features, B = 1L;
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
					t2[j] = (t1[j] - mean) * rstd * bn_weight[g] + bn_bias[g];
				}
			}
		}
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_features; i1++) {
			t3[i0 * out_features + i1] = (double)scale[0] * t2[i0 * out_features + i1];
		}
	}
	{
		const long O = (long)batch_size, R = (long)out_features, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t3 + o * R * I + i;
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
	free(t3);
}
