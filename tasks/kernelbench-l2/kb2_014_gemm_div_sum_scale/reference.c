/* kb2_014_gemm_div_sum_scale reference: KernelBench level 2 problem 14 (14_Gemm_Divide_Sum_Scaling), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_gemm_div_sum_scale(const float *x, const float *weight, float *y, int batch_size, int input_size, int hidden_size)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t2 = malloc(sizeof(double) * (long)batch_size * hidden_size);
	double *t3 = malloc(sizeof(double) * (long)batch_size);
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
				double acc = 0.0;
				for (long kk = 0; kk < gk; kk++) {
					acc += (double)x[ii * gk + kk] * weight[jj * gk + kk];
				}
				t1[ii * gn + jj] = acc;
			}
		}
	}
	for (long i = 0; i < (long)batch_size * hidden_size; i++) {
		double v = t1[i];
		t2[i] = v / 2.0;
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
				t3[o * I + i] = acc;
			}
		}
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t3[i];
		y[i] = (float)(v * 1.5);
	}
	free(t1);
	free(t2);
	free(t3);
}
