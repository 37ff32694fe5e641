// matmul: one thread per output element, BLOCK x BLOCK threads per block.
#define BLOCK 16

__global__ void mm(const float *A, const float *B, float *C, int n)
{
	int r = blockIdx.y * BLOCK + threadIdx.y, c = blockIdx.x * BLOCK + threadIdx.x;
	if (r >= n || c >= n)
		return;
	float acc = 0.f;
	for (int k = 0; k < n; k++)
		acc += A[(size_t)r * n + k] * B[(size_t)k * n + c];
	C[(size_t)r * n + c] = acc;
}

extern "C" void matmul(const float *A, const float *B, float *C, int n)
{
	dim3 block(BLOCK, BLOCK), grid((n + BLOCK - 1) / BLOCK, (n + BLOCK - 1) / BLOCK);
	mm<<<grid, block>>>(A, B, C, n);
}
