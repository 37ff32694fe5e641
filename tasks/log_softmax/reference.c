/* log_softmax reference: stable row-wise log-softmax, accumulated in double. */
#include <math.h>

void log_softmax(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		double m = xr[0], s = 0.0;
		for (int j = 1; j < cols; j++)
			m = xr[j] > m ? xr[j] : m;
		for (int j = 0; j < cols; j++)
			s += exp(xr[j] - m);
		double lse = m + log(s);
		for (int j = 0; j < cols; j++)
			y[(long)r * cols + j] = (float)(xr[j] - lse);
	}
}
