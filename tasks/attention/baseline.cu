// attention baseline: one block per (head, query row); scores for 128 keys at a time, online softmax,
// output accumulated in shared memory (no score matrix in global memory).
#include <math.h>

#define THREADS 128

__global__ static void attention_kernel(const float *q, const float *k, const float *v, float *o, int seq, int dim, float scale)
{
	extern __shared__ float acc[]; /* dim floats */
	__shared__ float p[THREADS], red[THREADS];
	int row = blockIdx.x, tid = threadIdx.x;
	long base = (long)blockIdx.y * seq * dim;
	const float *qr = q + base + (long)row * dim;
	int n = seq;
	for (int d = tid; d < dim; d += THREADS)
		acc[d] = 0.0f;
	float m = -INFINITY, l = 0.0f;
	for (int j0 = 0; j0 < n; j0 += THREADS) {
		int j = j0 + tid;
		float s = -INFINITY;
		if (j < n) {
			s = 0.0f;
			for (int d = 0; d < dim; d++)
				s += qr[d] * k[base + (long)j * dim + d];
			s *= scale;
		}
		red[tid] = s;
		__syncthreads();
		for (int w = THREADS / 2; w > 0; w >>= 1) {
			if (tid < w)
				red[tid] = fmaxf(red[tid], red[tid + w]);
			__syncthreads();
		}
		float mn = fmaxf(m, red[0]);
		__syncthreads();
		float pj = j < n ? expf(s - mn) : 0.0f;
		p[tid] = pj;
		red[tid] = pj;
		__syncthreads();
		for (int w = THREADS / 2; w > 0; w >>= 1) {
			if (tid < w)
				red[tid] += red[tid + w];
			__syncthreads();
		}
		float corr = expf(m - mn);
		l = l * corr + red[0];
		int cnt = n - j0 < THREADS ? n - j0 : THREADS;
		for (int d = tid; d < dim; d += THREADS) {
			float a = acc[d] * corr;
			for (int t = 0; t < cnt; t++)
				a += p[t] * v[base + (long)(j0 + t) * dim + d];
			acc[d] = a;
		}
		m = mn;
		__syncthreads();
	}
	for (int d = tid; d < dim; d += THREADS)
		o[base + (long)row * dim + d] = acc[d] / l;
}

extern "C" void attention(const float *q, const float *k, const float *v, float *o, int bh, int seq, int dim)
{
	dim3 grid(seq, bh);
	attention_kernel<<<grid, THREADS, dim * sizeof(float)>>>(q, k, v, o, seq, dim, 1.0f / sqrtf((float)dim));
}
