// row_sum baseline: one block per row, strided partial sums and a shared-memory tree.
__global__ static void row_sum_kernel(const float *x, float *y, int cols)
{
	__shared__ float red[256];
	const float *xr = x + (long)blockIdx.x * cols;
	float s = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		s += xr[j];
	red[threadIdx.x] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			red[threadIdx.x] += red[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		y[blockIdx.x] = red[0];
}

extern "C" void row_sum(const float *x, float *y, int rows, int cols)
{
	row_sum_kernel<<<rows, 256>>>(x, y, cols);
}
