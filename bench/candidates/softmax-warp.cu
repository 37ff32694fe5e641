// softmax: one warp per row, shuffle reductions, WARPS rows per block.
#include <math.h>
#define WARPS 4

__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__global__ void softmax_warp(const float *x, float *y, int rows, int cols)
{
	int row = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= rows)
		return;
	const float *xr = x + (size_t)row * cols;
	float *yr = y + (size_t)row * cols;
	float m = -INFINITY;
	for (int j = lane; j < cols; j += 32)
		m = fmaxf(m, xr[j]);
	m = warp_max(m);
	float s = 0.f;
	for (int j = lane; j < cols; j += 32)
		s += expf(xr[j] - m);
	s = warp_sum(s);
	for (int j = lane; j < cols; j += 32)
		yr[j] = expf(xr[j] - m) / s;
}

extern "C" void softmax(const float *x, float *y, int rows, int cols)
{
	softmax_warp<<<(rows + WARPS - 1) / WARPS, WARPS * 32>>>(x, y, rows, cols);
}
