/* kb1_067_conv1d reference: KernelBench level 1 problem 67 (67_conv_standard_1D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv1d(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int length)
{
	const long length_out = length - 3 + 1;
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < length_out; y0++) {
					const long g = o / cog;
					double acc = 0.0;
					for (long c = 0; c < cig; c++) {
						for (long q0 = 0; q0 < 3; q0++) {
							const long i0 = y0 * 1 - 0 + q0 * 1;
							if (i0 < 0 || i0 >= length) {
								continue;
							}
							acc += (double)x[(n * ci + g * cig + c) * length + i0] * weight[(o * cig + c) * 3 + q0];
						}
					}
					y[(n * co + o) * length_out + y0] = (float)(acc);
				}
			}
		}
	}
}
