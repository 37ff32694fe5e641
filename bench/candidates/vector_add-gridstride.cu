// vector_add: grid-stride loop, BLOCK threads per block.
#define BLOCK 256

__global__ void vadd_kernel(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float *a, const float *b, float *c, int n)
{
	int blocks = (n + BLOCK - 1) / BLOCK;
	if (blocks > 65535)
		blocks = 65535;
	vadd_kernel<<<blocks, BLOCK>>>(a, b, c, n);
}
