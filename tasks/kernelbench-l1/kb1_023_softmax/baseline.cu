// kb1_023_softmax baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* Merges the running (max, sum of exp(v - max)) of two parts of a row. */
__device__ static __forceinline__ void online_merge(float *m, float *s, float m2, float s2)
{
	float mm = fmaxf(*m, m2);
	if (mm == -INFINITY)
		return;
	*s = *s * expf(*m - mm) + s2 * expf(m2 - mm);
	*m = mm;
}

/* One block per row (I == 1): one pass for the max and the sum of exponentials (online), one
 * to write. */
__global__ static void k0r(const float *__restrict__ x, float *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float *yr = y + (long)blockIdx.x * R;
	float m = -INFINITY, s = 0.0f;
	for (long r = threadIdx.x; r < R; r += blockDim.x)
		online_merge(&m, &s, xr[r], 1.0f);
	for (int o = 16; o > 0; o >>= 1)
		online_merge(&m, &s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	__shared__ float pm[32], ps[32];
	if ((threadIdx.x & 31) == 0) {
		pm[threadIdx.x >> 5] = m;
		ps[threadIdx.x >> 5] = s;
	}
	__syncthreads();
	m = pm[0];
	s = ps[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++)
		online_merge(&m, &s, pm[w], ps[w]);
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		yr[r] = expf(v - m) / s;
	}
}

/* One thread per (o, i) (I > 1): neighbouring threads read neighbouring elements. */
__global__ static void k0c(const float *__restrict__ x, float *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		long base = t / I * R * I + t % I;
		float m = -INFINITY, s = 0.0f;
		for (long r = 0; r < R; r++)
			online_merge(&m, &s, x[base + r * I], 1.0f);
		for (long r = 0; r < R; r++) {
			float v = x[base + r * I];
			y[base + r * I] = expf(v - m) / s;
		}
	}
}

extern "C" void kb_softmax(const float *x, float *y, int batch, int dim)
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
