// kb1_039_l2_norm baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* One block per row (I == 1): the statistic by a block reduction, then y = x / f(s). */
__global__ static void k0r(const float *__restrict__ x, float *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float *yr = y + (long)blockIdx.x * R;
	float s = 0.0f;
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		s += v * v;
	}
	s = block_sum(s);
	const float f = sqrtf(s);
	for (long r = threadIdx.x; r < R; r += blockDim.x)
		yr[r] = xr[r] / f;
}

/* One thread per (o, i) (I > 1): neighbouring threads read neighbouring elements. */
__global__ static void k0c(const float *__restrict__ x, float *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		const long base = t / I * R * I + t % I;
		float s = 0.0f;
		for (long r = 0; r < R; r++) {
			float v = x[base + r * I];
			s += v * v;
		}
		const float f = sqrtf(s);
		for (long r = 0; r < R; r++)
			y[base + r * I] = x[base + r * I] / f;
	}
}

extern "C" void kb_l2_norm(const float *x, float *y, int batch, int dim)
{
	{
		const long O = (long)batch, R = (long)dim, I = 1L;
		if (I == 1) {
			k0r<<<(unsigned)O, R >= 16384 ? 1024 : 256>>>(x, y, R);
		} else {
			k0c<<<grid_for(O * I, 256, 1), 256>>>(x, y, O, R, I);
		}
	}
}
