// swiglu baseline: one thread per element.
__global__ static void swiglu_kernel(const float *gate, const float *up, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float g = gate[i];
		y[i] = g / (1.0f + expf(-g)) * up[i];
	}
}

extern "C" void swiglu(const float *gate, const float *up, float *y, int n)
{
	swiglu_kernel<<<(n + 255) / 256, 256>>>(gate, up, y, n);
}
