// kb1_073_conv_transpose3d_strided_grouped baseline: cuDNN's convolution in fp32 (no TF32) as PyTorch eager runs it, one kernel per other operator.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cudnn.h>

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

extern "C" void kb_conv_transpose3d_strided_grouped(const float *x, const float *weight, float *y, int batch_size, int in_channels, int out_channels, int depth, int height, int width)
{
	const long depth_out = (depth - 1) * 2 + 1;
	const long height_out = (height - 1) * 2 + 1;
	const long width_out = (width - 1) * 2 + 1;
	{
		static struct conv_plan plan[2]; /* the batch's chunks, and the last one when shorter */
		const int xs[] = {(int)depth, (int)height, (int)width}, ys[] = {(int)depth_out, (int)height_out, (int)width_out}, ks[] = {3, 3, 3}, st[] = {2, 2, 2}, pd[] = {1, 1, 1}, dl[] = {1, 1, 1};
		const long xper = (long)in_channels * depth * height * width, yper = (long)out_channels * depth_out * height_out * width_out;
		const long most = 2147483647L / (xper > yper ? xper : yper);
		const int ng = (int)(1), nb = batch_size, chunk = (int)(nb < most ? nb : most < 1 ? 1 : most);
		for (int b0 = 0; b0 < nb; b0 += chunk) {
			const int m = nb - b0 < chunk ? nb - b0 : chunk;
			struct conv_plan *p = &plan[m != chunk];
			if (conv_setup(p, 1, 3, m, in_channels, xs, out_channels, ys, in_channels, out_channels / ng, ks, st, pd, dl, ng) ||
			    conv_run(p, 1, x + b0 * xper, weight, y + b0 * yper))
				return;
		}
	}
}
