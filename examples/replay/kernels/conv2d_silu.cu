// conv2d_silu baseline: one thread per output pixel, bias and SiLU fused after the window loop.
__global__ static void conv2d_silu_kernel(const float *x, const float *wt, const float *bias, float *y, int batch, int cin,
					  int cout, int height, int width, int k)
{
	int oh = height - k + 1, ow = width - k + 1;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)batch * cout * oh * ow)
		return;
	int j = (int)(idx % ow), i = (int)(idx / ow % oh), o = (int)(idx / ow / oh % cout), b = (int)(idx / ow / oh / cout);
	float s = bias[o];
	for (int c = 0; c < cin; c++)
		for (int p = 0; p < k; p++)
			for (int q = 0; q < k; q++)
				s += x[(((long)b * cin + c) * height + i + p) * width + j + q] * wt[(((long)o * cin + c) * k + p) * k + q];
	y[idx] = s / (1.0f + expf(-s));
}

extern "C" void conv2d_silu(const float *x, const float *wt, const float *bias, float *y, int batch, int cin, int cout,
			    int height, int width, int k)
{
	long n = (long)batch * cout * (height - k + 1) * (width - k + 1);
	conv2d_silu_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, wt, bias, y, batch, cin, cout, height, width, k);
}
