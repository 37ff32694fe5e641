/* row_sum reference: each row summed in double. */
void row_sum(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		double s = 0.0;
		for (int j = 0; j < cols; j++)
			s += x[(long)r * cols + j];
		y[r] = (float)s;
	}
}
