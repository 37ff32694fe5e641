// conv1d baseline: one thread per output element, direct loops over channels and taps.
__global__ static void conv1d_kernel(const float *x, const float *w, float *y, int batch, int cin, int cout, int len, int k)
{
	int out = len - k + 1;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)batch * cout * out)
		return;
	int t = (int)(idx % out), o = (int)(idx / out % cout), b = (int)(idx / out / cout);
	float s = 0.0f;
	for (int c = 0; c < cin; c++)
		for (int i = 0; i < k; i++)
			s += x[((long)b * cin + c) * len + t + i] * w[((long)o * cin + c) * k + i];
	y[idx] = s;
}

extern "C" void conv1d(const float *x, const float *w, float *y, int batch, int cin, int cout, int len, int k)
{
	long n = (long)batch * cout * (len - k + 1);
	conv1d_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, w, y, batch, cin, cout, len, k);
}
