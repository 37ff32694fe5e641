// softmax: single pass online max/sum per thread, merged across the block with cub.
#include <cub/block/block_reduce.cuh>
#include <math.h>
#define BLOCK 256

struct MS {
	float m, s;
};

struct MergeMS {
	__device__ MS operator()(const MS &a, const MS &b) const
	{
		float m = fmaxf(a.m, b.m);
		return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
	}
};

__global__ void softmax_online(const float *x, float *y, int cols)
{
	typedef cub::BlockReduce<MS, BLOCK> Reduce;
	__shared__ typename Reduce::TempStorage tmp;
	__shared__ MS total;
	const float *xr = x + (size_t)blockIdx.x * cols;
	float *yr = y + (size_t)blockIdx.x * cols;
	MS acc = {-INFINITY, 0.f};
	for (int j = threadIdx.x; j < cols; j += BLOCK) {
		float v = xr[j], m = fmaxf(acc.m, v);
		acc.s = acc.s * __expf(acc.m - m) + __expf(v - m);
		acc.m = m;
	}
	MS r = Reduce(tmp).Reduce(acc, MergeMS());
	if (threadIdx.x == 0)
		total = r;
	__syncthreads();
	float inv = 1.f / total.s;
	for (int j = threadIdx.x; j < cols; j += BLOCK)
		yr[j] = __expf(xr[j] - total.m) * inv;
}

extern "C" void softmax(const float *x, float *y, int rows, int cols)
{
	softmax_online<<<rows, BLOCK>>>(x, y, cols);
}
