/* matmul_batched reference: one double-accumulated product per batch entry. */
void matmul_batched(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
	for (int b = 0; b < batch; b++) {
		const float *a = A + (long)b * M * K, *bb = B + (long)b * K * N;
		float *c = C + (long)b * M * N;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double s = 0.0;
				for (int k = 0; k < K; k++)
					s += (double)a[(long)i * K + k] * bb[(long)k * N + j];
				c[(long)i * N + j] = (float)s;
			}
	}
}
