/* kb2_053_linear_scale_hardtanh_gelu reference: KernelBench level 2 problem 53 (53_Gemm_Scaling_Hardtanh_GELU), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_scale_hardtanh_gelu(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
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
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t1[i];
		t2[i] = v * 0.5;
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t2[i];
		t3[i] = fmin(fmax(v, -2.0), 2.0);
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t3[i];
		y[i] = (float)(0.5 * v * (1.0 + erf(v * 0.7071067811865476)));
	}
	free(t1);
	free(t2);
	free(t3);
}
