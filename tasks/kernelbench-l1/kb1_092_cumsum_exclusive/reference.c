/* kb1_092_cumsum_exclusive reference: KernelBench level 1 problem 92 (92_cumsum_exclusive), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_cumsum_exclusive(const float *x, float *y, int batch, int len)
{
	{
		const long nrow = (long)batch, nlen = (long)len;
		for (long r = 0; r < nrow; r++) {
			double acc = 0.0;
			for (long p = 0; p < nlen; p++) {
				const long j = r * nlen + p;
				y[j] = (float)(acc);
				acc += x[j];
			}
		}
	}
}
