// kb1_037_frobenius_norm baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* The sum of squares of the whole tensor: partial sums (double) of grid-stride chunks... */
__global__ static void k0p(const float *__restrict__ x, double *__restrict__ part, long n)
{
	double s = 0;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		double v = x[i];
		s += v * v;
	}
	s = block_sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

/* ... summed by one block into the norm ... */
__global__ static void k0n(const double *__restrict__ part, int P, float *__restrict__ norm)
{
	double s = 0;
	for (int p = threadIdx.x; p < P; p += blockDim.x)
		s += part[p];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*norm = (float)sqrt(s);
}

/* ... and y = x / norm elementwise. */
__global__ static void k0(const float *__restrict__ x, const float *__restrict__ norm, float *__restrict__ y, long n)
{
	const float f = *norm;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		y[i] = x[i] / f;
}

extern "C" void kb_frobenius_norm(const float *x, float *y, int batch, int features, int dim1, int dim2)
{
	char *work = (char *)scratch(((64L * 1024 + 255) & ~255L));
	if (!work) {
		return;
	}
	void *ws0 = work;
	{
		const long R = (long)batch * features * dim1 * dim2;
		double *part = (double *)ws0;
		float *norm = (float *)(part + 1024);
		const unsigned P = grid_for(R, 256, 8) < 1024 ? grid_for(R, 256, 8) : 1024;
		k0p<<<P, 256>>>(x, part, R);
		k0n<<<1, 1024>>>(part, (int)P, norm);
		k0<<<grid_for(R, 256, 4), 256>>>(x, norm, y, R);
	}
}
