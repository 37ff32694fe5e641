/* kb2_044_convtranspose2d_mul_gap_gap reference: KernelBench level 2 problem 44 (44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose2d_mul_gap_gap(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = (height - 1) * 2 + 2;
	const long width_c = (width - 1) * 2 + 2;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
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
				for (long y0 = 0; y0 < height_c; y0++) {
					for (long y1 = 0; y1 < width_c; y1++) {
						const long g = o / cog;
						double acc = bias[o];
						for (long c = 0; c < cig; c++) {
							for (long q0 = 0; q0 < 3; q0++) {
								const long u0 = y0 + 1 - q0 * 1;
								if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= height) {
									continue;
								}
								const long i0 = u0 / 2;
								for (long q1 = 0; q1 < 3; q1++) {
									const long u1 = y1 + 1 - q1 * 1;
									if (u1 < 0 || u1 % 2 != 0 || u1 / 2 >= width) {
										continue;
									}
									const long i1 = u1 / 2;
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
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t1[i];
		t2[i] = v * 0.5;
	}
	{
		const long O = (long)batch_size * out_channels, R = (long)height_c * width_c, I = 1L;
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
	{
		const long O = (long)batch_size * out_channels, R = 1L, I = 1L;
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
