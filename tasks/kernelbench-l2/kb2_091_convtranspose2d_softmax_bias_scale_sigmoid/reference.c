/* kb2_091_convtranspose2d_softmax_bias_scale_sigmoid reference: KernelBench level 2 problem 91 (91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose2d_softmax_bias_scale_sigmoid(const float *x, const float *weight, const float *bias, const float *bias2, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = (height - 1) * 2 + 3;
	const long width_c = (width - 1) * 2 + 3;
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
							for (long q0 = 0; q0 < 4; q0++) {
								const long u0 = y0 + 1 - q0 * 1;
								if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= height) {
									continue;
								}
								const long i0 = u0 / 2;
								for (long q1 = 0; q1 < 4; q1++) {
									const long u1 = y1 + 1 - q1 * 1;
									if (u1 < 0 || u1 % 2 != 0 || u1 / 2 >= width) {
										continue;
									}
									const long i1 = u1 / 2;
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * weight[(((g * cig + c) * cog + o % cog) * 4 + q0) * 4 + q1];
								}
							}
						}
						t1[((n * co + o) * height_c + y0) * width_c + y1] = acc;
					}
				}
			}
		}
	}
	{
		const long O = (long)batch_size, R = (long)out_channels, I = (long)height_c * width_c;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t1 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp((double)xp[r * I] - m);
				}
				for (long r = 0; r < R; r++) {
					t2[o * R * I + i + r * I] = exp((double)xp[r * I] - m) / s;
				}
			}
		}
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < height_c; i2++) {
				for (long i3 = 0; i3 < width_c; i3++) {
					t3[((i0 * out_channels + i1) * height_c + i2) * width_c + i3] = (double)t2[((i0 * out_channels + i1) * height_c + i2) * width_c + i3] + bias2[i1];
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t3[i];
		t4[i] = v * 2.0;
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t4[i];
		y[i] = (float)(1.0 / (1.0 + exp(-v)));
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
