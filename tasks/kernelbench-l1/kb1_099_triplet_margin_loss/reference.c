/* kb1_099_triplet_margin_loss reference: KernelBench level 1 problem 99 (99_TripletMarginLoss), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_triplet_margin_loss(const float *anchor, const float *positive, const float *negative, float *y, int batch, int dim)
{
	{
		const long rows = (long)batch, cols = (long)dim;
		double s = 0;
		for (long i = 0; i < rows; i++) {
			double dp = 0, dn = 0;
			for (long j = 0; j < cols; j++) {
				const double da = (double)anchor[i * cols + j] - positive[i * cols + j] + 1e-06, db = (double)anchor[i * cols + j] - negative[i * cols + j] + 1e-06;
				dp += da * da;
				dn += db * db;
			}
			s += fmax(sqrt(dp) - sqrt(dn) + 1.0, 0.0);
		}
		y[0] = (float)(s / rows);
	}
}
