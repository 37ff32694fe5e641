/* kb2_096_convtranspose3d_mul_maxpool_gap_clamp reference: KernelBench level 2 problem 96 (96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose3d_mul_maxpool_gap_clamp(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_c = (depth - 1) * 2 + 1;
	const long height_c = (height - 1) * 2 + 1;
	const long width_c = (width - 1) * 2 + 1;
	const long d_p = (depth_c - 2) / 2 + 1;
	const long h_p = (height_c - 2) / 2 + 1;
	const long w_p = (width_c - 2) / 2 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * d_p * h_p * w_p);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_channels);
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
				for (long y0 = 0; y0 < depth_c; y0++) {
					for (long y1 = 0; y1 < height_c; y1++) {
						for (long y2 = 0; y2 < width_c; y2++) {
							const long g = o / cog;
							double acc = bias[o];
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long u0 = y0 + 1 - q0 * 1;
									if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= depth) {
										continue;
									}
									const long i0 = u0 / 2;
									for (long q1 = 0; q1 < 3; q1++) {
										const long u1 = y1 + 1 - q1 * 1;
										if (u1 < 0 || u1 % 2 != 0 || u1 / 2 >= height) {
											continue;
										}
										const long i1 = u1 / 2;
										for (long q2 = 0; q2 < 3; q2++) {
											const long u2 = y2 + 1 - q2 * 1;
											if (u2 < 0 || u2 % 2 != 0 || u2 / 2 >= width) {
												continue;
											}
											const long i2 = u2 / 2;
											acc += (double)x[(((n * ci + g * cig + c) * depth + i0) * height + i1) * width + i2] * weight[((((g * cig + c) * cog + o % cog) * 3 + q0) * 3 + q1) * 3 + q2];
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
		t2[i] = v * 0.5;
	}
	for (long nc = 0; nc < (long)batch_size * out_channels; nc++) {
		for (long o0 = 0; o0 < d_p; o0++) {
			for (long o1 = 0; o1 < h_p; o1++) {
				for (long o2 = 0; o2 < w_p; o2++) {
					double acc = -INFINITY;
					for (long q0 = 0; q0 < 2; q0++) {
						const long i0 = o0 * 2 - 0 + q0 * 1;
						if (i0 < 0 || i0 >= depth_c) {
							continue;
						}
						for (long q1 = 0; q1 < 2; q1++) {
							const long i1 = o1 * 2 - 0 + q1 * 1;
							if (i1 < 0 || i1 >= height_c) {
								continue;
							}
							for (long q2 = 0; q2 < 2; q2++) {
								const long i2 = o2 * 2 - 0 + q2 * 1;
								if (i2 < 0 || i2 >= width_c) {
									continue;
								}
								const double v = t2[((nc * depth_c + i0) * height_c + i1) * width_c + i2];
								acc = v > acc ? v : acc;
							}
						}
					}
					t3[((nc * d_p + o0) * h_p + o1) * w_p + o2] = acc;
				}
			}
		}
	}
	{
		const long O = (long)batch_size * out_channels, R = (long)d_p * h_p * w_p, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t3 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				t4[o * I + i] = acc / R;
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels; i++) {
		double v = t4[i];
		y[i] = (float)(fmin(fmax(v, 0.0), 1.0));
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
