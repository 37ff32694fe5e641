// softmax_cross_entropy baseline: one block per row, block reductions for the max and the sum.
#include <math.h>

__global__ static void softmax_cross_entropy_kernel(const float *logits, const int *labels, float *loss, int classes)
{
	__shared__ float red[256];
	const float *x = logits + (long)blockIdx.x * classes;
	float m = -INFINITY;
	for (int j = threadIdx.x; j < classes; j += blockDim.x)
		m = fmaxf(m, x[j]);
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
	for (int j = threadIdx.x; j < classes; j += blockDim.x)
		sum += expf(x[j] - m);
	red[threadIdx.x] = sum;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		loss[blockIdx.x] = m + logf(red[0]) - x[labels[blockIdx.x]];
}

extern "C" void softmax_cross_entropy(const float *logits, const int *labels, float *loss, int rows, int classes)
{
	softmax_cross_entropy_kernel<<<rows, 256>>>(logits, labels, loss, classes);
}
