// histogram baseline: per-block shared-memory histograms merged with global atomics.
__global__ static void histogram_kernel(const uint8_t *data, int *counts, int n)
{
	__shared__ int local[256];
	for (int v = threadIdx.x; v < 256; v += blockDim.x)
		local[v] = 0;
	__syncthreads();
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		atomicAdd(&local[data[i]], 1);
	__syncthreads();
	for (int v = threadIdx.x; v < 256; v += blockDim.x)
		if (local[v])
			atomicAdd(&counts[v], local[v]);
}

extern "C" void histogram(const uint8_t *data, int *counts, int n)
{
	if (cudaMemset(counts, 0, 256 * sizeof(int)) != cudaSuccess)
		return;
	int blocks = (n + 255) / 256;
	histogram_kernel<<<blocks < 1024 ? blocks : 1024, 256>>>(data, counts, n);
}
