// transpose baseline: 32x32 shared-memory tiles (padded against bank conflicts), coalesced both ways.
#define TILE 32

__global__ static void transpose_kernel(const float *A, float *B, int rows, int cols)
{
	__shared__ float tile[TILE][TILE + 1];
	int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
	for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y)
		if (x < cols && y0 + dy < rows)
			tile[dy][threadIdx.x] = A[(long)(y0 + dy) * cols + x];
	__syncthreads();
	int ox = blockIdx.y * TILE + threadIdx.x, oy0 = blockIdx.x * TILE;
	for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y)
		if (ox < rows && oy0 + dy < cols)
			B[(long)(oy0 + dy) * rows + ox] = tile[threadIdx.x][dy];
}

extern "C" void transpose(const float *A, float *B, int rows, int cols)
{
	dim3 block(TILE, 8), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
	transpose_kernel<<<grid, block>>>(A, B, rows, cols);
}
