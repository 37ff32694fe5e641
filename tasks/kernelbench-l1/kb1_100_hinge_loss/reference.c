/* kb1_100_hinge_loss reference: KernelBench level 1 problem 100 (100_HingeLoss), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_hinge_loss(const float *predictions, const float *targets, float *y, int batch, int dim)
{
	{
		const long rows = (long)batch, cols = (long)dim;
		double s = 0;
		for (long i = 0; i < rows; i++) {
			for (long j = 0; j < cols; j++) {
				const double p = predictions[i * cols + j], t = targets[j];
				s += fmax(1.0 - p * t, 0.0);
			}
		}
		y[0] = (float)(s / (rows * cols));
	}
}
