// vector_add: one element per thread with launch bounds and read-only loads.
#define BLOCK 512

__global__ void __launch_bounds__(BLOCK) vadd(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;
	if (i < n)
		c[i] = __ldg(a + i) + __ldg(b + i);
}

extern "C" void vector_add(const float *a, const float *b, float *c, int n)
{
	vadd<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, b, c, n);
}
