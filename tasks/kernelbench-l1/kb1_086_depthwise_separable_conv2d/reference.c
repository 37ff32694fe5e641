/* kb1_086_depthwise_separable_conv2d reference: KernelBench level 1 problem 86 (86_conv_depthwise_separable_2D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_depthwise_separable_conv2d(const float *x, const float *depthwise_weight, const float *pointwise_weight, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long h_mid = height + 2 - 3 + 1;
	const long w_mid = width + 2 - 3 + 1;
	const long h_out = h_mid - 1 + 1;
	const long w_out = w_mid - 1 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * in_channels * h_mid * w_mid);
	if (!t1) {
		free(t1);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long nb = batch_size, ci = in_channels, co = in_channels, ng = in_channels;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < h_mid; y0++) {
					for (long y1 = 0; y1 < w_mid; y1++) {
						const long g = o / cog;
						double acc = 0.0;
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 3; q0++) {
								const long i0 = y0 * 1 - 1 + q0 * 1;
								if (i0 < 0 || i0 >= height) {
									continue;
								}
								for (long q1 = 0; q1 < 3; q1++) {
									const long i1 = y1 * 1 - 1 + q1 * 1;
									if (i1 < 0 || i1 >= width) {
										continue;
									}
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * depthwise_weight[((o * cig + c) * 3 + q0) * 3 + q1];
								}
							}
						}
						t1[((n * co + o) * h_mid + y0) * w_mid + y1] = acc;
					}
				}
			}
		}
	}
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < h_out; y0++) {
					for (long y1 = 0; y1 < w_out; y1++) {
						const long g = o / cog;
						double acc = 0.0;
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 1; q0++) {
								const long i0 = y0 * 1 - 0 + q0 * 1;
								if (i0 < 0 || i0 >= h_mid) {
									continue;
								}
								for (long q1 = 0; q1 < 1; q1++) {
									const long i1 = y1 * 1 - 0 + q1 * 1;
									if (i1 < 0 || i1 >= w_mid) {
										continue;
									}
									acc += (double)t1[((n * ci + g * cig + c) * h_mid + i0) * w_mid + i1] * pointwise_weight[((o * cig + c) * 1 + q0) * 1 + q1];
								}
							}
						}
						y[((n * co + o) * h_out + y0) * w_out + y1] = (float)(acc);
					}
				}
			}
		}
	}
	free(t1);
}
