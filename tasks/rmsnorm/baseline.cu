// rmsnorm baseline: one block per row, a shared-memory reduction of the sum of squares.
__global__ static void rmsnorm_kernel(const float *x, const float *weight, float *y, int cols, float eps)
{
	__shared__ float red[256];
	const float *xr = x + (long)blockIdx.x * cols;
	float *yr = y + (long)blockIdx.x * cols;
	float s = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		s += xr[j] * xr[j];
	red[threadIdx.x] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			red[threadIdx.x] += red[threadIdx.x + k];
		__syncthreads();
	}
	float inv = rsqrtf(red[0] / cols + eps);
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		yr[j] = xr[j] * inv * weight[j];
}

extern "C" void rmsnorm(const float *x, const float *weight, float *y, int rows, int cols, float eps)
{
	rmsnorm_kernel<<<rows, 256>>>(x, weight, y, cols, eps);
}
