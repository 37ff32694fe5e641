/* kb1_073_conv_transpose3d_strided_grouped reference: KernelBench level 1 problem 73 (73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv_transpose3d_strided_grouped(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_out = (depth - 1) * 2 + 1;
	const long height_out = (height - 1) * 2 + 1;
	const long width_out = (width - 1) * 2 + 1;
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < depth_out; y0++) {
					for (long y1 = 0; y1 < height_out; y1++) {
						for (long y2 = 0; y2 < width_out; y2++) {
							const long g = o / cog;
							double acc = 0.0;
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long u0 = y0 + 1 - q0 * 1;
									if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= depth) {
										continue;
									}
									const long i0 = u0 / 2;
									for (long q1 = 0; q1 < 3; q1++) {
										const long u1 = y1 + 1 - q1 * 1;
										if (u1 < 0 || u1 % 2 != 0 || u1 / 2 >= height) {
											continue;
										}
										const long i1 = u1 / 2;
										for (long q2 = 0; q2 < 3; q2++) {
											const long u2 = y2 + 1 - q2 * 1;
											if (u2 < 0 || u2 % 2 != 0 || u2 / 2 >= width) {
												continue;
											}
											const long i2 = u2 / 2;
											acc += (double)x[(((n * ci + g * cig + c) * depth + i0) * height + i1) * width + i2] * weight[((((g * cig + c) * cog + o % cog) * 3 + q0) * 3 + q1) * 3 + q2];
										}
									}
								}
							}
							y[(((n * co + o) * depth_out + y0) * height_out + y1) * width_out + y2] = (float)(acc);
						}
					}
				}
			}
		}
	}
}
