// log_softmax baseline: one block per row, shared-memory reductions for the max and the sum.
#include <math.h>

__global__ static void log_softmax_kernel(const float *x, float *y, int cols)
{
	__shared__ float red[256];
	const float *xr = x + (long)blockIdx.x * cols;
	float *yr = y + (long)blockIdx.x * cols;
	float m = -INFINITY;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		m = fmaxf(m, xr[j]);
	red[threadIdx.x] = m;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();
	float sum = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		sum += expf(xr[j] - m);
	red[threadIdx.x] = sum;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	float lse = m + logf(red[0]);
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		yr[j] = xr[j] - lse;
}

extern "C" void log_softmax(const float *x, float *y, int rows, int cols)
{
	log_softmax_kernel<<<rows, 256>>>(x, y, cols);
}
