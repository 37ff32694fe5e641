// kb1_047_sum_dim baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

/* Combines (acc, idx) over the block (sum: 1 adds, else the operator's own merge); the
 * result in every thread. */
__device__ static float red0(float acc, long *pidx, int sum)
{
	__shared__ float sa[32];
	__shared__ long si[32];
	long idx = *pidx;
	for (int o = 16; o > 0; o >>= 1) {
		float a2 = __shfl_xor_sync(0xffffffffu, acc, o);
		if (sum) {
			acc += a2;
		} else {
			acc += a2;
		}
	}
	__syncthreads();
	if ((threadIdx.x & 31) == 0) {
		sa[threadIdx.x >> 5] = acc;
		si[threadIdx.x >> 5] = idx;
	}
	__syncthreads();
	acc = sa[0];
	idx = si[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++) {
		float a2 = sa[w];
		if (sum) {
			acc += a2;
		} else {
			acc += a2;
		}
	}
	*pidx = idx;
	return acc;
}

/* One block per row of a reduction over contiguous elements (I == 1). */
__global__ static void k0r(const float *__restrict__ x, float *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float acc = 0.0f;
	long idx = 0;
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		acc += v;
	}
	acc = red0(acc, &idx, 0);
	if (threadIdx.x == 0)
		y[blockIdx.x] = acc;
}

/* One thread per (o, i) of a reduction over a strided axis (I > 1): neighbouring threads read
 * neighbouring elements. */
__global__ static void k0c(const float *__restrict__ x, float *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		const float *xp = x + t / I * R * I + t % I;
		float acc = 0.0f;
		for (long r = 0; r < R; r++) {
			float v = xp[r * I];
			acc += v;
		}
		y[t] = acc;
	}
}

extern "C" void kb_sum_dim(const float *x, float *y, int batch, int dim1, int dim2)
{
	{
		const long O = (long)batch, R = (long)dim1, I = (long)dim2;
		if (I == 1) {
			k0r<<<(unsigned)O, R >= 16384 ? 1024 : 256>>>(x, y, R);
		} else {
			k0c<<<grid_for(O * I, 256, 1), 256>>>(x, y, O, R, I);
		}
	}
}
