/* conv2d reference: direct valid cross-correlation, accumulated in double. */
void conv2d(const float *x, const float *wt, float *y, int batch, int cin, int cout, int height, int width, int k)
{
	int oh = height - k + 1, ow = width - k + 1;
	for (int b = 0; b < batch; b++)
		for (int o = 0; o < cout; o++)
			for (int i = 0; i < oh; i++)
				for (int j = 0; j < ow; j++) {
					double s = 0.0;
					for (int c = 0; c < cin; c++)
						for (int p = 0; p < k; p++)
							for (int q = 0; q < k; q++)
								s += (double)x[(((long)b * cin + c) * height + i + p) * width + j + q] *
								     wt[(((long)o * cin + c) * k + p) * k + q];
					y[(((long)b * cout + o) * oh + i) * ow + j] = (float)s;
				}
}
