/* swiglu_mlp reference: gate and up projections in double, SiLU gating, down projection in double. */
#include <math.h>
#include <stdlib.h>

void swiglu_mlp(const float *x, const float *wg, const float *wu, const float *wd, float *y, int M, int D, int H)
{
	double *h = malloc(sizeof(double) * (size_t)H);
	if (!h)
		abort();
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < H; j++) {
			double g = 0.0, u = 0.0;
			for (int k = 0; k < D; k++) {
				g += (double)x[(long)i * D + k] * wg[(long)j * D + k];
				u += (double)x[(long)i * D + k] * wu[(long)j * D + k];
			}
			h[j] = g / (1.0 + exp(-g)) * u;
		}
		for (int j = 0; j < D; j++) {
			double s = 0.0;
			for (int k = 0; k < H; k++)
				s += h[k] * wd[(long)j * H + k];
			y[(long)i * D + j] = (float)s;
		}
	}
	free(h);
}
