// kb1_094_mse_loss baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* The baseline's intermediates, as PyTorch's caching allocator keeps them: one device block
 * grown on demand and kept (the referee's untimed warm-up call makes it). NULL after a message
 * when the device has no memory left. */
static void *scratch(size_t bytes)
{
	static void *p;
	static size_t cap;
	if (bytes > cap) {
		cudaFree(p);
		p = NULL;
		cap = 0;
		if (cudaMalloc(&p, bytes) != cudaSuccess) {
			fprintf(stderr, "baseline: no device memory for %zu bytes of intermediates\n", bytes);
			return NULL;
		}
		cap = bytes;
	}
	return p;
}

/* Sum of v over the block (blockDim.x a multiple of 32, at most 1024), in every thread. */
template <typename T> __device__ static T block_sum(T v)
{
	__shared__ T part[32];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	__syncthreads();
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = v;
	__syncthreads();
	T s = 0;
	for (int i = 0; i < (int)(blockDim.x >> 5); i++)
		s += part[i];
	return s;
}

/* Partial sums (double) of the loss's terms over grid-stride chunks... */
__global__ static void k0p(const float *__restrict__ P, const float *__restrict__ T, double *__restrict__ part, long n, long cols)
{
	double s = 0;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		const float p = P[i], t = T[i];
		s += (p - t) * (p - t);
	}
	s = block_sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
	(void)cols;
}

/* ... summed by one block and divided into the mean. */
__global__ static void k0n(const double *__restrict__ part, int P, float *__restrict__ y, double denom)
{
	double s = 0;
	for (int p = threadIdx.x; p < P; p += blockDim.x)
		s += part[p];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*y = (float)(s / denom);
}

extern "C" void kb_mse_loss(const float *predictions, const float *targets, float *y, int batch, int dim)
{
	char *work = (char *)scratch(((8L * 1024 + 255) & ~255L));
	if (!work) {
		return;
	}
	void *ws0 = work;
	{
		const long rows = (long)batch, cols = (long)dim, n = rows * cols;
		const unsigned P = grid_for(n, 256, 8) < 1024 ? grid_for(n, 256, 8) : 1024;
		k0p<<<P, 256>>>(predictions, targets, (double *)ws0, n, cols);
		k0n<<<1, 1024>>>((const double *)ws0, (int)P, y, (double)n);
	}
}
