/* softmax reference: numerically stable row-wise softmax, accumulated in double. */
#include <math.h>

void softmax(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		float *yr = y + (long)r * cols;
		float m = xr[0];
		for (int j = 1; j < cols; j++)
			m = xr[j] > m ? xr[j] : m;
		double sum = 0.0;
		for (int j = 0; j < cols; j++)
			sum += exp((double)xr[j] - m);
		for (int j = 0; j < cols; j++)
			yr[j] = (float)(exp((double)xr[j] - m) / sum);
	}
}
