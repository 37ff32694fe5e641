/* kb1_064_conv_transpose1d reference: KernelBench level 1 problem 64 (64_conv_transposed_1D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv_transpose1d(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int length)
{
	const long length_out = length - 1 + 3;
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
							const long u0 = y0 + 0 - q0 * 1;
							if (u0 < 0 || u0 % 1 != 0 || u0 / 1 >= length) {
								continue;
							}
							const long i0 = u0 / 1;
							acc += (double)x[(n * ci + g * cig + c) * length + i0] * weight[((g * cig + c) * cog + o % cog) * 3 + q0];
						}
					}
					y[(n * co + o) * length_out + y0] = (float)(acc);
				}
			}
		}
	}
}
