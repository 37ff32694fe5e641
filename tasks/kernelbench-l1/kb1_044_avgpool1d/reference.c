/* kb1_044_avgpool1d reference: KernelBench level 1 problem 44 (44_Average_Pooling_1D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_avgpool1d(const float *x, float *y, int batch, int in_channels, int input_length)
{
	const long input_length_out = input_length + 8 - 8 + 1;
	for (long nc = 0; nc < (long)batch * in_channels; nc++) {
		for (long o0 = 0; o0 < input_length_out; o0++) {
			double acc = 0.0;
			for (long q0 = 0; q0 < 8; q0++) {
				const long i0 = o0 * 1 - 4 + q0 * 1;
				if (i0 < 0 || i0 >= input_length) {
					continue;
				}
				acc += x[nc * input_length + i0];
			}
			y[nc * input_length_out + o0] = (float)(acc / 8.0);
		}
	}
}
