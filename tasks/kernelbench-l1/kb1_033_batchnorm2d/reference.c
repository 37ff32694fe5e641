/* kb1_033_batchnorm2d reference: KernelBench level 1 problem 33 (33_BatchNorm), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_batchnorm2d(const float *x, const float *weight, const float *bias, float *y, int batch, int features, int dim1, int dim2)
{
	{
		const long A = (long)batch, G = (long)features, B = (long)dim1 * dim2;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += x[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = x[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					y[j] = (float)((x[j] - mean) * rstd * weight[g] + bias[g]);
				}
			}
		}
	}
}
