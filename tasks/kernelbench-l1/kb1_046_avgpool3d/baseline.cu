// kb1_046_avgpool3d baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* One thread per output element of a avg pool (window (3, 3, 3), stride (2, 2, 2), padding (1, 1, 1), dilation (1, 1, 1)). */
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
		float acc = 0.0f;
		for (int q0 = 0; q0 < 3; q0++) {
			const long i0 = o0 * 2 - 1 + q0 * 1;
			if (i0 < 0 || i0 >= si0) {
				continue;
			}
			for (int q1 = 0; q1 < 3; q1++) {
				const long i1 = o1 * 2 - 1 + q1 * 1;
				if (i1 < 0 || i1 >= si1) {
					continue;
				}
				for (int q2 = 0; q2 < 3; q2++) {
					const long i2 = o2 * 2 - 1 + q2 * 1;
					if (i2 < 0 || i2 >= si2) {
						continue;
					}
					acc += x[(((nc * si0 + i0) * si1 + i1) * si2 + i2)];
				}
			}
		}
		y[t] = acc / 27.0f;
	}
}

extern "C" void kb_avgpool3d(const float *x, float *y, int batch, int channels, int depth, int height, int width)
{
	const long depth_out = (depth + 2 - 3) / 2 + 1;
	const long height_out = (height + 2 - 3) / 2 + 1;
	const long width_out = (width + 2 - 3) / 2 + 1;
	k0<<<grid_for((long)batch * channels * depth_out * height_out * width_out, 256, 1), 256>>>(x, y, (long)batch * channels * depth_out * height_out * width_out, depth, depth_out, height, height_out, width, width_out);
}
