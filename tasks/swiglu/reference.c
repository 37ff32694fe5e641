/* swiglu reference: silu(gate) * up in double. */
#include <math.h>

void swiglu(const float *gate, const float *up, float *y, int n)
{
	for (int i = 0; i < n; i++) {
		double g = gate[i];
		y[i] = (float)(g / (1.0 + exp(-g)) * up[i]);
	}
}
