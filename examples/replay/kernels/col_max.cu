// col_max baseline: one thread per column walks down the rows (coalesced across threads).
#include <math.h>

__global__ static void col_max_kernel(const float *x, float *y, int rows, int cols)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= cols)
		return;
	float m = -INFINITY;
	for (int r = 0; r < rows; r++)
		m = fmaxf(m, x[(long)r * cols + j]);
	y[j] = m;
}

extern "C" void col_max(const float *x, float *y, int rows, int cols)
{
	col_max_kernel<<<(cols + 255) / 256, 256>>>(x, y, rows, cols);
}
