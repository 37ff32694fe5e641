/* add_layernorm reference: h = x + res, then a two-pass layer norm of h accumulated in double. */
#include <math.h>

void add_layernorm(const float *x, const float *res, const float *gamma, const float *beta, float *h, float *y, int rows,
		   int cols, float eps)
{
	for (int r = 0; r < rows; r++) {
		long o = (long)r * cols;
		double mean = 0.0, var = 0.0;
		for (int j = 0; j < cols; j++) {
			h[o + j] = x[o + j] + res[o + j];
			mean += h[o + j];
		}
		mean /= cols;
		for (int j = 0; j < cols; j++)
			var += (h[o + j] - mean) * (h[o + j] - mean);
		double inv = 1.0 / sqrt(var / cols + eps);
		for (int j = 0; j < cols; j++)
			y[o + j] = (float)((h[o + j] - mean) * inv * gamma[j] + beta[j]);
	}
}
