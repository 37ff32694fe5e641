/* kb2_015_convtranspose3d_batchnorm_subtract reference: KernelBench level 2 problem 15 (15_ConvTranspose3d_BatchNorm_Subtract), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose3d_batchnorm_subtract(const float *x, const float *weight, const float *bias, const float *bn_weight, const float *bn_bias, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_c = (depth - 1) * 2 + 1;
	const long height_c = (height - 1) * 2 + 1;
	const long width_c = (width - 1) * 2 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * depth_c * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels);
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
		const long A = (long)batch_size, G = (long)out_channels, B = (long)depth_c * height_c * width_c;
		for (long g = 0; g < G; g++) {
			double s = 0, q = 0;
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					s += t1[(a * G + g) * B + b];
				}
			}
			const double mean = s / (A * B);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const double d = t1[(a * G + g) * B + b] - mean;
					q += d * d;
				}
			}
			const double rstd = 1.0 / sqrt(q / (A * B) + 1e-05);
			for (long a = 0; a < A; a++) {
				for (long b = 0; b < B; b++) {
					const long j = (a * G + g) * B + b;
					t2[j] = (t1[j] - mean) * rstd * bn_weight[g] + bn_bias[g];
				}
			}
		}
	}
	{
		const long O = (long)batch_size * out_channels, R = (long)depth_c * height_c * width_c, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t2 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				t3[o * I + i] = acc / R;
			}
		}
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < depth_c; i2++) {
				for (long i3 = 0; i3 < height_c; i3++) {
					for (long i4 = 0; i4 < width_c; i4++) {
						y[(((i0 * out_channels + i1) * depth_c + i2) * height_c + i3) * width_c + i4] = (float)((double)t2[(((i0 * out_channels + i1) * depth_c + i2) * height_c + i3) * width_c + i4] - t3[i0 * out_channels + i1]);
					}
				}
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
}
