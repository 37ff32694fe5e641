/* kb1_043_maxpool3d reference: KernelBench level 1 problem 43 (43_Max_Pooling_3D), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_maxpool3d(const float *x, float *y, int batch, int channels, int dim1, int dim2, int dim3)
{
	const long dim1_out = (dim1 + 2 - 7) / 2 + 1;
	const long dim2_out = (dim2 + 2 - 7) / 2 + 1;
	const long dim3_out = (dim3 + 2 - 7) / 2 + 1;
	for (long nc = 0; nc < (long)batch * channels; nc++) {
		for (long o0 = 0; o0 < dim1_out; o0++) {
			for (long o1 = 0; o1 < dim2_out; o1++) {
				for (long o2 = 0; o2 < dim3_out; o2++) {
					double acc = -INFINITY;
					for (long q0 = 0; q0 < 3; q0++) {
						const long i0 = o0 * 2 - 1 + q0 * 3;
						if (i0 < 0 || i0 >= dim1) {
							continue;
						}
						for (long q1 = 0; q1 < 3; q1++) {
							const long i1 = o1 * 2 - 1 + q1 * 3;
							if (i1 < 0 || i1 >= dim2) {
								continue;
							}
							for (long q2 = 0; q2 < 3; q2++) {
								const long i2 = o2 * 2 - 1 + q2 * 3;
								if (i2 < 0 || i2 >= dim3) {
									continue;
								}
								const double v = x[((nc * dim1 + i0) * dim2 + i1) * dim3 + i2];
								acc = v > acc ? v : acc;
							}
						}
					}
					y[((nc * dim1_out + o0) * dim2_out + o1) * dim3_out + o2] = (float)(acc);
				}
			}
		}
	}
}
