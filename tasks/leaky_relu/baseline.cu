// leaky_relu baseline: one thread per element.
__global__ static void leaky_relu_kernel(const float *x, float *y, int n, float slope)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

extern "C" void leaky_relu(const float *x, float *y, int n, float slope)
{
	leaky_relu_kernel<<<(n + 255) / 256, 256>>>(x, y, n, slope);
}
