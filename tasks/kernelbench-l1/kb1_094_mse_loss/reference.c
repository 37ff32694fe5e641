/* kb1_094_mse_loss reference: KernelBench level 1 problem 94 (94_MSELoss), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_mse_loss(const float *predictions, const float *targets, float *y, int batch, int dim)
{
	{
		const long rows = (long)batch, cols = (long)dim;
		double s = 0;
		for (long i = 0; i < rows; i++) {
			for (long j = 0; j < cols; j++) {
				const double p = predictions[i * cols + j], t = targets[i * cols + j];
				s += (p - t) * (p - t);
			}
		}
		y[0] = (float)(s / (rows * cols));
	}
}
