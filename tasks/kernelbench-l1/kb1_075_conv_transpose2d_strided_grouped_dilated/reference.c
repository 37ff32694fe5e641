/* kb1_075_conv_transpose2d_strided_grouped_dilated reference: KernelBench level 1 problem 75 (75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv_transpose2d_strided_grouped_dilated(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_out = (height - 1) * 2 + 3;
	const long width_out = (width - 1) * 3 + 1;
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 4;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < height_out; y0++) {
					for (long y1 = 0; y1 < width_out; y1++) {
						const long g = o / cog;
						double acc = 0.0;
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 3; q0++) {
								const long u0 = y0 + 1 - q0 * 2;
								if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= height) {
									continue;
								}
								const long i0 = u0 / 2;
								for (long q1 = 0; q1 < 5; q1++) {
									const long u1 = y1 + 2 - q1 * 1;
									if (u1 < 0 || u1 % 3 != 0 || u1 / 3 >= width) {
										continue;
									}
									const long i1 = u1 / 3;
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * weight[(((g * cig + c) * cog + o % cog) * 3 + q0) * 5 + q1];
								}
							}
						}
						y[((n * co + o) * height_out + y0) * width_out + y1] = (float)(acc);
					}
				}
			}
		}
	}
}
