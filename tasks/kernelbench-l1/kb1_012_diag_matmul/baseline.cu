// kb1_012_diag_matmul baseline: one hand-written kernel per torch operator, as PyTorch eager runs the sequence (no fusion).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Blocks for a grid-stride loop over n items, `per` items a thread: enough to fill the GPU,
 * never more than the work needs. */
static unsigned grid_for(long n, int threads, int per)
{
	long b = (n + (long)threads * per - 1) / ((long)threads * per);
	return (unsigned)(b < 1 ? 1 : b > 65535L * 16 ? 65535L * 16 : b);
}

/* The output's dims and, per dim, each operand's stride (0 where it broadcasts). */
struct bshape {
	int nd;
	long n[6], sa[6], sb[6];
};

/* Fills s for an output of nd dims n[] from operand shapes na[] and nb[] (same rank, 1 where
 * an operand broadcasts). */
static struct bshape bshape_of(int nd, const long *n, const long *na, const long *nb)
{
	struct bshape s;
	long ra = 1, rb = 1;
	s.nd = nd;
	for (int d = nd - 1; d >= 0; d--) {
		s.n[d] = n[d];
		s.sa[d] = na[d] == 1 ? 0 : ra;
		s.sb[d] = nb[d] == 1 ? 0 : rb;
		ra *= na[d];
		rb *= nb[d];
	}
	return s;
}

/* y = a mul b with broadcasting: each output index mapped to the operands' indices. */
__global__ static void k1(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ y, struct bshape s, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		long r = i, ia = 0, ib = 0;
		for (int d = s.nd - 1; d >= 0; d--) {
			long c = r % s.n[d];
			r /= s.n[d];
			ia += c * s.sa[d];
			ib += c * s.sb[d];
		}
		float a = A[ia], b = B[ib];
		y[i] = a * b;
	}
}

extern "C" void kb_diag_matmul(const float *A, const float *B, float *C, int N, int M)
{
	const float *v1 = A;
	{
		const long n1[] = {N, M}, na1[] = {N, 1}, nb1[] = {N, M};
		k1<<<grid_for((long)N * M, 256, 1), 256>>>(v1, B, C, bshape_of(2, n1, na1, nb1), (long)N * M);
	}
}
