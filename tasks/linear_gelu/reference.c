/* linear_gelu reference: x W^T + b accumulated in double, then the exact GELU. */
#include <math.h>

void linear_gelu(const float *x, const float *w, const float *b, float *y, int M, int N, int K)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = b[j];
			for (int k = 0; k < K; k++)
				s += (double)x[(long)i * K + k] * w[(long)j * K + k];
			y[(long)i * N + j] = (float)(0.5 * s * (1.0 + erf(s / sqrt(2.0))));
		}
}
