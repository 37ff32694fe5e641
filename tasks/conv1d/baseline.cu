// conv1d baseline: cuDNN's forward convolution in fp32 (no TF32), as PyTorch eager runs torch.nn.Conv1d.
#include <stdio.h>
#include <string.h>
#include <cudnn.h>

/* A valid (unpadded, stride 1) NCHW cross-correlation as cuDNN runs it for PyTorch eager: the
 * handle, descriptors, algorithm (cuDNN's heuristics, as with cudnn.benchmark off) and workspace
 * are set up on the first call of a shape, which the referee's untimed warm-up makes, and kept;
 * a call of the same shape only enqueues cudnnConvolutionForward. CUDNN_FMA_MATH keeps the
 * arithmetic fp32 (no TF32), as the cuBLAS baselines. Returns 0, or -1 after a message. */
static int conv_forward(const char *who, const float *x, const float *w, float *y, int n, int c, int k, int h, int wd, int kh,
			int kw)
{
	static cudnnHandle_t dnn;
	static cudnnTensorDescriptor_t xd, yd;
	static cudnnFilterDescriptor_t fd;
	static cudnnConvolutionDescriptor_t cd;
	static cudnnConvolutionFwdAlgo_t algo;
	static void *ws;
	static size_t ws_cap, ws_size;
	static int shape[7], ready;
	int now[7] = {n, c, k, h, wd, kh, kw};
	if (!dnn && (cudnnCreate(&dnn) != CUDNN_STATUS_SUCCESS || cudnnCreateTensorDescriptor(&xd) != CUDNN_STATUS_SUCCESS ||
		     cudnnCreateTensorDescriptor(&yd) != CUDNN_STATUS_SUCCESS || cudnnCreateFilterDescriptor(&fd) != CUDNN_STATUS_SUCCESS ||
		     cudnnCreateConvolutionDescriptor(&cd) != CUDNN_STATUS_SUCCESS)) {
		fprintf(stderr, "%s baseline: cuDNN cannot be initialised\n", who);
		dnn = NULL;
		return -1;
	}
	if (!ready || memcmp(shape, now, sizeof now)) {
		ready = 0;
		cudnnConvolutionFwdAlgoPerf_t perf[8];
		int got = 0;
		if (cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, wd) != CUDNN_STATUS_SUCCESS ||
		    cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, h - kh + 1, wd - kw + 1) != CUDNN_STATUS_SUCCESS ||
		    cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, kh, kw) != CUDNN_STATUS_SUCCESS ||
		    cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) != CUDNN_STATUS_SUCCESS ||
		    cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH) != CUDNN_STATUS_SUCCESS ||
		    cudnnGetConvolutionForwardAlgorithm_v7(dnn, xd, fd, cd, yd, 8, &got, perf) != CUDNN_STATUS_SUCCESS) {
			fprintf(stderr, "%s baseline: cuDNN rejects the shape\n", who);
			return -1;
		}
		int i = 0;
		while (i < got && perf[i].status != CUDNN_STATUS_SUCCESS)
			i++;
		if (i == got || cudnnGetConvolutionForwardWorkspaceSize(dnn, xd, fd, cd, yd, perf[i].algo, &ws_size) != CUDNN_STATUS_SUCCESS) {
			fprintf(stderr, "%s baseline: cuDNN has no algorithm for the shape\n", who);
			return -1;
		}
		algo = perf[i].algo;
		if (ws_size > ws_cap) {
			cudaFree(ws);
			ws = NULL;
			ws_cap = 0;
			if (cudaMalloc(&ws, ws_size) != cudaSuccess) {
				fprintf(stderr, "%s baseline: no memory for cuDNN's workspace\n", who);
				return -1;
			}
			ws_cap = ws_size;
		}
		memcpy(shape, now, sizeof now);
		ready = 1;
	}
	const float one = 1.0f, zero = 0.0f;
	if (cudnnConvolutionForward(dnn, &one, xd, x, fd, w, cd, algo, ws, ws_size, &zero, yd, y) != CUDNN_STATUS_SUCCESS) {
		fprintf(stderr, "%s baseline: cudnnConvolutionForward failed\n", who);
		return -1;
	}
	return 0;
}

extern "C" void conv1d(const float *x, const float *w, float *y, int batch, int cin, int cout, int len, int k)
{
	/* a signal is an image of height 1, as PyTorch hands Conv1d to cuDNN */
	conv_forward("conv1d", x, w, y, batch, cin, cout, 1, len, 1, k);
}
