/* leaky_relu reference: x where positive, slope * x elsewhere. */
void leaky_relu(const float *x, float *y, int n, float slope)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i] > 0.0f ? x[i] : (float)((double)slope * x[i]);
}
