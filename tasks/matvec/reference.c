/* matvec reference: y = A x, each dot product accumulated in double. */
void matvec(const float *A, const float *x, float *y, int M, int K)
{
	for (int i = 0; i < M; i++) {
		double s = 0.0;
		for (int k = 0; k < K; k++)
			s += (double)A[(long)i * K + k] * x[k];
		y[i] = (float)s;
	}
}
