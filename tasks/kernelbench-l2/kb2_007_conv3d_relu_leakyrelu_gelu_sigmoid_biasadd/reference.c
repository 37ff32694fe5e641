/* kb2_007_conv3d_relu_leakyrelu_gelu_sigmoid_biasadd reference: KernelBench level 2 problem 7 (7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv3d_relu_leakyrelu_gelu_sigmoid_biasadd(const float *x, const float *weight, const float *bias, const float *bias2, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_c = depth - 3 + 1;
	const long height_c = height - 3 + 1;
	const long width_c = width - 3 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t5 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	if (!t1 || !t2 || !t3 || !t4 || !t5) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
		free(t5);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < depth_c; y0++) {
					for (long y1 = 0; y1 < height_c; y1++) {
						for (long y2 = 0; y2 < width_c; y2++) {
							const long g = o / cog;
							double acc = bias[o];
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long i0 = y0 * 1 - 0 + q0 * 1;
									if (i0 < 0 || i0 >= depth) {
										continue;
									}
									for (long q1 = 0; q1 < 3; q1++) {
										const long i1 = y1 * 1 - 0 + q1 * 1;
										if (i1 < 0 || i1 >= height) {
											continue;
										}
										for (long q2 = 0; q2 < 3; q2++) {
											const long i2 = y2 * 1 - 0 + q2 * 1;
											if (i2 < 0 || i2 >= width) {
												continue;
											}
											acc += (double)x[(((n * ci + g * cig + c) * depth + i0) * height + i1) * width + i2] * weight[(((o * cig + c) * 3 + q0) * 3 + q1) * 3 + q2];
										}
									}
								}
							}
							t1[(((n * co + o) * depth_c + y0) * height_c + y1) * width_c + y2] = acc;
						}
					}
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * depth_c * height_c * width_c; i++) {
		double v = t1[i];
		t2[i] = v > 0 ? v : 0.0;
	}
	for (long i = 0; i < (long)batch_size * out_channels * depth_c * height_c * width_c; i++) {
		double v = t2[i];
		t3[i] = v > 0 ? v : 0.01 * v;
	}
	for (long i = 0; i < (long)batch_size * out_channels * depth_c * height_c * width_c; i++) {
		double v = t3[i];
		t4[i] = 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
	}
	for (long i = 0; i < (long)batch_size * out_channels * depth_c * height_c * width_c; i++) {
		double v = t4[i];
		t5[i] = 1.0 / (1.0 + exp(-v));
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < depth_c; i2++) {
				for (long i3 = 0; i3 < height_c; i3++) {
					for (long i4 = 0; i4 < width_c; i4++) {
						y[(((i0 * out_channels + i1) * depth_c + i2) * height_c + i3) * width_c + i4] = (float)((double)t5[(((i0 * out_channels + i1) * depth_c + i2) * height_c + i3) * width_c + i4] + bias2[i1]);
					}
				}
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}
