/* add_rmsnorm reference: res += x, then x = rmsnorm(res) * weight, the sum of squares in double. */
#include <math.h>

void add_rmsnorm(float *x, float *res, const float *weight, int rows, int cols, float eps)
{
	for (int r = 0; r < rows; r++) {
		long o = (long)r * cols;
		double ss = 0.0;
		for (int j = 0; j < cols; j++) {
			res[o + j] = res[o + j] + x[o + j];
			ss += (double)res[o + j] * res[o + j];
		}
		double inv = 1.0 / sqrt(ss / cols + eps);
		for (int j = 0; j < cols; j++)
			x[o + j] = (float)(res[o + j] * inv * weight[j]);
	}
}
