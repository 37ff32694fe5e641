// layernorm baseline: one block per row, block reductions for the mean and the variance.
__device__ static float block_sum(float v, float *red)
{
	red[threadIdx.x] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	float r = red[0];
	__syncthreads();
	return r;
}

__global__ static void layernorm_kernel(const float *x, const float *gamma, const float *beta, float *y, int cols, float eps)
{
	__shared__ float red[256];
	const float *xr = x + (long)blockIdx.x * cols;
	float *yr = y + (long)blockIdx.x * cols;
	float s = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		s += xr[j];
	float mean = block_sum(s, red) / cols;
	float v = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		v += (xr[j] - mean) * (xr[j] - mean);
	float inv = rsqrtf(block_sum(v, red) / cols + eps);
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		yr[j] = (xr[j] - mean) * inv * gamma[j] + beta[j];
}

extern "C" void layernorm(const float *x, const float *gamma, const float *beta, float *y, int rows, int cols, float eps)
{
	layernorm_kernel<<<rows, 256>>>(x, gamma, beta, y, cols, eps);
}
