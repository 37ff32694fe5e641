/* kb2_081_linear_swish_div_clamp_tanh_clamp reference: KernelBench level 2 problem 81 (81_Gemm_Swish_Divide_Clamp_Tanh_Clamp), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_swish_div_clamp_tanh_clamp(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_features);
	double *t5 = malloc(sizeof(double) * (long)batch_size * out_features);
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
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t1[i];
		t2[i] = v / (1.0 + exp(-v));
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t2[i];
		t3[i] = v / 2.0;
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t3[i];
		t4[i] = fmin(fmax(v, -1.0), 1.0);
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t4[i];
		t5[i] = tanh(v);
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t5[i];
		y[i] = (float)(fmin(fmax(v, -1.0), 1.0));
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}
