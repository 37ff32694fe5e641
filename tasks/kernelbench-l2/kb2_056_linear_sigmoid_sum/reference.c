/* kb2_056_linear_sigmoid_sum reference: KernelBench level 2 problem 56 (56_Matmul_Sigmoid_Sum), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_linear_sigmoid_sum(const float *x, const float *weight, const float *bias, float *y, int batch_size, int input_size, int hidden_size)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t2 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	if (!t1 || !t2) {
		free(t1);
		free(t2);
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
	{
		const long O = (long)batch_size, R = (long)hidden_size, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t2 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				y[o * I + i] = (float)(acc);
			}
		}
	}
	free(t1);
	free(t2);
}
