/* kb1_041_maxpool1d reference: KernelBench level 1 problem 41 (41_Max_Pooling_1D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_maxpool1d(const float *x, float *y, int batch, int features, int sequence_length)
{
	const long sequence_length_out = sequence_length + 8 - 22 + 1;
	for (long nc = 0; nc < (long)batch * features; nc++) {
		for (long o0 = 0; o0 < sequence_length_out; o0++) {
			double acc = -INFINITY;
			for (long q0 = 0; q0 < 8; q0++) {
				const long i0 = o0 * 1 - 4 + q0 * 3;
				if (i0 < 0 || i0 >= sequence_length) {
					continue;
				}
				const double v = x[nc * sequence_length + i0];
				acc = v > acc ? v : acc;
			}
			y[nc * sequence_length_out + o0] = (float)(acc);
		}
	}
}
