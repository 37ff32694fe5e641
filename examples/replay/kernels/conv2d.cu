// conv2d baseline: one thread per output pixel, direct loops over channels and the window.
__global__ static void conv2d_kernel(const float *x, const float *wt, float *y, int batch, int cin, int cout, int height, int width, int k)
{
	int oh = height - k + 1, ow = width - k + 1;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)batch * cout * oh * ow)
		return;
	int j = (int)(idx % ow), i = (int)(idx / ow % oh), o = (int)(idx / ow / oh % cout), b = (int)(idx / ow / oh / cout);
	float s = 0.0f;
	for (int c = 0; c < cin; c++)
		for (int p = 0; p < k; p++)
			for (int q = 0; q < k; q++)
				s += x[(((long)b * cin + c) * height + i + p) * width + j + q] * wt[(((long)o * cin + c) * k + p) * k + q];
	y[idx] = s;
}

extern "C" void conv2d(const float *x, const float *wt, float *y, int batch, int cin, int cout, int height, int width, int k)
{
	long n = (long)batch * cout * (height - k + 1) * (width - k + 1);
	conv2d_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, wt, y, batch, cin, cout, height, width, k);
}
