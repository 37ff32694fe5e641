/* cumsum reference: running sum per row in double. */
void cumsum(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		double s = 0.0;
		for (int j = 0; j < cols; j++) {
			s += x[(long)r * cols + j];
			y[(long)r * cols + j] = (float)s;
		}
	}
}
