// kb1_089_cumsum baseline: a hand-written kernel for the operator, as good as PyTorch eager's own.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One block of 1024 threads per row: thread t scans elements [t * chunk, (t + 1) * chunk) of
 * the row (in scan order), after the totals of the chunks before it. */
__global__ static void __launch_bounds__(1024) k0(const float *__restrict__ x, float *__restrict__ y, long len)
{
	__shared__ float tot[1024];
	const long base = (long)blockIdx.x * len, chunk = (len + 1023) / 1024;
	const long p0 = threadIdx.x * chunk, p1 = p0 + chunk < len ? p0 + chunk : len;
	float acc = 0.0f;
	for (long p = p0; p < p1; p++) {
		const long j = p;
		acc = acc + x[base + j];
	}
	tot[threadIdx.x] = acc;
	__syncthreads();
	for (int o = 1; o < 1024; o <<= 1) { /* inclusive scan of the totals (Hillis-Steele) */
		float t = threadIdx.x >= o ? tot[threadIdx.x - o] : 0.0f;
		__syncthreads();
		tot[threadIdx.x] = tot[threadIdx.x] + t;
		__syncthreads();
	}
	acc = threadIdx.x ? tot[threadIdx.x - 1] : 0.0f;
	for (long p = p0; p < p1; p++) {
		const long j = p;
		const float v = x[base + j];
		acc = acc + v;
		y[base + j] = acc;
	}
}

extern "C" void kb_cumsum(const float *x, float *y, int batch, int len)
{
	k0<<<(unsigned)((long)batch), 1024>>>(x, y, (long)len);
}
