/* kb1_096_huber_loss reference: KernelBench level 1 problem 96 (96_HuberLoss), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_huber_loss(const float *predictions, const float *targets, float *y, int batch, int dim)
{
	{
		const long rows = (long)batch, cols = (long)dim;
		double s = 0;
		for (long i = 0; i < rows; i++) {
			for (long j = 0; j < cols; j++) {
				const double p = predictions[i * cols + j], t = targets[i * cols + j];
				s += fabs(p - t) < 1 ? 0.5 * (p - t) * (p - t) : fabs(p - t) - 0.5;
			}
		}
		y[0] = (float)(s / (rows * cols));
	}
}
