/* geglu reference: gelu(gate) * value per row, in double. */
#include <math.h>

void geglu(const float *x, float *y, int rows, int d)
{
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < d; j++) {
			double g = x[(long)r * 2 * d + j], v = x[(long)r * 2 * d + d + j];
			y[(long)r * d + j] = (float)(0.5 * g * (1.0 + erf(g / sqrt(2.0))) * v);
		}
}
