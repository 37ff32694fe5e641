/* kb1_042_maxpool2d reference: KernelBench level 1 problem 42 (42_Max_Pooling_2D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_maxpool2d(const float *x, float *y, int batch, int channels, int height, int width)
{
	const long height_out = height + 2 - 4 + 1;
	const long width_out = width + 2 - 4 + 1;
	for (long nc = 0; nc < (long)batch * channels; nc++) {
		for (long o0 = 0; o0 < height_out; o0++) {
			for (long o1 = 0; o1 < width_out; o1++) {
				double acc = -INFINITY;
				for (long q0 = 0; q0 < 4; q0++) {
					const long i0 = o0 * 1 - 1 + q0 * 1;
					if (i0 < 0 || i0 >= height) {
						continue;
					}
					for (long q1 = 0; q1 < 4; q1++) {
						const long i1 = o1 * 1 - 1 + q1 * 1;
						if (i1 < 0 || i1 >= width) {
							continue;
						}
						const double v = x[(nc * height + i0) * width + i1];
						acc = v > acc ? v : acc;
					}
				}
				y[(nc * height_out + o0) * width_out + o1] = (float)(acc);
			}
		}
	}
}
