/* kb2_028_linear_instancenorm_add_mul reference: KernelBench level 2 problem 28 (28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_instancenorm_add_mul(const float *x, const float *weight, const float *bias, const float *y_in, float *y, int batch_size, int in_features, int out_features)
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
	double *v2 = t1;
	{
		const long A = 1L, G = (long)batch_size, B = (long)out_features;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += v2[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = v2[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					t2[j] = (v2[j] - mean) * rstd;
				}
			}
		}
	}
	double *v4 = t2;
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		t3[i] = (double)v4[i] + y_in[i];
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		y[i] = (float)((double)t3[i] * y_in[i]);
	}
	free(t1);
	free(t2);
	free(t3);
}
