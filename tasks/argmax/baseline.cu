// argmax baseline: one block per row, (value, index) pairs reduced in shared memory.
__global__ static void argmax_kernel(const float *x, int *idx, int cols)
{
	__shared__ float bv[256];
	__shared__ int bi[256];
	const float *xr = x + (long)blockIdx.x * cols;
	float v = xr[0];
	int i = 0;
	for (int j = threadIdx.x; j < cols; j += blockDim.x)
		if (xr[j] > v || (xr[j] == v && j < i)) {
			v = xr[j];
			i = j;
		}
	bv[threadIdx.x] = v;
	bi[threadIdx.x] = i;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			float ov = bv[threadIdx.x + s];
			int oi = bi[threadIdx.x + s];
			if (ov > bv[threadIdx.x] || (ov == bv[threadIdx.x] && oi < bi[threadIdx.x])) {
				bv[threadIdx.x] = ov;
				bi[threadIdx.x] = oi;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0)
		idx[blockIdx.x] = bi[0];
}

extern "C" void argmax(const float *x, int *idx, int rows, int cols)
{
	argmax_kernel<<<rows, 256>>>(x, idx, cols);
}
