/* kb2_038_avgpool_convtranspose3d_clamp_softmax_mul reference: KernelBench level 2 problem 38 (38_ConvTranspose3d_AvgPool_Clamp_Softmax_Multiply), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_avgpool_convtranspose3d_clamp_softmax_mul(const float *x, const float *weight, const float *bias, const float *scale, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_pooled = (depth - 2) / 2 + 1;
	const long height_pooled = (height - 2) / 2 + 1;
	const long width_pooled = (width - 2) / 2 + 1;
	const long depth_c = (depth_pooled - 1) * 2 + 2;
	const long height_c = (height_pooled - 1) * 2 + 2;
	const long width_c = (width_pooled - 1) * 2 + 2;
	double *t1 = malloc(sizeof(double) * (long)batch_size * in_channels * depth_pooled * height_pooled * width_pooled);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	if (!t1 || !t2 || !t3 || !t4) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	for (long nc = 0; nc < (long)batch_size * in_channels; nc++) {
		for (long o0 = 0; o0 < depth_pooled; o0++) {
			for (long o1 = 0; o1 < height_pooled; o1++) {
				for (long o2 = 0; o2 < width_pooled; o2++) {
					double acc = 0.0;
					for (long q0 = 0; q0 < 2; q0++) {
						const long i0 = o0 * 2 - 0 + q0 * 1;
						if (i0 < 0 || i0 >= depth) {
							continue;
						}
						for (long q1 = 0; q1 < 2; q1++) {
							const long i1 = o1 * 2 - 0 + q1 * 1;
							if (i1 < 0 || i1 >= height) {
								continue;
							}
							for (long q2 = 0; q2 < 2; q2++) {
								const long i2 = o2 * 2 - 0 + q2 * 1;
								if (i2 < 0 || i2 >= width) {
									continue;
								}
								acc += x[((nc * depth + i0) * height + i1) * width + i2];
							}
						}
					}
					t1[((nc * depth_pooled + o0) * height_pooled + o1) * width_pooled + o2] = acc / 8.0;
				}
			}
		}
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
									const long u0 = y0 + 1 - q0 * 1;
									if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= depth_pooled) {
										continue;
									}
									const long i0 = u0 / 2;
									for (long q1 = 0; q1 < 3; q1++) {
										const long u1 = y1 + 1 - q1 * 1;
										if (u1 < 0 || u1 % 2 != 0 || u1 / 2 >= height_pooled) {
											continue;
										}
										const long i1 = u1 / 2;
										for (long q2 = 0; q2 < 3; q2++) {
											const long u2 = y2 + 1 - q2 * 1;
											if (u2 < 0 || u2 % 2 != 0 || u2 / 2 >= width_pooled) {
												continue;
											}
											const long i2 = u2 / 2;
											acc += (double)t1[(((n * ci + g * cig + c) * depth_pooled + i0) * height_pooled + i1) * width_pooled + i2] * weight[((((g * cig + c) * cog + o % cog) * 3 + q0) * 3 + q1) * 3 + q2];
										}
									}
								}
							}
							t2[(((n * co + o) * depth_c + y0) * height_c + y1) * width_c + y2] = acc;
						}
					}
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * depth_c * height_c * width_c; i++) {
		double v = t2[i];
		t3[i] = fmin(fmax(v, 0.0), 1.0);
	}
	{
		const long O = (long)batch_size * out_channels, R = (long)depth_c * height_c * width_c, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t3 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp((double)xp[r * I] - m);
				}
				for (long r = 0; r < R; r++) {
					t4[o * R * I + i + r * I] = exp((double)xp[r * I] - m) / s;
				}
			}
		}
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < depth_c; i2++) {
				for (long i3 = 0; i3 < height_c; i3++) {
					for (long i4 = 0; i4 < width_c; i4++) {
						y[(((i0 * out_channels + i1) * depth_c + i2) * height_c + i3) * width_c + i4] = (float)((double)t4[(((i0 * out_channels + i1) * depth_c + i2) * height_c + i3) * width_c + i4] * scale[i1]);
					}
				}
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
