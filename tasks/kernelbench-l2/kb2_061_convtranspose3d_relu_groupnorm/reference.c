/* kb2_061_convtranspose3d_relu_groupnorm reference: KernelBench level 2 problem 61 (61_ConvTranspose3d_ReLU_GroupNorm), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose3d_relu_groupnorm(const float *x, const float *weight, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_channels, int out_channels, int D, int H, int W)
{
	const long D_c = D - 1 + 3;
	const long H_c = H - 1 + 3;
	const long W_c = W - 1 + 3;
	double *t1 = malloc(sizeof(double) * (long)batch_size * out_channels * D_c * H_c * W_c);
	double *t2 = malloc(sizeof(double) * (long)batch_size * out_channels * D_c * H_c * W_c);
	if (!t1 || !t2) {
		free(t1);
		free(t2);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long nb = batch_size, ci = in_channels, co = out_channels, ng = 1;
		const long cig = ci / ng, cog = co / ng;
		for (long n = 0; n < nb; n++) {
			for (long o = 0; o < co; o++) {
				for (long y0 = 0; y0 < D_c; y0++) {
					for (long y1 = 0; y1 < H_c; y1++) {
						for (long y2 = 0; y2 < W_c; y2++) {
							const long g = o / cog;
							double acc = 0.0;
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long u0 = y0 + 0 - q0 * 1;
									if (u0 < 0 || u0 % 1 != 0 || u0 / 1 >= D) {
										continue;
									}
									const long i0 = u0 / 1;
									for (long q1 = 0; q1 < 3; q1++) {
										const long u1 = y1 + 0 - q1 * 1;
										if (u1 < 0 || u1 % 1 != 0 || u1 / 1 >= H) {
											continue;
										}
										const long i1 = u1 / 1;
										for (long q2 = 0; q2 < 3; q2++) {
											const long u2 = y2 + 0 - q2 * 1;
											if (u2 < 0 || u2 % 1 != 0 || u2 / 1 >= W) {
												continue;
											}
											const long i2 = u2 / 1;
											acc += (double)x[(((n * ci + g * cig + c) * D + i0) * H + i1) * W + i2] * weight[((((g * cig + c) * cog + o % cog) * 3 + q0) * 3 + q1) * 3 + q2];
										}
									}
								}
							}
							t1[(((n * co + o) * D_c + y0) * H_c + y1) * W_c + y2] = acc;
						}
					}
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * D_c * H_c * W_c; i++) {
		double v = t1[i];
		t2[i] = v > 0 ? v : 0.0;
	}
	{
		const long A = 1L, G = (long)batch_size * 8, B = (out_channels / 8) * (long)D_c * H_c * W_c;
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
					y[j] = (float)((t2[j] - mean) * rstd * gn_weight[(g % 8) * (out_channels / 8) + b / ((long)D_c * H_c * W_c)] + gn_bias[(g % 8) * (out_channels / 8) + b / ((long)D_c * H_c * W_c)]);
				}
			}
		}
	}
	free(t1);
	free(t2);
}
