/* rmsnorm_linear reference: per-row inverse RMS in double, normalized row kept in double for the projection. */
#include <math.h>
#include <stdlib.h>

void rmsnorm_linear(const float *x, const float *g, const float *w, float *y, int M, int D, int N, float eps)
{
	double *xn = malloc(sizeof(double) * (size_t)D);
	if (!xn)
		abort();
	for (int i = 0; i < M; i++) {
		double ss = 0.0;
		for (int k = 0; k < D; k++)
			ss += (double)x[(long)i * D + k] * x[(long)i * D + k];
		double inv = 1.0 / sqrt(ss / D + eps);
		for (int k = 0; k < D; k++)
			xn[k] = x[(long)i * D + k] * inv * g[k];
		for (int j = 0; j < N; j++) {
			double s = 0.0;
			for (int k = 0; k < D; k++)
				s += xn[k] * w[(long)j * D + k];
			y[(long)i * N + j] = (float)s;
		}
	}
	free(xn);
}
