/* kb2_087_conv2d_sub_sub_mish reference: KernelBench level 2 problem 87 (87_Conv2d_Subtract_Subtract_Mish), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv2d_sub_sub_mish(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = height - 3 + 1;
	const long width_c = width - 3 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	if (!t1 || !t2 || !t3) {
		free(t1);
		free(t2);
		free(t3);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < height_c; y0++) {
					for (long y1 = 0; y1 < width_c; y1++) {
						const long g = o / cog;
						double acc = bias[o];
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 3; q0++) {
								const long i0 = y0 * 1 - 0 + q0 * 1;
								if (i0 < 0 || i0 >= height) {
									continue;
								}
								for (long q1 = 0; q1 < 3; q1++) {
									const long i1 = y1 * 1 - 0 + q1 * 1;
									if (i1 < 0 || i1 >= width) {
										continue;
									}
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * weight[((o * cig + c) * 3 + q0) * 3 + q1];
								}
							}
						}
						t1[((n * co + o) * height_c + y0) * width_c + y1] = acc;
					}
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t1[i];
		t2[i] = v - 0.5;
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t2[i];
		t3[i] = v - 0.2;
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t3[i];
		y[i] = (float)(v * tanh(log1p(exp(v))));
	}
	free(t1);
	free(t2);
	free(t3);
}
