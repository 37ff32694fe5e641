/* kb2_047_conv3d_mish_tanh reference: KernelBench level 2 problem 47 (47_Conv3d_Mish_Tanh), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_conv3d_mish_tanh(const float *x, const float *weight, const float *bias, float *y, int batch_size, int in_channels, int out_channels, int D, int H, int W)
{
	const long D_c = D - 3 + 1;
	const long H_c = H - 3 + 1;
	const long W_c = W - 3 + 1;
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
									const long i0 = y0 * 1 - 0 + q0 * 1;
									if (i0 < 0 || i0 >= D) {
										continue;
									}
									for (long q1 = 0; q1 < 3; q1++) {
										const long i1 = y1 * 1 - 0 + q1 * 1;
										if (i1 < 0 || i1 >= H) {
											continue;
										}
										for (long q2 = 0; q2 < 3; q2++) {
											const long i2 = y2 * 1 - 0 + q2 * 1;
											if (i2 < 0 || i2 >= W) {
												continue;
											}
											acc += (double)x[(((n * ci + g * cig + c) * D + i0) * H + i1) * W + i2] * weight[(((o * cig + c) * 3 + q0) * 3 + q1) * 3 + q2];
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
		t2[i] = v * tanh(log1p(exp(v)));
	}
	for (long i = 0; i < (long)batch_size * out_channels * D_c * H_c * W_c; i++) {
		double v = t2[i];
		y[i] = (float)(tanh(v));
	}
	free(t1);
	free(t2);
}
