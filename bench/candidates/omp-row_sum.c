/* omp-row_sum.c - an honest reduction: rows over OpenMP threads, each summed in double with a
 * SIMD reduction (bench/referee.sh pipeline: the reduction family). */
void row_sum(const float *x, float *y, int rows, int cols)
{
#pragma omp parallel for schedule(static)
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		double s = 0.0;
#pragma omp simd reduction(+ : s)
		for (int j = 0; j < cols; j++)
			s += xr[j];
		y[r] = (float)s;
	}
}
