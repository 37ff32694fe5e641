// kb1_041_maxpool1d baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* One thread per output element of a max pool (window (8,), stride (1,), padding (4,), dilation (3,)). */
__global__ static void k0(const float *__restrict__ x, float *__restrict__ y, long n, long si0, long so0)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
		long r = t;
		const long o0 = r % so0;
		r /= so0;
		const long nc = r;
		float acc = -INFINITY;
		for (int q0 = 0; q0 < 8; q0++) {
			const long i0 = o0 * 1 - 4 + q0 * 3;
			if (i0 < 0 || i0 >= si0) {
				continue;
			}
			acc = fmaxf(acc, x[(nc * si0 + i0)]);
		}
		y[t] = acc;
	}
}

extern "C" void kb_maxpool1d(const float *x, float *y, int batch, int features, int sequence_length)
{
	const long sequence_length_out = sequence_length + 8 - 22 + 1;
	k0<<<grid_for((long)batch * features * sequence_length_out, 256, 1), 256>>>(x, y, (long)batch * features * sequence_length_out, sequence_length, sequence_length_out);
}
