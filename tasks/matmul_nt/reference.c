/* matmul_nt reference: C = A B^T, dot products of rows accumulated in double. */
void matmul_nt(const float *A, const float *B, float *C, int M, int N, int K)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0.0;
			for (int k = 0; k < K; k++)
				s += (double)A[(long)i * K + k] * B[(long)j * K + k];
			C[(long)i * N + j] = (float)s;
		}
}
