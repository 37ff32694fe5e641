/* kb2_070_linear_sigmoid_scale_residual reference: KernelBench level 2 problem 70 (70_Gemm_Sigmoid_Scaling_ResidualAdd), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_sigmoid_scale_residual(const float *x, const float *weight, const float *bias, float *y, int batch_size, int input_size, int hidden_size)
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
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		double v = t1[i];
		t2[i] = 1.0 / (1.0 + exp(-v));
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		double v = t2[i];
		t3[i] = v * 2.0;
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		y[i] = (float)((double)t3[i] + t1[i]);
	}
	free(t1);
	free(t2);
	free(t3);
}
