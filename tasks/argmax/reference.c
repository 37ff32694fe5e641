/* argmax reference: first index of the row maximum. */
void argmax(const float *x, int *idx, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * cols;
		int best = 0;
		for (int j = 1; j < cols; j++)
			if (xr[j] > xr[best])
				best = j;
		idx[r] = best;
	}
}
