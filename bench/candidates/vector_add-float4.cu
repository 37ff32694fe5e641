// vector_add: float4 loads and stores, scalar tail.
#define BLOCK 256

__global__ void vadd4(const float4 *__restrict__ a, const float4 *__restrict__ b, float4 *__restrict__ c, int n4)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n4) {
		float4 x = a[i], y = b[i];
		c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
	}
}

__global__ void vadd_tail(const float *a, const float *b, float *c, int start, int n)
{
	int i = start + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float *a, const float *b, float *c, int n)
{
	int n4 = n / 4;
	if (n4 > 0)
		vadd4<<<(n4 + BLOCK - 1) / BLOCK, BLOCK>>>((const float4 *)a, (const float4 *)b, (float4 *)c, n4);
	if (n % 4)
		vadd_tail<<<1, 4>>>(a, b, c, n4 * 4, n);
}
