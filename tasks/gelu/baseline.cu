// gelu baseline: one thread per element, erff from the CUDA math library.
__global__ static void gelu_kernel(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
		y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
}

extern "C" void gelu(const float *x, float *y, int n)
{
	gelu_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}
