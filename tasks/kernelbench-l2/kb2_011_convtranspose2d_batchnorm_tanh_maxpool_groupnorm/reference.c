/* kb2_011_convtranspose2d_batchnorm_tanh_maxpool_groupnorm reference: KernelBench level 2 problem 11 (11_ConvTranspose2d_BatchNorm_Tanh_MaxPool_GroupNorm), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose2d_batchnorm_tanh_maxpool_groupnorm(const float *x, const float *weight, const float *bias, const float *bn_weight, const float *bn_bias, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_channels, int out_channels, int height, int width)
{
	const long height_c = height - 1 + 3;
	const long width_c = width - 1 + 3;
	const long h_p = (height_c - 2) / 2 + 1;
	const long w_p = (width_c - 2) / 2 + 1;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t3 = malloc(sizeof(double) * (long)batch_size * out_channels * height_c * width_c);
	double *t4 = malloc(sizeof(double) * (long)batch_size * out_channels * h_p * w_p);
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
							for (long q0 = 0; q0 < 5; q0++) {
								const long u0 = y0 + 1 - q0 * 1;
								if (u0 < 0 || u0 % 1 != 0 || u0 / 1 >= height) {
									continue;
								}
								const long i0 = u0 / 1;
								for (long q1 = 0; q1 < 5; q1++) {
									const long u1 = y1 + 1 - q1 * 1;
									if (u1 < 0 || u1 % 1 != 0 || u1 / 1 >= width) {
										continue;
									}
									const long i1 = u1 / 1;
									acc += (double)x[((n * ci + g * cig + c) * height + i0) * width + i1] * weight[(((g * cig + c) * cog + o % cog) * 5 + q0) * 5 + q1];
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
		const long A = (long)batch_size, G = (long)out_channels, B = (long)height_c * width_c;
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
	for (long i = 0; i < (long)batch_size * out_channels * height_c * width_c; i++) {
		double v = t2[i];
		t3[i] = tanh(v);
	}
	for (long nc = 0; nc < (long)batch_size * out_channels; nc++) {
		for (long o0 = 0; o0 < h_p; o0++) {
			for (long o1 = 0; o1 < w_p; o1++) {
				double acc = -INFINITY;
				for (long q0 = 0; q0 < 2; q0++) {
					const long i0 = o0 * 2 - 0 + q0 * 1;
					if (i0 < 0 || i0 >= height_c) {
						continue;
					}
					for (long q1 = 0; q1 < 2; q1++) {
						const long i1 = o1 * 2 - 0 + q1 * 1;
						if (i1 < 0 || i1 >= width_c) {
							continue;
						}
						const double v = t3[(nc * height_c + i0) * width_c + i1];
						acc = v > acc ? v : acc;
					}
				}
				t4[(nc * h_p + o0) * w_p + o1] = acc;
			}
		}
	}
	{
		const long A = 1L, G = (long)batch_size * 8, B = (out_channels / 8) * (long)h_p * w_p;
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
					y[j] = (float)((t4[j] - mean) * rstd * gn_weight[(g % 8) * (out_channels / 8) + b / ((long)h_p * w_p)] + gn_bias[(g % 8) * (out_channels / 8) + b / ((long)h_p * w_p)]);
				}
			}
		}
	}
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}
