// kb1_095_cross_entropy_loss baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* One block per row: the row's cross entropy, log(sum(exp(x))) - x[label]. */
__global__ static void k0r(const float *__restrict__ x, const int64_t *__restrict__ lab, float *__restrict__ loss, long cols)
{
	const float *xr = x + (long)blockIdx.x * cols;
	float m = -INFINITY, s = 0.0f;
	for (long j = threadIdx.x; j < cols; j += blockDim.x)
		m = fmaxf(m, xr[j]);
	__shared__ float wm[32];
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if ((threadIdx.x & 31) == 0)
		wm[threadIdx.x >> 5] = m;
	__syncthreads();
	m = wm[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++)
		m = fmaxf(m, wm[w]);
	for (long j = threadIdx.x; j < cols; j += blockDim.x)
		s += expf(xr[j] - m);
	s = block_sum(s);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = m + logf(s) - xr[lab[blockIdx.x]];
}

/* The mean of the rows' losses, by one block. */
__global__ static void k0m(const float *__restrict__ loss, long rows, float *__restrict__ y)
{
	double s = 0;
	for (long i = threadIdx.x; i < rows; i += blockDim.x)
		s += loss[i];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*y = (float)(s / rows);
}

extern "C" void kb_cross_entropy_loss(const float *predictions, const int64_t *targets, float *y, int batch, int num_classes)
{
	char *work = (char *)scratch(((4L * ((long)batch) + 255) & ~255L));
	if (!work) {
		return;
	}
	void *ws0 = work;
	{
		const long rows = (long)batch, cols = (long)num_classes;
		float *loss = (float *)ws0;
		k0r<<<(unsigned)rows, 256>>>(predictions, targets, loss, cols);
		k0m<<<1, 1024>>>(loss, rows, y);
	}
}
