// kb1_027_selu baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
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

__device__ static __forceinline__ float f0(float v)
{
	return 1.0507009873554805f * (v > 0 ? v : 1.6732632423543772f * expm1f(v));
}

/* y = f0(x) elementwise: a grid-stride loop, four elements a thread a step where both
 * pointers are 16-byte aligned. */
__global__ static void k0(const float *__restrict__ x, float *__restrict__ y, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x, step = (long)gridDim.x * blockDim.x;
	long n4 = (size_t)x % 16 == 0 && (size_t)y % 16 == 0 ? n / 4 : 0;
	for (long j = i; j < n4; j += step) {
		float4 a = ((const float4 *)x)[j];
		a.x = f0(a.x);
		a.y = f0(a.y);
		a.z = f0(a.z);
		a.w = f0(a.w);
		((float4 *)y)[j] = a;
	}
	for (long j = 4 * n4 + i; j < n; j += step)
		y[j] = f0(x[j]);
}

extern "C" void kb_selu(const float *x, float *y, int batch, int dim)
{
	k0<<<grid_for((long)batch * dim, 256, 4), 256>>>(x, y, (long)batch * dim);
}
