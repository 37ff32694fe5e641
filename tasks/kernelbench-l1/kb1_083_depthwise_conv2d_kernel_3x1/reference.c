/* kb1_083_depthwise_conv2d_kernel_3x1 reference: KernelBench level 1 problem 83 (83_conv_depthwise_2D_square_input_asymmetric_kernel), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_depthwise_conv2d_kernel_3x1(const float *x, const float *weight, float *y, int batch_size, int in_channels, int height, int width)
{
	const long height_out = height - 3 + 1;
	const long width_out = width - 1 + 1;
	{
		const long nb = batch_size, ci = in_channels, co = in_channels, ng = in_channels;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < height_out; y0++) {
					for (long y1 = 0; y1 < width_out; y1++) {
						const long g = o / cog;
						double acc = 0.0;
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 3; q0++) {
								const long i0 = y0 * 1 - 0 + q0 * 1;
								if (i0 < 0 || i0 >= height) {
									continue;
								}
								for (long q1 = 0; q1 < 1; q1++) {
									const long i1 = y1 * 1 - 0 + q1 * 1;
									if (i1 < 0 || i1 >= width) {
										continue;
									}
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * weight[((o * cig + c) * 3 + q0) * 1 + q1];
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
