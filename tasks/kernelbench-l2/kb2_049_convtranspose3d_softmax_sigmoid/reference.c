/* kb2_049_convtranspose3d_softmax_sigmoid reference: KernelBench level 2 problem 49 (49_ConvTranspose3d_Softmax_Sigmoid), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_convtranspose3d_softmax_sigmoid(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_channels, int out_channels, int D, int H, int W)
{
	const long D_c = (D - 1) * 2 + 2;
	const long H_c = (H - 1) * 2 + 2;
	const long W_c = (W - 1) * 2 + 2;
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
							double acc = bias[o];
							for (long c = 0; c < cig; c++) {
								for (long q0 = 0; q0 < 3; q0++) {
									const long u0 = y0 + 1 - q0 * 1;
									if (u0 < 0 || u0 % 2 != 0 || u0 / 2 >= D) {
										continue;
									}
									const long i0 = u0 / 2;
									for (long q1 = 0; q1 < 3; q1++) {
										const long u1 = y1 + 1 - q1 * 1;
										if (u1 < 0 || u1 % 2 != 0 || u1 / 2 >= H) {
											continue;
										}
										const long i1 = u1 / 2;
										for (long q2 = 0; q2 < 3; q2++) {
											const long u2 = y2 + 1 - q2 * 1;
											if (u2 < 0 || u2 % 2 != 0 || u2 / 2 >= W) {
												continue;
											}
											const long i2 = u2 / 2;
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
	{
		const long O = (long)batch_size, R = (long)out_channels, I = (long)D_c * H_c * W_c;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t1 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp((double)xp[r * I] - m);
				}
				for (long r = 0; r < R; r++) {
					t2[o * R * I + i + r * I] = exp((double)xp[r * I] - m) / s;
				}
			}
		}
	}
	for (long i = 0; i < (long)batch_size * out_channels * D_c * H_c * W_c; i++) {
		double v = t2[i];
		y[i] = (float)(1.0 / (1.0 + exp(-v)));
	}
	free(t1);
	free(t2);
}
