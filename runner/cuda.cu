/* cuda.cu - the runner's cuda backend: device buffers with canary guards, event timing, L2 flush. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "backend.h"

#define GUARD 256           /* canary bytes before and after each device buffer (keeps 256-byte alignment) */
#define CANARY 0xA7

/* The backend's device state; lives for the runner's lifetime (one process, one device). */
struct rb {
	int ok;
	cudaEvent_t e0, e1;
	void *flush;            /* a buffer of twice the L2 size, written to evict the cache */
	size_t flush_bytes;
	unsigned char *guard;   /* host scratch of GUARD bytes */
};

/* Writes "what: CUDA error text (name)" into msg and returns status. */
static int fail(char *msg, int status, const char *what, cudaError_t e)
{
	snprintf(msg, LEAP_RUN_MSG, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
	return status;
}

extern "C" int rb_init(struct rb **b, const char *device, char *msg)
{
	struct rb *s = (struct rb *)calloc(1, sizeof *s);
	if (!s) {
		snprintf(msg, LEAP_RUN_MSG, "out of host memory");
		return LEAP_RUN_NOMEM;
	}
	*b = s;
	int count = 0, dev = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		snprintf(msg, LEAP_RUN_MSG, "no CUDA device available (%s)",
			 e != cudaSuccess ? cudaGetErrorString(e) : "zero devices");
		return LEAP_RUN_NO_DEVICE;
	}
	if (device && strcmp(device, "-")) {
		char *end;
		long v = strtol(device, &end, 10);
		if (*end || v < 0 || v >= count) {
			snprintf(msg, LEAP_RUN_MSG, "no CUDA device %s (%d present)", device, count);
			return LEAP_RUN_NO_DEVICE;
		}
		dev = (int)v;
	}
	if ((e = cudaSetDevice(dev)) != cudaSuccess)
		return fail(msg, LEAP_RUN_NO_DEVICE, "cudaSetDevice", e);
	if ((e = cudaFree(0)) != cudaSuccess) /* creates the context now, outside any timing */
		return fail(msg, LEAP_RUN_NO_DEVICE, "creating the CUDA context", e);
	if ((e = cudaEventCreate(&s->e0)) != cudaSuccess || (e = cudaEventCreate(&s->e1)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaEventCreate", e);
	int l2 = 0;
	if ((e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaDeviceGetAttribute", e);
	s->flush_bytes = l2 > 0 ? 2 * (size_t)l2 : 0;
	if (s->flush_bytes && (e = cudaMalloc(&s->flush, s->flush_bytes)) != cudaSuccess)
		return fail(msg, LEAP_RUN_NOMEM, "allocating the L2 flush buffer", e);
	s->guard = (unsigned char *)malloc(GUARD);
	if (!s->guard) {
		snprintf(msg, LEAP_RUN_MSG, "out of host memory");
		return LEAP_RUN_NOMEM;
	}
	cudaDeviceProp prop;
	if ((e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaGetDeviceProperties", e);
	snprintf(msg, LEAP_RUN_MSG, "%.200s", prop.name);
	s->ok = 1;
	return LEAP_RUN_OK;
}

/* A device buffer of `bytes` between two GUARD-byte canary regions. */
extern "C" void *rb_alloc(struct rb *be, uint64_t bytes)
{
	(void)be;
	unsigned char *p = NULL;
	if (bytes > SIZE_MAX - 2 * GUARD || cudaMalloc((void **)&p, (size_t)bytes + 2 * GUARD) != cudaSuccess)
		return NULL;
	if (cudaMemset(p, CANARY, GUARD) != cudaSuccess || cudaMemset(p + GUARD + bytes, CANARY, GUARD) != cudaSuccess) {
		cudaFree(p);
		return NULL;
	}
	return p + GUARD;
}

extern "C" void rb_free(struct rb *be, void *buf, uint64_t bytes)
{
	(void)be;
	(void)bytes;
	if (buf)
		cudaFree((unsigned char *)buf - GUARD);
}

/* 1 when the GUARD bytes at p (device) all hold the canary. */
static int canary_ok(struct rb *s, const unsigned char *p)
{
	if (cudaMemcpy(s->guard, p, GUARD, cudaMemcpyDeviceToHost) != cudaSuccess)
		return 0;
	for (int i = 0; i < GUARD; i++)
		if (s->guard[i] != CANARY)
			return 0;
	return 1;
}

extern "C" int rb_guard_ok(struct rb *be, const void *buf, uint64_t bytes)
{
	const unsigned char *b = (const unsigned char *)buf;
	return canary_ok(be, b - GUARD) && canary_ok(be, b + bytes);
}

extern "C" int rb_upload(struct rb *be, void *buf, const void *host, uint64_t bytes, char *msg)
{
	cudaError_t e = cudaMemcpy(buf, host, (size_t)bytes, cudaMemcpyHostToDevice);
	return e == cudaSuccess ? LEAP_RUN_OK : fail(msg, LEAP_RUN_DEVICE, "copying inputs to the device", e);
}

extern "C" int rb_download(struct rb *be, void *host, const void *buf, uint64_t bytes, char *msg)
{
	cudaError_t e = cudaMemcpy(host, buf, (size_t)bytes, cudaMemcpyDeviceToHost);
	return e == cudaSuccess ? LEAP_RUN_OK : fail(msg, LEAP_RUN_DEVICE, "copying outputs from the device", e);
}

extern "C" int rb_is_device(const struct rb *b)
{
	(void)b;
	return 1;
}

extern "C" int rb_copy(struct rb *be, void *dst, const void *src, uint64_t bytes, char *msg)
{
	cudaError_t e = cudaMemcpy(dst, src, (size_t)bytes, cudaMemcpyDeviceToDevice);
	return e == cudaSuccess ? LEAP_RUN_OK : fail(msg, LEAP_RUN_DEVICE, "restoring the inputs", e);
}

/* Writes the elsize-byte pattern into every element. */
__global__ void poison_kernel(unsigned char *buf, size_t n, uint64_t pattern, unsigned elsize)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i < n; i += stride)
		buf[i] = (unsigned char)(pattern >> (8 * (i % elsize)));
}

extern "C" int rb_poison(struct rb *be, void *buf, uint64_t bytes, const uint8_t *pattern, uint32_t elsize, char *msg)
{
	uint64_t pat = 0;
	for (uint32_t i = 0; i < elsize && i < 8; i++)
		pat |= (uint64_t)pattern[i] << (8 * i);
	poison_kernel<<<1024, 256>>>((unsigned char *)buf, (size_t)bytes, pat, elsize);
	cudaError_t e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	return e == cudaSuccess ? LEAP_RUN_OK : fail(msg, LEAP_RUN_DEVICE, "poisoning the outputs", e);
}

/* The monotonic clock in milliseconds. */
static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

extern "C" int rb_call(struct rb *be, leap_entry_fn entry, void *const *args, uint32_t flags, struct leap_run_time *t, int *code,
		       char *msg)
{
	struct rb *s = be;
	cudaError_t e;
	if ((flags & LEAP_RUN_F_FLUSH_L2) && s->flush) {
		if ((e = cudaCtxResetPersistingL2Cache()) != cudaSuccess)
			return fail(msg, LEAP_RUN_DEVICE, "resetting the persisting L2 cache", e);
		if ((e = cudaMemset(s->flush, 0x5a, s->flush_bytes)) != cudaSuccess)
			return fail(msg, LEAP_RUN_DEVICE, "flushing the L2 cache", e);
	}
	if ((e = cudaDeviceSynchronize()) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "before the call", e);
	double h0 = now_ms();
	if ((e = cudaEventRecord(s->e0, 0)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaEventRecord", e);
	int rc = entry(args);
	cudaError_t rec = cudaEventRecord(s->e1, 0);
	cudaError_t sync = cudaDeviceSynchronize();
	double h1 = now_ms();
	cudaError_t last = cudaGetLastError();
	if (rc) {
		*code = rc;
		return fail(msg, LEAP_RUN_CALL, "kernel launch failed", (cudaError_t)rc);
	}
	if (sync != cudaSuccess) {
		*code = (int)sync;
		return fail(msg, LEAP_RUN_DEVICE, "error while the kernel ran", sync);
	}
	if (last != cudaSuccess) {
		*code = (int)last;
		return fail(msg, LEAP_RUN_DEVICE, "error after the kernel", last);
	}
	if (rec != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaEventRecord", rec);
	float ms = 0;
	if ((e = cudaEventElapsedTime(&ms, s->e0, s->e1)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaEventElapsedTime", e);
	t->ms = ms;
	t->host_ms = h1 - h0;
	return LEAP_RUN_OK;
}

/* Eight independent FMA chains per thread: the FP32 pipes, not latency, bound it. */
__global__ void fma_kernel(float *out, int iters)
{
	float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
	const float m = 0.999f, c = 0.001f;
	for (int i = 0; i < iters; i++) {
		a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
		a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
	}
	float r = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
	if (r == 12345.0f) /* never: keeps the work alive */
		out[threadIdx.x] = r;
}

extern "C" int rb_probe(struct rb *be, double *copy_gbs, double *gflops, char *msg)
{
	struct rb *s = be;
	size_t n = (size_t)512 << 20;
	void *a = NULL, *b = NULL;
	cudaError_t e;
	if ((e = cudaMalloc(&a, n)) != cudaSuccess || (e = cudaMalloc(&b, n)) != cudaSuccess) {
		cudaFree(a);
		return fail(msg, LEAP_RUN_NOMEM, "allocating the probe buffers", e);
	}
	float best = INFINITY, ms = 0;
	for (int i = 0; i < 6; i++) {
		if ((e = cudaEventRecord(s->e0, 0)) != cudaSuccess ||
		    (e = cudaMemcpy(i % 2 ? a : b, i % 2 ? b : a, n, cudaMemcpyDeviceToDevice)) != cudaSuccess ||
		    (e = cudaEventRecord(s->e1, 0)) != cudaSuccess || (e = cudaEventSynchronize(s->e1)) != cudaSuccess ||
		    (e = cudaEventElapsedTime(&ms, s->e0, s->e1)) != cudaSuccess)
			break;
		if (i > 0 && ms < best)
			best = ms;
	}
	cudaFree(a);
	cudaFree(b);
	if (e != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "measuring the copy bandwidth", e);
	*copy_gbs = 2.0 * (double)n / ((double)best * 1e6);
	int dev = 0, sms = 0;
	if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
	    (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaDeviceGetAttribute", e);
	int blocks = sms * 8, threads = 256, iters = 4096;
	best = INFINITY;
	for (int i = 0; i < 4; i++) {
		if ((e = cudaEventRecord(s->e0, 0)) != cudaSuccess)
			break;
		fma_kernel<<<blocks, threads>>>((float *)s->flush, iters);
		if ((e = cudaGetLastError()) != cudaSuccess || (e = cudaEventRecord(s->e1, 0)) != cudaSuccess ||
		    (e = cudaEventSynchronize(s->e1)) != cudaSuccess || (e = cudaEventElapsedTime(&ms, s->e0, s->e1)) != cudaSuccess)
			break;
		if (i > 0 && ms < best)
			best = ms;
	}
	if (e != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "measuring the FP32 rate", e);
	*gflops = 2.0 * 8 * (double)iters * blocks * threads / ((double)best * 1e6);
	return LEAP_RUN_OK;
}
