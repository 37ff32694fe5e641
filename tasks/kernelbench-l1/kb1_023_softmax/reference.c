/* kb1_023_softmax reference: KernelBench level 1 problem 23 (23_Softmax), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_softmax(const float *x, float *y, int batch, int dim)
{
	{
		const long O = (long)batch, R = (long)dim, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const float *xp = x + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp((double)xp[r * I] - m);
				}
				for (long r = 0; r < R; r++) {
					y[o * R * I + i + r * I] = (float)(exp((double)xp[r * I] - m) / s);
				}
			}
		}
	}
}
