/* kb1_046_avgpool3d reference: KernelBench level 1 problem 46 (46_Average_Pooling_3D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_avgpool3d(const float *x, float *y, int batch, int channels, int depth, int height, int width)
{
	const long depth_out = (depth + 2 - 3) / 2 + 1;
	const long height_out = (height + 2 - 3) / 2 + 1;
	const long width_out = (width + 2 - 3) / 2 + 1;
	for (long nc = 0; nc < (long)batch * channels; nc++) {
		for (long o0 = 0; o0 < depth_out; o0++) {
			for (long o1 = 0; o1 < height_out; o1++) {
				for (long o2 = 0; o2 < width_out; o2++) {
					double acc = 0.0;
					for (long q0 = 0; q0 < 3; q0++) {
						const long i0 = o0 * 2 - 1 + q0 * 1;
						if (i0 < 0 || i0 >= depth) {
							continue;
						}
						for (long q1 = 0; q1 < 3; q1++) {
							const long i1 = o1 * 2 - 1 + q1 * 1;
							if (i1 < 0 || i1 >= height) {
								continue;
							}
							for (long q2 = 0; q2 < 3; q2++) {
								const long i2 = o2 * 2 - 1 + q2 * 1;
								if (i2 < 0 || i2 >= width) {
									continue;
								}
								acc += x[((nc * depth + i0) * height + i1) * width + i2];
							}
						}
					}
					y[((nc * depth_out + o0) * height_out + o1) * width_out + o2] = (float)(acc / 27.0);
				}
			}
		}
	}
}
