// add_rmsnorm baseline: one block per row; update the residual, reduce the sum of squares, scale.
__global__ static void add_rmsnorm_kernel(float *x, float *res, const float *weight, int cols, float eps)
{
	__shared__ float red[256];
	long o = (long)blockIdx.x * cols;
	float s = 0.0f;
	for (int j = threadIdx.x; j < cols; j += blockDim.x) {
		float v = res[o + j] + x[o + j];
		res[o + j] = v;
		s += v * v;
	}
	red[threadIdx.x] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			red[threadIdx.x] += red[threadIdx.x + k];
		__syncthreads();
	}
	float inv = rsqrtf(red[0] / cols + eps);
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		x[o + j] = res[o + j] * inv * weight[j];
}

extern "C" void add_rmsnorm(float *x, float *res, const float *weight, int rows, int cols, float eps)
{
	add_rmsnorm_kernel<<<rows, 256>>>(x, res, weight, cols, eps);
}
