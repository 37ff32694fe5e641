/* kb1_079_conv_transpose1d_padded_strided_dilated reference: KernelBench level 1 problem 79 (79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv_transpose1d_padded_strided_dilated(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int length)
{
	const long length_out = (length - 1) * 2 + 3;
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
							const long u0 = y0 + 1 - q0 * 2;
							if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= length) {
								continue;
							}
							const long i0 = u0 / 2;
							acc += (double)x[(n * ci + g * cig + c) * length + i0] * weight[((g * cig + c) * cog + o % cog) * 3 + q0];
						}
					}
					y[(n * co + o) * length_out + y0] = (float)(acc);
				}
			}
		}
	}
}
