/* kb2_027_conv3d_hardswish_groupnorm_mean reference: KernelBench level 2 problem 27 (27_Conv3d_HardSwish_GroupNorm_Mean), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv3d_hardswish_groupnorm_mean(const float *x, const float *weight, const float *bias, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_c = depth - 4 + 1;
	const long height_c = height - 4 + 1;
	const long width_c = width - 4 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
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
				for (long y0 = 0; y0 < depth_c; y0++) {
					for (long y1 = 0; y1 < height_c; y1++) {
						for (long y2 = 0; y2 < width_c; y2++) {
							const long g = o / cog;
							double acc = bias[o];
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 4; q0++) {
									const long i0 = y0 * 1 - 0 + q0 * 1;
									if (i0 < 0 || i0 >= depth) {
										continue;
									}
									for (long q1 = 0; q1 < 4; q1++) {
										const long i1 = y1 * 1 - 0 + q1 * 1;
										if (i1 < 0 || i1 >= height) {
											continue;
										}
										for (long q2 = 0; q2 < 4; q2++) {
											const long i2 = y2 * 1 - 0 + q2 * 1;
											if (i2 < 0 || i2 >= width) {
												continue;
											}
											acc += (double)x[(((n * ci + g * cig + c) * depth + i0) * height + i1) * width + i2] * weight[(((o * cig + c) * 4 + q0) * 4 + q1) * 4 + q2];
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
		t2[i] = v * fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
	}
	{
		const long A = 1L, G = (long)batch_size * 4, B = (out_channels / 4) * (long)depth_c * height_c * width_c;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += t2[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = t2[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					t3[j] = (t2[j] - mean) * rstd * gn_weight[(g % 4) * (out_channels / 4) + b / ((long)depth_c * height_c * width_c)] + gn_bias[(g % 4) * (out_channels / 4) + b / ((long)depth_c * height_c * width_c)];
				}
			}
		}
	}
	{
		const long O = (long)batch_size * out_channels, R = (long)depth_c * height_c * width_c, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t3 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				y[o * I + i] = (float)(acc / R);
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
}
