/* rmsnorm reference: mean of squares per row accumulated in double. */
#include <math.h>

void rmsnorm(const float *x, const float *weight, float *y, int rows, int cols, float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		double ss = 0.0;
		for (int j = 0; j < cols; j++)
			ss += (double)xr[j] * xr[j];
		double inv = 1.0 / sqrt(ss / cols + eps);
		for (int j = 0; j < cols; j++)
			y[(long)r * cols + j] = (float)(xr[j] * inv * weight[j]);
	}
}
