/* mlp_block reference: both layers accumulated in double, hidden layer kept in double. */
#include <math.h>
#include <stdlib.h>

void mlp_block(const float *x, const float *w1, const float *b1, const float *w2, const float *b2, float *y, int M, int D, int H)
{
	double *h = malloc(sizeof(double) * (size_t)H);
	if (!h)
		abort();
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < H; j++) {
			double s = b1[j];
			for (int k = 0; k < D; k++)
				s += (double)x[(long)i * D + k] * w1[(long)j * D + k];
			h[j] = 0.5 * s * (1.0 + erf(s / sqrt(2.0)));
		}
		for (int j = 0; j < D; j++) {
			double s = b2[j];
			for (int k = 0; k < H; k++)
				s += h[k] * w2[(long)j * H + k];
			y[(long)i * D + j] = (float)s;
		}
	}
	free(h);
}
