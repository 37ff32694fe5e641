/* kb2_042_convtranspose2d_gap_bias_lse_sum_mul reference: KernelBench level 2 problem 42 (42_ConvTranspose2d_GlobalAvgPool_BiasAdd_LogSumExp_Sum_Multiply), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose2d_gap_bias_lse_sum_mul(const float *x, const float *weight, const float *bias, const float *bias2, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = height - 1 + 3;
	const long width_c = width - 1 + 3;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels);
	double *t4 = malloc(sizeof(double) * (long)batch_size);
	double *t5 = malloc(sizeof(double) * (long)batch_size);
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
				for (long y0 = 0; y0 < height_c; y0++) {
					for (long y1 = 0; y1 < width_c; y1++) {
						const long g = o / cog;
						double acc = bias[o];
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 3; q0++) {
								const long u0 = y0 + 0 - q0 * 1;
								if (u0 < 0 || u0 % 1 != 0 || u0 / 1 >= height) {
									continue;
								}
								const long i0 = u0 / 1;
								for (long q1 = 0; q1 < 3; q1++) {
									const long u1 = y1 + 0 - q1 * 1;
									if (u1 < 0 || u1 % 1 != 0 || u1 / 1 >= width) {
										continue;
									}
									const long i1 = u1 / 1;
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * weight[(((g * cig + c) * cog + o % cog) * 3 + q0) * 3 + q1];
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
		const long O = (long)batch_size * out_channels, R = (long)height_c * width_c, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t1 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				t2[o * I + i] = acc / R;
			}
		}
	}
	for (long i0 = 0; i0 < batch_size; i0++) {
		for (long i1 = 0; i1 < out_channels; i1++) {
			for (long i2 = 0; i2 < 1; i2++) {
				for (long i3 = 0; i3 < 1; i3++) {
					t3[i0 * out_channels + i1] = (double)t2[i0 * out_channels + i1] + bias2[i1];
				}
			}
		}
	}
	{
		const long O = (long)batch_size, R = (long)out_channels, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t3 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp(xp[r * I] - m);
				}
				t4[o * I + i] = m + log(s);
			}
		}
	}
	{
		const long O = (long)batch_size, R = 1L, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t4 + o * R * I + i;
				double acc = 0.0;
				for (long r = 0; r < R; r++) {
					double v = xp[r * I];
					acc += v;
				}
				t5[o * I + i] = acc;
			}
		}
	}
	for (long i = 0; i < (long)batch_size; i++) {
		double v = t5[i];
		y[i] = (float)(v * 10.0);
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}
