// geglu baseline: one thread per output element.
__global__ static void geglu_kernel(const float *x, float *y, int rows, int d)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long)rows * d)
		return;
	long r = i / d, j = i % d;
	float g = x[r * 2 * d + j], v = x[r * 2 * d + d + j];
	y[i] = 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * v;
}

extern "C" void geglu(const float *x, float *y, int rows, int d)
{
	long n = (long)rows * d;
	geglu_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, y, rows, d);
}
