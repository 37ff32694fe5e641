/* kb1_076_conv1d_dilated_strided reference: KernelBench level 1 problem 76 (76_conv_standard_1D_dilated_strided__), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv1d_dilated_strided(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int length)
{
	const long length_out = (length - 9) / 3 + 1;
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
							const long i0 = y0 * 3 - 0 + q0 * 4;
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
