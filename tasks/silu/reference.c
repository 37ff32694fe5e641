/* silu reference: y = x * sigmoid(x), evaluated in double. */
#include <math.h>

void silu(const float *x, float *y, int n)
{
	for (int i = 0; i < n; i++) {
		double v = x[i];
		y[i] = (float)(v / (1.0 + exp(-v)));
	}
}
