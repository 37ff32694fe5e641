/* matmul reference: C = A * B for square row-major matrices, accumulated in double. */
void matmul(const float *A, const float *B, float *C, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0.0;
			for (int k = 0; k < n; k++)
				s += (double)A[(long)i * n + k] * B[(long)k * n + j];
			C[(long)i * n + j] = (float)s;
		}
}
