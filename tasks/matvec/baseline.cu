// matvec baseline: one warp per row, lanes stride the row and reduce with shuffles.
__global__ static void matvec_kernel(const float *A, const float *x, float *y, int M, int K)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= M)
		return;
	float s = 0.0f;
	for (int k = lane; k < K; k += 32)
		s += A[(long)row * K + k] * x[k];
	for (int off = 16; off > 0; off >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, off);
	if (lane == 0)
		y[row] = s;
}

extern "C" void matvec(const float *A, const float *x, float *y, int M, int K)
{
	matvec_kernel<<<(M + 7) / 8, 256>>>(A, x, y, M, K);
}
