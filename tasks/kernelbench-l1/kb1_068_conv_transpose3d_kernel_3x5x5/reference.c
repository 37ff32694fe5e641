/* kb1_068_conv_transpose3d_kernel_3x5x5 reference: KernelBench level 1 problem 68 (68_conv_transposed_3D__square_input__asymmetric_kernel), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv_transpose3d_kernel_3x5x5(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int depth, int width, int height)
{
	const long depth_out = depth - 1 + 3;
	const long width_out = width - 1 + 5;
	const long height_out = height - 1 + 5;
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < depth_out; y0++) {
					for (long y1 = 0; y1 < width_out; y1++) {
						for (long y2 = 0; y2 < height_out; y2++) {
							const long g = o / cog;
							double acc = 0.0;
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long u0 = y0 + 0 - q0 * 1;
									if (u0 < 0 || u0 % 1 != 0 || u0 / 1 >= depth) {
										continue;
									}
									const long i0 = u0 / 1;
									for (long q1 = 0; q1 < 5; q1++) {
										const long u1 = y1 + 0 - q1 * 1;
										if (u1 < 0 || u1 % 1 != 0 || u1 / 1 >= width) {
											continue;
										}
										const long i1 = u1 / 1;
										for (long q2 = 0; q2 < 5; q2++) {
											const long u2 = y2 + 0 - q2 * 1;
											if (u2 < 0 || u2 % 1 != 0 || u2 / 1 >= height) {
												continue;
											}
											const long i2 = u2 / 1;
											acc += (double)x[(((n * ci + g * cig + c) * depth + i0) * width + i1) * height + i2] * weight[((((g * cig + c) * cog + o % cog) * 3 + q0) * 5 + q1) * 5 + q2];
										}
									}
								}
							}
							y[(((n * co + o) * depth_out + y0) * width_out + y1) * height_out + y2] = (float)(acc);
						}
					}
				}
			}
		}
	}
}
