// cumsum baseline: one block per row; chunks of 1024 are scanned in shared memory (Hillis-Steele)
// and a running carry links the chunks.
#define BLOCK 1024

__global__ static void cumsum_kernel(const float *x, float *y, int cols)
{
	__shared__ float buf[BLOCK];
	const float *xr = x + (long)blockIdx.x * cols;
	float *yr = y + (long)blockIdx.x * cols;
	float carry = 0.0f;
	for (int base = 0; base < cols; base += BLOCK) {
		int j = base + threadIdx.x;
		buf[threadIdx.x] = j < cols ? xr[j] : 0.0f;
		__syncthreads();
		for (int off = 1; off < BLOCK; off <<= 1) {
			float v = threadIdx.x >= off ? buf[threadIdx.x - off] : 0.0f;
			__syncthreads();
			buf[threadIdx.x] += v;
			__syncthreads();
		}
		if (j < cols)
			yr[j] = buf[threadIdx.x] + carry;
		carry += buf[BLOCK - 1];
		__syncthreads();
	}
}

extern "C" void cumsum(const float *x, float *y, int rows, int cols)
{
	cumsum_kernel<<<rows, BLOCK>>>(x, y, cols);
}
