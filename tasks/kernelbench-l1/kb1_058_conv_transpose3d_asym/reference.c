/* kb1_058_conv_transpose3d_asym reference: KernelBench level 1 problem 58 (58_conv_transposed_3D__asymmetric_input__asymmetric_kernel), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv_transpose3d_asym(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int depth_in, int height_in, int width_in)
{
	const long depth_out = depth_in - 1 + 3;
	const long height_out = height_in - 1 + 5;
	const long width_out = width_in - 1 + 7;
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
									const long u0 = y0 + 0 - q0 * 1;
									if (u0 < 0 || u0 % 1 != 0 || u0 / 1 >= depth_in) {
										continue;
									}
									const long i0 = u0 / 1;
									for (long q1 = 0; q1 < 5; q1++) {
										const long u1 = y1 + 0 - q1 * 1;
										if (u1 < 0 || u1 % 1 != 0 || u1 / 1 >= height_in) {
											continue;
										}
										const long i1 = u1 / 1;
										for (long q2 = 0; q2 < 7; q2++) {
											const long u2 = y2 + 0 - q2 * 1;
											if (u2 < 0 || u2 % 1 != 0 || u2 / 1 >= width_in) {
												continue;
											}
											const long i2 = u2 / 1;
											acc += (double)x[(((n * ci + g * cig + c) * depth_in + i0) * height_in + i1) * width_in + i2] * weight[((((g * cig + c) * cog + o % cog) * 3 + q0) * 5 + q1) * 7 + q2];
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
