/* transpose reference: B[j][i] = A[i][j]. */
void transpose(const float *A, float *B, int rows, int cols)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++)
			B[(long)j * rows + i] = A[(long)i * cols + j];
}
