/* kb2_059_linear_swish_scale reference: KernelBench level 2 problem 59 (59_Matmul_Swish_Scaling), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_swish_scale(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_features, int out_features)
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
		t2[i] = v / (1.0 + exp(-v));
	}
	for (long i = 0; i < (long)batch_size * out_features; i++) {
		double v = t2[i];
		y[i] = (float)(v * 2.0);
	}
	free(t1);
	free(t2);
}
