// ctx.cu - the cost of a CUDA context in a fresh process (bench/gpu.sh): the first CUDA call, then a 1 MiB buffer.
// Prints "CONTEXT_MS BUFFER_MS"; exit status 1 (with the CUDA error) when a call fails.
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

static double ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static int check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	std::fprintf(stderr, "ctx: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

int main()
{
	auto t0 = std::chrono::steady_clock::now();
	if (check(cudaFree(0), "cudaFree(0)"))
		return 1;
	double ctx = ms_since(t0);
	auto t1 = std::chrono::steady_clock::now();
	void *p = nullptr;
	if (check(cudaMalloc(&p, 1 << 20), "cudaMalloc") || check(cudaMemset(p, 0, 1 << 20), "cudaMemset") ||
	    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") || check(cudaFree(p), "cudaFree"))
		return 1;
	std::printf("%.3f %.3f\n", ctx, ms_since(t1));
	return 0;
}
