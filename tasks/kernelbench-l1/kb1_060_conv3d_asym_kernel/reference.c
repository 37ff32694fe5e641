/* kb1_060_conv3d_asym_kernel reference: KernelBench level 1 problem 60 (60_conv_standard_3D__square_input__asymmetric_kernel), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv3d_asym_kernel(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int width, int height, int depth)
{
	const long width_out = width - 3 + 1;
	const long height_out = height - 5 + 1;
	const long depth_out = depth - 7 + 1;
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < width_out; y0++) {
					for (long y1 = 0; y1 < height_out; y1++) {
						for (long y2 = 0; y2 < depth_out; y2++) {
							const long g = o / cog;
							double acc = 0.0;
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long i0 = y0 * 1 - 0 + q0 * 1;
									if (i0 < 0 || i0 >= width) {
										continue;
									}
									for (long q1 = 0; q1 < 5; q1++) {
										const long i1 = y1 * 1 - 0 + q1 * 1;
										if (i1 < 0 || i1 >= height) {
											continue;
										}
										for (long q2 = 0; q2 < 7; q2++) {
											const long i2 = y2 * 1 - 0 + q2 * 1;
											if (i2 < 0 || i2 >= depth) {
												continue;
											}
											acc += (double)x[(((n * ci + g * cig + c) * width + i0) * height + i1) * depth + i2] * weight[(((o * cig + c) * 3 + q0) * 5 + q1) * 7 + q2];
										}
									}
								}
							}
							y[(((n * co + o) * width_out + y0) * height_out + y1) * depth_out + y2] = (float)(acc);
						}
					}
				}
			}
		}
	}
}
