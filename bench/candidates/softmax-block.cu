// softmax: one block per row, shared-memory tree reductions.
#include <math.h>
#define BLOCK 256

__global__ void softmax_rows(const float *x, float *y, int cols)
{
	__shared__ float red[BLOCK];
	const float *xr = x + (size_t)blockIdx.x * cols;
	float *yr = y + (size_t)blockIdx.x * cols;
	float m = -INFINITY;
	for (int j = threadIdx.x; j < cols; j += BLOCK)
		m = fmaxf(m, xr[j]);
	red[threadIdx.x] = m;
	__syncthreads();
	for (int s = BLOCK / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();
	float sum = 0.f;
	for (int j = threadIdx.x; j < cols; j += BLOCK)
		sum += __expf(xr[j] - m);
	red[threadIdx.x] = sum;
	__syncthreads();
	for (int s = BLOCK / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	float inv = 1.f / red[0];
	for (int j = threadIdx.x; j < cols; j += BLOCK)
		yr[j] = __expf(xr[j] - m) * inv;
}

extern "C" void softmax(const float *x, float *y, int rows, int cols)
{
	softmax_rows<<<rows, BLOCK>>>(x, y, cols);
}
