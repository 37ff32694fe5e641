/* kb1_091_cumsum_reverse reference: KernelBench level 1 problem 91 (91_cumsum_reverse), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_cumsum_reverse(const float *x, float *y, int batch, int len)
{
	{
		const long nrow = (long)batch, nlen = (long)len;
		for (long r = 0; r < nrow; r++) {
			double acc = 0.0;
			for (long p = 0; p < nlen; p++) {
				const long j = r * nlen + nlen - 1 - p;
				acc += x[j];
				y[j] = (float)(acc);
			}
		}
	}
}
