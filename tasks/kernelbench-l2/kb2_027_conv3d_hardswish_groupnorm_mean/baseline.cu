// kb2_027_conv3d_hardswish_groupnorm_mean baseline: cuDNN's convolution in fp32 (no TF32) as PyTorch eager runs it, one kernel per other operator.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cudnn.h>

/* Blocks for a grid-stride loop over n items, `per` items a thread: enough to fill the GPU,
 * never more than the work needs. */
static unsigned grid_for(long n, int threads, int per)
{
	long b = (n + (long)threads * per - 1) / ((long)threads * per);
	return (unsigned)(b < 1 ? 1 : b > 65535L * 16 ? 65535L * 16 : b);
}

/* The baseline's intermediates, as PyTorch's caching allocator keeps them: one device block
 * grown on demand and kept (the referee's untimed warm-up call makes it). NULL after a message
 * when the device has no memory left. */
static void *scratch(size_t bytes)
{
	static void *p;
	static size_t cap;
	if (bytes > cap) {
		cudaFree(p);
		p = NULL;
		cap = 0;
		if (cudaMalloc(&p, bytes) != cudaSuccess) {
			fprintf(stderr, "baseline: no device memory for %zu bytes of intermediates\n", bytes);
			return NULL;
		}
		cap = bytes;
	}
	return p;
}

/* Sum of v over the block (blockDim.x a multiple of 32, at most 1024), in every thread. */
template <typename T> __device__ static T block_sum(T v)
{
	__shared__ T part[32];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	__syncthreads();
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = v;
	__syncthreads();
	T s = 0;
	for (int i = 0; i < (int)(blockDim.x >> 5); i++)
		s += part[i];
	return s;
}

/* A convolution as PyTorch eager runs it through cuDNN: forward for nn.ConvNd, backward data
 * for nn.ConvTransposeNd (the transposed convolution is the gradient of the forward one with
 * respect to its input). The descriptors, algorithm (cuDNN's heuristics, as with
 * cudnn.benchmark off) and workspace are made on the first call of a shape, which the
 * referee's untimed warm-up makes, and kept; a call of the same shape only enqueues the
 * convolution. CUDNN_FMA_MATH keeps the arithmetic fp32 (no TF32): the baseline's outputs are
 * what every timed call is checked against, at KernelBench's fp32 tolerance. */
struct conv_plan {
	int ready, nd, dims[16];
	cudnnTensorDescriptor_t xd, yd;
	cudnnFilterDescriptor_t fd;
	cudnnConvolutionDescriptor_t cd;
	cudnnConvolutionFwdAlgo_t fwd;
	cudnnConvolutionBwdDataAlgo_t bwd;
	void *ws;
	size_t ws_size;
};

static cudnnHandle_t dnn(void)
{
	static cudnnHandle_t h;
	if (!h && cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
		fprintf(stderr, "baseline: cuDNN cannot be initialised\n");
		h = NULL;
	}
	return h;
}

/* Fully packed NC<spatial> strides of dims[0..n). */
static void packed(int n, const int *dims, int *strides)
{
	strides[n - 1] = 1;
	for (int i = n - 2; i >= 0; i--)
		strides[i] = strides[i + 1] * dims[i + 1];
}

/* Sets up plan p for input x (nb x cx x xs[]), output y (nb x cy x ys[]) and filter
 * (fk x fc x ks[]) with sp spatial dims (1 is run as 2: a height of 1), stride, padding,
 * dilation and groups; transposed: y = conv_transpose(x), run as the backward data of the
 * forward convolution from y to x. Returns 0, or -1 after a message. */
static int conv_setup(struct conv_plan *p, int transposed, int sp, int nb, int cx, const int *xs, int cy, const int *ys,
		      int fk, int fc, const int *ks, const int *st, const int *pd, const int *dl, int groups)
{
	cudnnHandle_t h = dnn();
	if (!h)
		return -1;
	int key[16] = {nb, cx, cy, fk, fc, groups}, nkey = 6;
	for (int i = 0; i < sp; i++) {
		key[nkey++] = xs[i];
		key[nkey++] = ys[i];
	}
	if (p->ready && p->nd == nkey && !memcmp(p->dims, key, sizeof(int) * (size_t)nkey))
		return 0;
	p->ready = 0;
	if (!p->xd && (cudnnCreateTensorDescriptor(&p->xd) != CUDNN_STATUS_SUCCESS ||
		       cudnnCreateTensorDescriptor(&p->yd) != CUDNN_STATUS_SUCCESS ||
		       cudnnCreateFilterDescriptor(&p->fd) != CUDNN_STATUS_SUCCESS ||
		       cudnnCreateConvolutionDescriptor(&p->cd) != CUDNN_STATUS_SUCCESS)) {
		fprintf(stderr, "baseline: cuDNN descriptors cannot be made\n");
		return -1;
	}
	int n = sp < 2 ? 2 : sp, off = n - sp;
	int xd[5] = {nb, cx, 1, 1, 1}, yd[5] = {nb, cy, 1, 1, 1}, fd[5] = {fk, fc, 1, 1, 1}, xst[5], yst[5];
	int cst[3] = {1, 1, 1}, cpd[3] = {0, 0, 0}, cdl[3] = {1, 1, 1};
	for (int i = 0; i < sp; i++) {
		xd[2 + off + i] = xs[i];
		yd[2 + off + i] = ys[i];
		fd[2 + off + i] = ks[i];
		cst[off + i] = st[i];
		cpd[off + i] = pd[i];
		cdl[off + i] = dl[i];
	}
	packed(n + 2, xd, xst);
	packed(n + 2, yd, yst);
	/* x is the convolution's input; for a transposed one it is the gradient dy of the forward
	 * convolution from y, and y its dx */
	if (cudnnSetTensorNdDescriptor(p->xd, CUDNN_DATA_FLOAT, n + 2, xd, xst) != CUDNN_STATUS_SUCCESS ||
	    cudnnSetTensorNdDescriptor(p->yd, CUDNN_DATA_FLOAT, n + 2, yd, yst) != CUDNN_STATUS_SUCCESS ||
	    cudnnSetFilterNdDescriptor(p->fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, n + 2, fd) != CUDNN_STATUS_SUCCESS ||
	    cudnnSetConvolutionNdDescriptor(p->cd, n, cpd, cst, cdl, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) !=
		    CUDNN_STATUS_SUCCESS ||
	    cudnnSetConvolutionGroupCount(p->cd, groups) != CUDNN_STATUS_SUCCESS ||
	    cudnnSetConvolutionMathType(p->cd, CUDNN_FMA_MATH) != CUDNN_STATUS_SUCCESS) {
		fprintf(stderr, "baseline: cuDNN rejects the convolution's shape\n");
		return -1;
	}
	size_t need = 0;
	int got = 0, i = 0;
	if (!transposed) {
		cudnnConvolutionFwdAlgoPerf_t perf[8];
		if (cudnnGetConvolutionForwardAlgorithm_v7(h, p->xd, p->fd, p->cd, p->yd, 8, &got, perf) != CUDNN_STATUS_SUCCESS)
			got = 0;
		while (i < got && perf[i].status != CUDNN_STATUS_SUCCESS)
			i++;
		if (i == got || cudnnGetConvolutionForwardWorkspaceSize(h, p->xd, p->fd, p->cd, p->yd, perf[i].algo, &need) !=
					CUDNN_STATUS_SUCCESS) {
			fprintf(stderr, "baseline: cuDNN has no forward algorithm for the shape\n");
			return -1;
		}
		p->fwd = perf[i].algo;
	} else {
		cudnnConvolutionBwdDataAlgoPerf_t perf[8];
		if (cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p->fd, p->xd, p->cd, p->yd, 8, &got, perf) !=
		    CUDNN_STATUS_SUCCESS)
			got = 0;
		while (i < got && perf[i].status != CUDNN_STATUS_SUCCESS)
			i++;
		if (i == got || cudnnGetConvolutionBackwardDataWorkspaceSize(h, p->fd, p->xd, p->cd, p->yd, perf[i].algo,
									     &need) != CUDNN_STATUS_SUCCESS) {
			fprintf(stderr, "baseline: cuDNN has no backward-data algorithm for the shape\n");
			return -1;
		}
		p->bwd = perf[i].algo;
	}
	if (need > p->ws_size) {
		cudaFree(p->ws);
		p->ws = NULL;
		p->ws_size = 0;
		if (cudaMalloc(&p->ws, need) != cudaSuccess) {
			fprintf(stderr, "baseline: no device memory for cuDNN's workspace\n");
			return -1;
		}
		p->ws_size = need;
	}
	memcpy(p->dims, key, sizeof(int) * (size_t)nkey);
	p->nd = nkey;
	p->ready = 1;
	return 0;
}

/* Runs plan p: y = conv(x, w) or y = conv_transpose(x, w). Returns 0, or -1 after a message. */
static int conv_run(struct conv_plan *p, int transposed, const float *x, const float *w, float *y)
{
	const float one = 1.0f, zero = 0.0f;
	cudnnStatus_t s = transposed
		? cudnnConvolutionBackwardData(dnn(), &one, p->fd, w, p->xd, x, p->cd, p->bwd, p->ws, p->ws_size, &zero, p->yd, y)
		: cudnnConvolutionForward(dnn(), &one, p->xd, x, p->fd, w, p->cd, p->fwd, p->ws, p->ws_size, &zero, p->yd, y);
	if (s != CUDNN_STATUS_SUCCESS) {
		fprintf(stderr, "baseline: cuDNN convolution failed (%d)\n", (int)s);
		return -1;
	}
	return 0;
}

/* y[n][c][...] += bias[c]: the convolution's bias, added as eager adds it after cuDNN. */
__global__ static void channel_bias(float *__restrict__ y, const float *__restrict__ bias, long n, long C, long S)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		y[i] += bias[i / S % C];
}

__device__ static __forceinline__ float f1(float v)
{
	return v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f;
}

/* y = f1(x) elementwise: a grid-stride loop, four elements a thread a step where both
 * pointers are 16-byte aligned. */
__global__ static void k1(const float *__restrict__ x, float *__restrict__ y, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x, step = (long)gridDim.x * blockDim.x;
	long n4 = (size_t)x % 16 == 0 && (size_t)y % 16 == 0 ? n / 4 : 0;
	for (long j = i; j < n4; j += step) {
		float4 a = ((const float4 *)x)[j];
		a.x = f1(a.x);
		a.y = f1(a.y);
		a.z = f1(a.z);
		a.w = f1(a.w);
		((float4 *)y)[j] = a;
	}
	for (long j = 4 * n4 + i; j < n; j += step)
		y[j] = f1(x[j]);
}

/* Partial sums of group g = blockIdx.x over its chunk blockIdx.y of P: part[g][p] = (sum,
 * sum of squares), in double. (Groups on x: there may be millions, past gridDim.y's 65535.) */
__global__ static void gstats_part(const float *__restrict__ x, double2 *__restrict__ part, long A, long G, long B, long chunk)
{
	const long g = blockIdx.x, n = A * B, e0 = (long)blockIdx.y * chunk;
	const long e1 = e0 + chunk < n ? e0 + chunk : n;
	double s = 0, q = 0;
	for (long e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
		double v = x[(e / B * G + g) * B + e % B];
		s += v;
		q += v * v;
	}
	s = block_sum(s);
	q = block_sum(q);
	if (threadIdx.x == 0)
		part[g * gridDim.y + blockIdx.y] = make_double2(s, q);
}

/* One thread per group: the mean and 1 / sqrt(variance + eps) from the partial sums. */
__global__ static void gstats_final(const double2 *__restrict__ part, float2 *__restrict__ st, long G, int P, long n, double eps)
{
	for (long g = (long)blockIdx.x * blockDim.x + threadIdx.x; g < G; g += (long)gridDim.x * blockDim.x) {
		double s = 0, q = 0;
		for (int p = 0; p < P; p++) {
			s += part[g * P + p].x;
			q += part[g * P + p].y;
		}
		double mean = s / n, var = q / n - mean * mean;
		st[g] = make_float2((float)mean, (float)(1.0 / sqrt((var > 0 ? var : 0) + eps)));
	}
}

/* P, the blocks a group's sums are split into: enough blocks to fill the GPU, at least 2048
 * elements a block, at most 64. */
static int gstats_split(long G, long n)
{
	long p = (2048 + G - 1) / G, most = (n + 2047) / 2048;
	p = p < most ? p : most;
	return (int)(p < 1 ? 1 : p > 64 ? 64 : p);
}

/* y = (x - mean) * rstd * w + b (the channel's) elementwise, the statistics of element i's group. */
__global__ static void k2(const float *__restrict__ x, const float2 *__restrict__ st, const float *__restrict__ w,
			    const float *__restrict__ bb, float *__restrict__ y, long n, long G, long B, long p1, long p2, long p3)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		const long g = i / B % G;
		const float2 m = st[g];
		y[i] = (x[i] - m.x) * m.y * w[(g % p1) * p2 + i % B / p3] + bb[(g % p1) * p2 + i % B / p3];
	}
}

/* Combines (acc, idx) over the block (sum: 1 adds, else the operator's own merge); the
 * result in every thread. */
__device__ static float red3(float acc, long *pidx, int sum)
{
	__shared__ float sa[32];
	__shared__ long si[32];
	long idx = *pidx;
	for (int o = 16; o > 0; o >>= 1) {
		float a2 = __shfl_xor_sync(0xffffffffu, acc, o);
		if (sum) {
			acc += a2;
		} else {
			acc += a2;
		}
	}
	__syncthreads();
	if ((threadIdx.x & 31) == 0) {
		sa[threadIdx.x >> 5] = acc;
		si[threadIdx.x >> 5] = idx;
	}
	__syncthreads();
	acc = sa[0];
	idx = si[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++) {
		float a2 = sa[w];
		if (sum) {
			acc += a2;
		} else {
			acc += a2;
		}
	}
	*pidx = idx;
	return acc;
}

/* One block per row of a reduction over contiguous elements (I == 1). */
__global__ static void k3r(const float *__restrict__ x, float *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float acc = 0.0f;
	long idx = 0;
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		acc += v;
	}
	acc = red3(acc, &idx, 0);
	if (threadIdx.x == 0)
		y[blockIdx.x] = acc / (float)R;
}

/* One thread per (o, i) of a reduction over a strided axis (I > 1): neighbouring threads read
 * neighbouring elements. */
__global__ static void k3c(const float *__restrict__ x, float *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		const float *xp = x + t / I * R * I + t % I;
		float acc = 0.0f;
		for (long r = 0; r < R; r++) {
			float v = xp[r * I];
			acc += v;
		}
		y[t] = acc / (float)R;
	}
}

extern "C" void kb_conv3d_hardswish_groupnorm_mean(const float *x, const float *weight, const float *bias, const float *gn_weight, const float *gn_bias, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_c = depth - 4 + 1;
	const long height_c = height - 4 + 1;
	const long width_c = width - 4 + 1;
	char *work = (char *)scratch(((4 * (long)batch_size * out_channels * depth_c * height_c * width_c + 255) & ~255L) + ((4 * (long)batch_size * out_channels * depth_c * height_c * width_c + 255) & ~255L) + ((4 * (long)batch_size * out_channels * depth_c * height_c * width_c + 255) & ~255L) + ((16L * (long)batch_size * 4 * 64 + 8L * (long)batch_size * 4 + 255) & ~255L));
	if (!work) {
		return;
	}
	float *t1 = (float *)(work);
	float *t2 = (float *)((char *)t1 + ((4 * (long)batch_size * out_channels * depth_c * height_c * width_c + 255) & ~255L));
	float *t3 = (float *)((char *)t2 + ((4 * (long)batch_size * out_channels * depth_c * height_c * width_c + 255) & ~255L));
	void *ws2 = (char *)t3 + ((4 * (long)batch_size * out_channels * depth_c * height_c * width_c + 255) & ~255L);
	{
		static struct conv_plan plan[2]; /* the batch's chunks, and the last one when shorter */
		const int xs[] = {(int)depth, (int)height, (int)width}, ys[] = {(int)depth_c, (int)height_c, (int)width_c}, ks[] = {4, 4, 4}, st[] = {1, 1, 1}, pd[] = {0, 0, 0}, dl[] = {1, 1, 1};
		const long xper = (long)in_channels * depth * height * width, yper = (long)out_channels * depth_c * height_c * width_c;
		const long most = 2147483647L / (xper > yper ? xper : yper);
		const int ng = (int)(1), nb = batch_size, chunk = (int)(nb < most ? nb : most < 1 ? 1 : most);
		for (int b0 = 0; b0 < nb; b0 += chunk) {
			const int m = nb - b0 < chunk ? nb - b0 : chunk;
			struct conv_plan *p = &plan[m != chunk];
			if (conv_setup(p, 0, 3, m, in_channels, xs, out_channels, ys, out_channels, in_channels / ng, ks, st, pd, dl, ng) ||
			    conv_run(p, 0, x + b0 * xper, weight, t1 + b0 * yper))
				return;
		}
		channel_bias<<<grid_for((long)batch_size * out_channels * depth_c * height_c * width_c, 256, 1), 256>>>(t1, bias, (long)batch_size * out_channels * depth_c * height_c * width_c, out_channels, (long)depth_c * height_c * width_c);
	}
	k1<<<grid_for((long)batch_size * out_channels * depth_c * height_c * width_c, 256, 4), 256>>>(t1, t2, (long)batch_size * out_channels * depth_c * height_c * width_c);
	{
		const long A = 1L, G = (long)batch_size * 4, B = (out_channels / 4) * (long)depth_c * height_c * width_c, n = A * G * B;
		const int P = gstats_split(G, A * B);
		double2 *part = (double2 *)ws2;
		float2 *st = (float2 *)(part + G * 64);
		gstats_part<<<dim3((unsigned)G, P), 256>>>(t2, part, A, G, B, (A * B + P - 1) / P);
		gstats_final<<<grid_for(G, 128, 1), 128>>>(part, st, G, P, A * B, 1e-05);
		k2<<<grid_for(n, 256, 1), 256>>>(t2, st, gn_weight, gn_bias, t3, n, G, B, 4, (out_channels / 4), (long)depth_c * height_c * width_c);
	}
	{
		const long O = (long)batch_size * out_channels, R = (long)depth_c * height_c * width_c, I = 1L;
		if (I == 1) {
			k3r<<<(unsigned)O, R >= 16384 ? 1024 : 256>>>(t3, y, R);
		} else {
			k3c<<<grid_for(O * I, 256, 1), 256>>>(t3, y, O, R, I);
		}
	}
}
