// kb1_044_avgpool1d baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* One thread per output element of a avg pool (window (8,), stride (1,), padding (4,), dilation (1,)). */
__global__ static void k0(const float *__restrict__ x, float *__restrict__ y, long n, long si0, long so0)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
		long r = t;
		const long o0 = r % so0;
		r /= so0;
		const long nc = r;
		float acc = 0.0f;
		for (int q0 = 0; q0 < 8; q0++) {
			const long i0 = o0 * 1 - 4 + q0 * 1;
			if (i0 < 0 || i0 >= si0) {
				continue;
			}
			acc += x[(nc * si0 + i0)];
		}
		y[t] = acc / 8.0f;
	}
}

extern "C" void kb_avgpool1d(const float *x, float *y, int batch, int in_channels, int input_length)
{
	const long input_length_out = input_length + 8 - 8 + 1;
	k0<<<grid_for((long)batch * in_channels * input_length_out, 256, 1), 256>>>(x, y, (long)batch * in_channels * input_length_out, input_length, input_length_out);
}
