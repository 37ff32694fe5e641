// kb1_043_maxpool3d baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Blocks for a grid-stride loop over n items, `per` items a thread: enough to fill the GPU,
 * never more than the work needs. */
static unsigned grid_for(long n, int threads, int per)
{
	long b = (n + (long)threads * per - 1) / ((long)threads * per);
	return (unsigned)(b < 1 ? 1 : b > 65535L * 16 ? 65535L * 16 : b);
}

/* One thread per output element of a max pool (window (3, 3, 3), stride (2, 2, 2), padding (1, 1, 1), dilation (3, 3, 3)). */
__global__ static void k0(const float *__restrict__ x, float *__restrict__ y, long n, long si0, long so0, long si1, long so1, long si2, long so2)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
		long r = t;
		const long o2 = r % so2;
		r /= so2;
		const long o1 = r % so1;
		r /= so1;
		const long o0 = r % so0;
		r /= so0;
		const long nc = r;
		float acc = -INFINITY;
		for (int q0 = 0; q0 < 3; q0++) {
			const long i0 = o0 * 2 - 1 + q0 * 3;
			if (i0 < 0 || i0 >= si0) {
				continue;
			}
			for (int q1 = 0; q1 < 3; q1++) {
				const long i1 = o1 * 2 - 1 + q1 * 3;
				if (i1 < 0 || i1 >= si1) {
					continue;
				}
				for (int q2 = 0; q2 < 3; q2++) {
					const long i2 = o2 * 2 - 1 + q2 * 3;
					if (i2 < 0 || i2 >= si2) {
						continue;
					}
					acc = fmaxf(acc, x[(((nc * si0 + i0) * si1 + i1) * si2 + i2)]);
				}
			}
		}
		y[t] = acc;
	}
}

extern "C" void kb_maxpool3d(const float *x, float *y, int batch, int channels, int dim1, int dim2, int dim3)
{
	const long dim1_out = (dim1 + 2 - 7) / 2 + 1;
	const long dim2_out = (dim2 + 2 - 7) / 2 + 1;
	const long dim3_out = (dim3 + 2 - 7) / 2 + 1;
	k0<<<grid_for((long)batch * channels * dim1_out * dim2_out * dim3_out, 256, 1), 256>>>(x, y, (long)batch * channels * dim1_out * dim2_out * dim3_out, dim1, dim1_out, dim2, dim2_out, dim3, dim3_out);
}
