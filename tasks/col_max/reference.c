/* col_max reference: column maxima, rows visited in order. */
void col_max(const float *x, float *y, int rows, int cols)
{
	for (int j = 0; j < cols; j++) {
		float m = x[j];
		for (int r = 1; r < rows; r++)
			m = x[(long)r * cols + j] > m ? x[(long)r * cols + j] : m;
		y[j] = m;
	}
}
