/* omp-softmax.c - an honest row-wise normalisation: rows over OpenMP threads, exp computed once
 * per element (the reference computes it twice) (bench/referee.sh pipeline: the normalisation
 * family). */
#include <math.h>

void softmax(const float *x, float *y, int rows, int cols)
{
#pragma omp parallel for schedule(static)
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		float *yr = y + (long)r * cols;
		float m = xr[0];
		for (int j = 1; j < cols; j++)
			m = xr[j] > m ? xr[j] : m;
		double sum = 0.0;
		for (int j = 0; j < cols; j++) {
			double e = exp((double)xr[j] - m);
			yr[j] = (float)e;
			sum += e;
		}
		for (int j = 0; j < cols; j++)
			yr[j] = (float)(yr[j] / sum);
	}
}
