// vector_add baseline: one thread per element.
__global__ static void add_kernel(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float *a, const float *b, float *c, int n)
{
	add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
