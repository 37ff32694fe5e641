// eventloop.cu - times the vector_add baseline kernel with a plain CUDA-event loop, written
// apart from leap, to cross-check leap-bench (make check-gpu), and checks its own L2 claim.
//
// For each N given it times c = a + b on N floats twice. Flushed: 200 launches, each after
// writing 2 x L2 bytes elsewhere (the cold read leap-bench's default promises), between a pair
// of events; the flush is queued before the first event, so the launch is queued by the time
// the flush ends and no launch latency falls between the events. Hot: 20 blocks of 50 launches
// back to back on the same buffers between one pair of events, as leap-bench times a block of
// calls (a pair of events around each launch would time the launch latency of an idle GPU
// too), each block's time / 50 (what --hot promises where the 12 N bytes stay in the L2). The
// flushed figure is only a cold one if the flush works: at an N whose working set one
// partition of the L2 holds (an H100's 50 MB are two of 25 MB; a line is cached in the
// partition near the SMs that read it, so a larger set need not stay), the flushed median must
// be clearly above the hot one, and check-gpu checks that before it compares leap-bench with
// either. Clocks are warmed first (100 ms of launches).
// Prints one JSON line per N: {"n", "bytes", "l2_bytes", "partition_bytes", "fits_l2",
// "flushed_ms", "hot_ms"} (medians; fits_l2: the working set within one partition, half the
// L2). Exit status 2 when a CUDA call fails (the error on stderr).
// usage: eventloop N...   (build: nvcc -O2 -o eventloop eventloop.cu; make gpu-tools)
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

enum { ITERS = 200, BLOCKS = 20, PER_BLOCK = 50 };

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

static float median(float *ms, int k)
{
	qsort(ms, k, sizeof *ms, cmp);
	return k % 2 ? ms[k / 2] : (ms[k / 2 - 1] + ms[k / 2]) / 2;
}

// The median of ITERS launches, each after writing 2 x l2 bytes, timed one by one.
static float flushed(const float *a, const float *b, float *c, int n, void *flush, size_t l2)
{
	float ms[ITERS];
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	for (int i = 0; i < ITERS; i++) {
		CHECK(cudaMemsetAsync(flush, i, 2 * l2, 0));
		CHECK(cudaEventRecord(e0));
		add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
	}
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	return median(ms, ITERS);
}

// The median over BLOCKS blocks of PER_BLOCK launches back to back, per launch.
static float hot(const float *a, const float *b, float *c, int n)
{
	float ms[BLOCKS];
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	for (int i = 0; i < BLOCKS; i++) {
		CHECK(cudaEventRecord(e0));
		for (int k = 0; k < PER_BLOCK; k++) {
			add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
			CHECK(cudaGetLastError());
		}
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
		ms[i] /= PER_BLOCK;
	}
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	return median(ms, BLOCKS);
}

// Launches for at least 100 ms so that the clocks are up before anything is timed.
static void warm(const float *a, const float *b, float *c, int n)
{
	cudaEvent_t e0, e1;
	float ms = 0;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaEventRecord(e0));
	while (ms < 100) {
		for (int i = 0; i < 20; i++)
			add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms, e0, e1));
	}
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: eventloop N...\n");
		return 2;
	}
	int l2 = 0;
	void *flush;
	CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
	CHECK(cudaMalloc(&flush, 2 * (size_t)l2));
	for (int k = 1; k < argc; k++) {
		char *end;
		long n = strtol(argv[k], &end, 10);
		if (*end || n < 1 || n > (1L << 30)) {
			fprintf(stderr, "eventloop: '%s' is not a size in [1, 2^30]\n", argv[k]);
			return 2;
		}
		float *a, *b, *c;
		size_t bytes = (size_t)n * 4;
		CHECK(cudaMalloc(&a, bytes));
		CHECK(cudaMalloc(&b, bytes));
		CHECK(cudaMalloc(&c, bytes));
		CHECK(cudaMemset(a, 0, bytes));
		CHECK(cudaMemset(b, 0, bytes));
		warm(a, b, c, (int)n);
		float cold = flushed(a, b, c, (int)n, flush, (size_t)l2);
		float warm_ms = hot(a, b, c, (int)n);
		printf("{\"n\": %ld, \"bytes\": %zu, \"l2_bytes\": %d, \"partition_bytes\": %d, \"fits_l2\": %s, "
		       "\"flushed_ms\": %.4f, \"hot_ms\": %.4f}\n",
		       n, 3 * bytes, l2, l2 / 2, 3 * bytes <= (size_t)l2 / 2 ? "true" : "false", cold, warm_ms);
		fflush(stdout);
		CHECK(cudaFree(a));
		CHECK(cudaFree(b));
		CHECK(cudaFree(c));
	}
	return 0;
}
