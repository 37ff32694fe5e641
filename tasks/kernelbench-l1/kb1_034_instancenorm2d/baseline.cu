// kb1_034_instancenorm2d baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* Partial sums of group g = blockIdx.x over its chunk blockIdx.y of P: part[g][p] = (sum,
 * sum of squares), in double. (Groups on x: there may be millions, past gridDim.y's 65535.) */
__global__ static void gstats_part(const float *__restrict__ x, double2 *__restrict__ part, long A, long G, long B, long chunk)
{
	const long g = blockIdx.x, n = A * B, e0 = (long)blockIdx.y * chunk;
	const long e1 = e0 + chunk < n ? e0 + chunk : n;
	double s = 0, q = 0;
	for (long e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
		double v = x[(e / B * G + g) * B + e % B];
		s += v;
		q += v * v;
	}
	s = block_sum(s);
	q = block_sum(q);
	if (threadIdx.x == 0)
		part[g * gridDim.y + blockIdx.y] = make_double2(s, q);
}

/* One thread per group: the mean and 1 / sqrt(variance + eps) from the partial sums. */
__global__ static void gstats_final(const double2 *__restrict__ part, float2 *__restrict__ st, long G, int P, long n, double eps)
{
	for (long g = (long)blockIdx.x * blockDim.x + threadIdx.x; g < G; g += (long)gridDim.x * blockDim.x) {
		double s = 0, q = 0;
		for (int p = 0; p < P; p++) {
			s += part[g * P + p].x;
			q += part[g * P + p].y;
		}
		double mean = s / n, var = q / n - mean * mean;
		st[g] = make_float2((float)mean, (float)(1.0 / sqrt((var > 0 ? var : 0) + eps)));
	}
}

/* P, the blocks a group's sums are split into: enough blocks to fill the GPU, at least 2048
 * elements a block, at most 64. */
static int gstats_split(long G, long n)
{
	long p = (2048 + G - 1) / G, most = (n + 2047) / 2048;
	p = p < most ? p : most;
	return (int)(p < 1 ? 1 : p > 64 ? 64 : p);
}

/* y = (x - mean) * rstd elementwise, the statistics of element i's group. */
__global__ static void k0(const float *__restrict__ x, const float2 *__restrict__ st, const float *__restrict__ w,
			    const float *__restrict__ bb, float *__restrict__ y, long n, long G, long B, long p1, long p2, long p3)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		const long g = i / B % G;
		const float2 m = st[g];
		y[i] = (x[i] - m.x) * m.y;
	}
}

extern "C" void kb_instancenorm2d(const float *x, float *y, int batch, int features, int dim1, int dim2)
{
	char *work = (char *)scratch(((16L * (long)batch * features * 64 + 8L * (long)batch * features + 255) & ~255L));
	if (!work) {
		return;
	}
	void *ws0 = work;
	{
		const long A = 1L, G = (long)batch * features, B = (long)dim1 * dim2, n = A * G * B;
		const int P = gstats_split(G, A * B);
		double2 *part = (double2 *)ws0;
		float2 *st = (float2 *)(part + G * 64);
		gstats_part<<<dim3((unsigned)G, P), 256>>>(x, part, A, G, B, (A * B + P - 1) / P);
		gstats_final<<<grid_for(G, 128, 1), 128>>>(part, st, G, P, A * B, 1e-05);
		k0<<<grid_for(n, 256, 1), 256>>>(x, st, NULL, NULL, y, n, G, B, 1, 1, 1);
	}
}
