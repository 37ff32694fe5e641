"""emit.py - what an operator node needs to write itself: the C emitter (reference in double,
fixture solution in float), the CUDA emitter (the baseline) and the shared CUDA helpers.

An operator writes C through CEm: E.T is the type it accumulates and keeps intermediates in,
E.k(v) a constant of that type, E.fn("exp") the math function of that type, E.ld/E.st read an
operand and store a result (a store into the task's float output rounds once, there). The CUDA
side is float throughout, as PyTorch eager computes fp32: E.T is float there too.
"""

from .core import fmt_float, fmt_floatf

MATH = ["exp", "log", "tanh", "erf", "log1p", "expm1", "sqrt", "fabs", "fmax", "fmin", "pow", "floor"]


class CEm:
    """Emitter of the C reference (T = double) or of the fixture solution (T = float)."""

    def __init__(self, T, names, kinds, dtypes):
        self.T = T
        self.names = names  # tensor -> C identifier
        self.kinds = kinds  # tensor -> "in", "tmp", "out"
        self.dtypes = dtypes
        self.cuda = False

    def k(self, v):
        return fmt_float(v) if self.T == "double" else fmt_floatf(v)

    def fn(self, name):
        return name if self.T == "double" else name + "f"

    def buf(self, t):
        return self.names[t]

    def ld(self, t, idx):
        return "%s[%s]" % (self.names[t], idx)

    def st(self, t, idx, val):
        n = self.names[t]
        if self.kinds[t] == "out":
            if self.dtypes[t] == "int64":
                return "%s[%s] = (int64_t)(%s);" % (n, idx, val)
            return "%s[%s] = (float)(%s);" % (n, idx, val)
        return "%s[%s] = %s;" % (n, idx, val)


class CudaEm:
    """Emitter of the CUDA baseline's entry point: float device buffers."""

    def __init__(self, names, dtypes):
        self.T = "float"
        self.names = names
        self.dtypes = dtypes
        self.cuda = True

    def k(self, v):
        return fmt_floatf(v)

    def fn(self, name):
        return name + "f"

    def buf(self, t):
        return self.names[t]


# Shared pieces of the baselines, included once per file as needed (by key).

CU_GRID = r'''/* Blocks for a grid-stride loop over n items, `per` items a thread: enough to fill the GPU,
 * never more than the work needs. */
static unsigned grid_for(long n, int threads, int per)
{
	long b = (n + (long)threads * per - 1) / ((long)threads * per);
	return (unsigned)(b < 1 ? 1 : b > 65535L * 16 ? 65535L * 16 : b);
}
'''

CU_SCRATCH = r'''/* The baseline's intermediates, as PyTorch's caching allocator keeps them: one device block
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
'''

CU_BLOCKRED = r'''/* Sum of v over the block (blockDim.x a multiple of 32, at most 1024), in every thread. */
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
'''

CU_BLAS = r'''/* The cuBLAS handle, made on the first call (the referee's untimed warm-up) as a framework
 * makes it once per process. CUBLAS_DEFAULT_MATH leaves TF32 off for SGEMM, as PyTorch does by
 * default (torch.backends.cuda.matmul.allow_tf32 is False). */
static cublasHandle_t blas(void)
{
	static cublasHandle_t h;
	if (!h && (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)) {
		fprintf(stderr, "baseline: cuBLAS cannot be initialised\n");
		h = NULL;
	}
	return h;
}

/* Row-major C[b] = alpha op(A[b]) op(B[b]) + beta C[b] for b < batch: the column-major SGEMM of
 * the transposes, operands swapped. ta: A is stored K x M; tb: B is stored N x K. A batch stride
 * of 0 shares the operand across the batch. Returns 0, or -1 after a message. */
static int gemm(int ta, int tb, long M, long N, long K, float alpha, const float *A, long sa, const float *B, long sb,
		float beta, float *C, long sc, long batch)
{
	cublasHandle_t h = blas();
	if (!h)
		return -1;
	cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	int lda = (int)(ta ? M : K), ldb = (int)(tb ? K : N);
	cublasStatus_t st = batch == 1
		? cublasSgemm(h, ob, oa, (int)N, (int)M, (int)K, &alpha, B, ldb, A, lda, &beta, C, (int)N)
		: cublasSgemmStridedBatched(h, ob, oa, (int)N, (int)M, (int)K, &alpha, B, ldb, sb, A, lda, sa, &beta, C,
					    (int)N, sc, (int)batch);
	if (st != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "baseline: cuBLAS SGEMM failed (%d)\n", (int)st);
		return -1;
	}
	return 0;
}
'''

CU_DNN = r'''/* A convolution as PyTorch eager runs it through cuDNN: forward for nn.ConvNd, backward data
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
'''

CU_HELPERS = {"grid": CU_GRID, "scratch": CU_SCRATCH, "blockred": CU_BLOCKRED, "blas": CU_BLAS, "dnn": CU_DNN}
CU_ORDER = ["grid", "scratch", "blockred", "blas", "dnn"]
