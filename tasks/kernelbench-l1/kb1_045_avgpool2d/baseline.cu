// kb1_045_avgpool2d baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* One thread per output element of a avg pool (window (11, 11), stride (11, 11), padding (0, 0), dilation (1, 1)). */
__global__ static void k0(const float *__restrict__ x, float *__restrict__ y, long n, long si0, long so0, long si1, long so1)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
		long r = t;
		const long o1 = r % so1;
		r /= so1;
		const long o0 = r % so0;
		r /= so0;
		const long nc = r;
		float acc = 0.0f;
		for (int q0 = 0; q0 < 11; q0++) {
			const long i0 = o0 * 11 - 0 + q0 * 1;
			if (i0 < 0 || i0 >= si0) {
				continue;
			}
			for (int q1 = 0; q1 < 11; q1++) {
				const long i1 = o1 * 11 - 0 + q1 * 1;
				if (i1 < 0 || i1 >= si1) {
					continue;
				}
				acc += x[((nc * si0 + i0) * si1 + i1)];
			}
		}
		y[t] = acc / 121.0f;
	}
}

extern "C" void kb_avgpool2d(const float *x, float *y, int batch, int channels, int height, int width)
{
	const long height_out = (height - 11) / 11 + 1;
	const long width_out = (width - 11) / 11 + 1;
	k0<<<grid_for((long)batch * channels * height_out * width_out, 256, 1), 256>>>(x, y, (long)batch * channels * height_out * width_out, height, height_out, width, width_out);
}
