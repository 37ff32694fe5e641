/* layernorm reference: two-pass mean and variance per row, accumulated in double. */
#include <math.h>

void layernorm(const float *x, const float *gamma, const float *beta, float *y, int rows, int cols, float eps)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		double mean = 0.0, var = 0.0;
		for (int j = 0; j < cols; j++)
			mean += xr[j];
		mean /= cols;
		for (int j = 0; j < cols; j++)
			var += (xr[j] - mean) * (xr[j] - mean);
		var /= cols;
		double inv = 1.0 / sqrt(var + eps);
		for (int j = 0; j < cols; j++)
			y[(long)r * cols + j] = (float)((xr[j] - mean) * inv * gamma[j] + beta[j]);
	}
}
