/* kb2_040_linear_scale_residual reference: KernelBench level 2 problem 40 (40_Matmul_Scaling_ResidualAdd), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_scale_residual(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
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
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t1[i];
		t2[i] = v * 0.5;
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		y[i] = (float)((double)t2[i] + t1[i]);
	}
	free(t1);
	free(t2);
}
