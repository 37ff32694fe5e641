/* gelu reference: exact GELU, y = 0.5 x (1 + erf(x / sqrt 2)), evaluated in double. */
#include <math.h>

void gelu(const float *x, float *y, int n)
{
	for (int i = 0; i < n; i++) {
		double v = x[i];
		y[i] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
	}
}
