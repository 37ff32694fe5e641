/* kb1_095_cross_entropy_loss reference: KernelBench level 1 problem 95 (95_CrossEntropyLoss), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_cross_entropy_loss(const float *predictions, const int64_t *targets, float *y, int batch, int num_classes)
{
	{
		const long rows = (long)batch, cols = (long)num_classes;
		double s = 0;
		for (long i = 0; i < rows; i++) {
			const float *xr = predictions + i * cols;
			double m = xr[0], e = 0;
			for (long j = 1; j < cols; j++) {
				m = xr[j] > m ? xr[j] : m;
			}
			for (long j = 0; j < cols; j++) {
				e += exp((double)xr[j] - m);
			}
			s += m + log(e) - xr[targets[i]];
		}
		y[0] = (float)(s / rows);
	}
}
