/* kb2_022_linear_scale_residual_clamp_lse_mish reference: KernelBench level 2 problem 22 (22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_scale_residual_clamp_lse_mish(const float *x, const float *weight, const float *bias, float *y, int batch_size, int input_size, int hidden_size)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t2 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t3 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t4 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t5 = malloc(sizeof(double) * (long)batch_size);
	double *t6 = malloc(sizeof(double) * (long)batch_size);
	if (!t1 || !t2 || !t3 || !t4 || !t5 || !t6) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
		free(t5);
		free(t6);
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
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		double v = t1[i];
		t2[i] = v * 2.0;
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		t3[i] = (double)t2[i] + t2[i];
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		double v = t3[i];
		t4[i] = fmin(fmax(v, -10.0), 10.0);
	}
	{
		const long O = (long)batch_size, R = (long)hidden_size, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t4 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp(xp[r * I] - m);
				}
				t5[o * I + i] = m + log(s);
			}
		}
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t5[i];
		t6[i] = v * tanh(log1p(exp(v)));
	}
	for (long i = 0; i < (long)batch_size; i++) {
		y[i] = (float)((double)t5[i] * t6[i]);
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
	free(t6);
}
