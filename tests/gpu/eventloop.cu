// eventloop.cu - times the vector_add baseline kernel with a plain CUDA-event loop, written
// apart from leap, to cross-check leap-bench (make check-gpu). Prints the median in ms.
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                         \
	do {                                                                             \
		cudaError_t e_ = (x);                                                    \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "eventloop: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(2);                                                         \
		}                                                                        \
	} while (0)

__global__ static void add_kernel(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

static int cmp(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 67108864, iters = 200, l2 = 0;
	float *a, *b, *c, ms[200];
	void *flush;
	CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
	CHECK(cudaMalloc(&a, (size_t)n * 4));
	CHECK(cudaMalloc(&b, (size_t)n * 4));
	CHECK(cudaMalloc(&c, (size_t)n * 4));
	CHECK(cudaMalloc(&flush, 2 * (size_t)l2));
	CHECK(cudaMemset(a, 0, (size_t)n * 4));
	CHECK(cudaMemset(b, 0, (size_t)n * 4));
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
	CHECK(cudaDeviceSynchronize());
	for (int i = 0; i < iters; i++) {
		CHECK(cudaMemset(flush, i, 2 * (size_t)l2));
		CHECK(cudaEventRecord(e0));
		add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaGetLastError());
		CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
	}
	qsort(ms, iters, sizeof *ms, cmp);
	printf("%.4f\n", (ms[iters / 2 - 1] + ms[iters / 2]) / 2);
	return 0;
}
