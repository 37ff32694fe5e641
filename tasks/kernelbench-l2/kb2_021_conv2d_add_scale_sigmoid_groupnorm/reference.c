/* kb2_021_conv2d_add_scale_sigmoid_groupnorm reference: KernelBench level 2 problem 21 (21_Conv2d_Add_Scale_Sigmoid_GroupNorm), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv2d_add_scale_sigmoid_groupnorm(const float *x, const float *weight, const float *bias, const float *bias2, const float *scale, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = height - 3 + 1;
	const long width_c = width - 3 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	if (!t1 || !t2 || !t3 || !t4) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
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
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < height_c; i2++) {
				for (long i3 = 0; i3 < width_c; i3++) {
					t2[((i0 * out_channels + i1) * height_c + i2) * width_c + i3] = (double)t1[((i0 * out_channels + i1) * height_c + i2) * width_c + i3] + bias2[i1];
				}
			}
		}
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < height_c; i2++) {
				for (long i3 = 0; i3 < width_c; i3++) {
					t3[((i0 * out_channels + i1) * height_c + i2) * width_c + i3] = (double)t2[((i0 * out_channels + i1) * height_c + i2) * width_c + i3] * scale[i1];
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t3[i];
		t4[i] = 1.0 / (1.0 + exp(-v));
	}
	{
		const long A = 1L, G = (long)batch_size * 8, B = (out_channels / 8) * (long)height_c * width_c;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += t4[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = t4[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					y[j] = (float)((t4[j] - mean) * rstd * gn_weight[(g % 8) * (out_channels / 8) + b / ((long)height_c * width_c)] + gn_bias[(g % 8) * (out_channels / 8) + b / ((long)height_c * width_c)]);
				}
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
