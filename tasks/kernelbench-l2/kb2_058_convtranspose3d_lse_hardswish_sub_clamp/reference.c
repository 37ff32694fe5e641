/* kb2_058_convtranspose3d_lse_hardswish_sub_clamp reference: KernelBench level 2 problem 58 (58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose3d_lse_hardswish_sub_clamp(const float *x, const float *weight, const float *bias, const float *bias2, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_c = (depth - 1) * 2 + 1;
	const long height_c = (height - 1) * 2 + 1;
	const long width_c = (width - 1) * 2 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * depth_c * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * depth_c * height_c * width_c);
	double *t4 = malloc(sizeof(double) * (long)batch_size * depth_c * height_c * width_c);
	double *t5 = malloc(sizeof(double) * (long)batch_size * depth_c * height_c * width_c);
	double *t6 = malloc(sizeof(double) * (long)batch_size * depth_c * height_c * width_c);
	double *t7 = malloc(sizeof(double) * (long)batch_size * depth_c * height_c * width_c);
	if (!t1 || !t2 || !t3 || !t4 || !t5 || !t6 || !t7) {
		free(t1);
		free(t2);
		free(t3);
		free(t4);
		free(t5);
		free(t6);
		free(t7);
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
	{
		const long O = (long)batch_size, R = (long)out_channels, I = (long)depth_c * height_c * width_c;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t1 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp(xp[r * I] - m);
				}
				t2[o * I + i] = m + log(s);
			}
		}
	}
	for (long i = 0; i < (long)batch_size * depth_c * height_c * width_c; i++) {
		double v = t2[i];
		t3[i] = v + 3.0;
	}
	for (long i = 0; i < (long)batch_size * depth_c * height_c * width_c; i++) {
		double v = t3[i];
		t4[i] = 1.0 / (1.0 + exp(-v));
	}
	for (long i = 0; i < (long)batch_size * depth_c * height_c * width_c; i++) {
		t5[i] = (double)t2[i] * t4[i];
	}
	for (long i = 0; i < (long)batch_size * depth_c * height_c * width_c; i++) {
		double v = t5[i];
		t6[i] = v / 6.0;
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < 1; i1++) {
			for (long i2 = 0; i2 < depth_c; i2++) {
				for (long i3 = 0; i3 < height_c; i3++) {
					for (long i4 = 0; i4 < width_c; i4++) {
						t7[((i0 * depth_c + i2) * height_c + i3) * width_c + i4] = (double)t6[((i0 * depth_c + i2) * height_c + i3) * width_c + i4] - bias2[0];
					}
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * depth_c * height_c * width_c; i++) {
		double v = t7[i];
		y[i] = (float)(fmin(fmax(v, -1.0), 1.0));
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
	free(t6);
	free(t7);
}
