/* omp-matmul.c - an honest matrix product: rows of C over OpenMP threads, the k loop outside
 * the j loop so that B is read row by row, accumulated in double (bench/referee.sh pipeline:
 * the matmul family). */
#include <stdlib.h>

void matmul(const float *A, const float *B, float *C, int n)
{
#pragma omp parallel
	{
		double *acc = malloc((size_t)n * sizeof *acc);
#pragma omp for schedule(static)
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < n; j++)
				acc[j] = 0.0;
			for (int k = 0; k < n; k++) {
				double a = A[(long)i * n + k];
				const float *b = B + (long)k * n;
#pragma omp simd
				for (int j = 0; j < n; j++)
					acc[j] += a * b[j];
			}
			for (int j = 0; j < n; j++)
				C[(long)i * n + j] = (float)acc[j];
		}
		free(acc);
	}
}
