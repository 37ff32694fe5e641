/* kb2_092_conv2d_groupnorm_tanh_hardswish_residual_lse reference: KernelBench level 2 problem 92 (92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv2d_groupnorm_tanh_hardswish_residual_lse(const float *x, const float *weight, const float *bias, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = height - 3 + 1;
	const long width_c = width - 3 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t5 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
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
	{
		const long A = 1L, G = (long)batch_size * 16, B = (out_channels / 16) * (long)height_c * width_c;
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
					t2[j] = (t1[j] - mean) * rstd * gn_weight[(g % 16) * (out_channels / 16) + b / ((long)height_c * width_c)] + gn_bias[(g % 16) * (out_channels / 16) + b / ((long)height_c * width_c)];
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t2[i];
		t3[i] = tanh(v);
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t3[i];
		t4[i] = v * fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
	}
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		t5[i] = (double)t1[i] + t4[i];
	}
	{
		const long O = (long)batch_size, R = (long)out_channels, I = (long)height_c * width_c;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t5 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp(xp[r * I] - m);
				}
				y[o * I + i] = (float)(m + log(s));
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}
