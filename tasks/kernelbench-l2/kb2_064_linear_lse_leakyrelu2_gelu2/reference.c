/* kb2_064_linear_lse_leakyrelu2_gelu2 reference: KernelBench level 2 problem 64 (64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_lse_leakyrelu2_gelu2(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size);
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
	{
		const long O = (long)batch_size, R = (long)out_features, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t1 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp(xp[r * I] - m);
				}
				t2[o * I + i] = m + log(s);
			}
		}
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t2[i];
		t3[i] = v > 0 ? v : 0.01 * v;
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t3[i];
		t4[i] = v > 0 ? v : 0.01 * v;
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t4[i];
		t5[i] = 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t5[i];
		y[i] = (float)(0.5 * v * (1.0 + erf(v * 0.7071067811865476)));
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}
