/* kb2_062_linear_groupnorm_leakyrelu_sum reference: KernelBench level 2 problem 62 (62_Matmul_GroupNorm_LeakyReLU_Sum), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_groupnorm_leakyrelu_sum(const float *x, const float *weight, const float *bias, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int input_size, int hidden_size)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t2 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t3 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	if (!t1 || !t2 || !t3) {
		free(t1);
		free(t2);
		free(t3);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long gm = (long)batch_size, gn = (long)hidden_size, gk = (long)input_size;
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
		const long A = 1L, G = (long)batch_size * 512, B = (hidden_size / 512) * 1L;
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
					t2[j] = (t1[j] - mean) * rstd * gn_weight[(g % 512) * (hidden_size / 512) + b / (1L)] + gn_bias[(g % 512) * (hidden_size / 512) + b / (1L)];
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		double v = t2[i];
		t3[i] = v > 0 ? v : 0.01 * v;
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		y[i] = (float)((double)t3[i] + t3[i]);
	}
	free(t1);
	free(t2);
	free(t3);
}
