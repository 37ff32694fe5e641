/* conv1d reference: direct valid cross-correlation, accumulated in double. */
void conv1d(const float *x, const float *w, float *y, int batch, int cin, int cout, int len, int k)
{
	int out = len - k + 1;
	for (int b = 0; b < batch; b++)
		for (int o = 0; o < cout; o++)
			for (int t = 0; t < out; t++) {
				double s = 0.0;
				for (int c = 0; c < cin; c++)
					for (int i = 0; i < k; i++)
						s += (double)x[((long)b * cin + c) * len + t + i] * w[((long)o * cin + c) * k + i];
				y[((long)b * cout + o) * out + t] = (float)s;
			}
}
