/* matmul_rect reference: C = A B for row-major M x K and K x N matrices, accumulated in double. */
void matmul_rect(const float *A, const float *B, float *C, int M, int N, int K)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0.0;
			for (int k = 0; k < K; k++)
				s += (double)A[(long)i * K + k] * B[(long)k * N + j];
			C[(long)i * N + j] = (float)s;
		}
}
