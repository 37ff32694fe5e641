// silu baseline: one thread per element.
__global__ static void silu_kernel(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
		y[i] = v / (1.0f + expf(-v));
	}
}

extern "C" void silu(const float *x, float *y, int n)
{
	silu_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}
