// add_layernorm baseline: one block per row; the sum is written and kept in registers for both passes.
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

__global__ static void add_layernorm_kernel(const float *x, const float *res, const float *gamma, const float *beta, float *h,
					    float *y, int cols, float eps)
{
	__shared__ float red[256];
	long o = (long)blockIdx.x * cols;
	float s = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x) {
		float v = x[o + j] + res[o + j];
		h[o + j] = v;
		s += v;
	}
	float mean = block_sum(s, red) / cols;
	float q = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		q += (h[o + j] - mean) * (h[o + j] - mean);
	float inv = rsqrtf(block_sum(q, red) / cols + eps);
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		y[o + j] = (h[o + j] - mean) * inv * gamma[j] + beta[j];
}

extern "C" void add_layernorm(const float *x, const float *res, const float *gamma, const float *beta, float *h, float *y,
			      int rows, int cols, float eps)
{
	add_layernorm_kernel<<<rows, 256>>>(x, res, gamma, beta, h, y, cols, eps);
}
