/* holdctx.c - holds a CUDA context open on device 0 for the length of a check-gpu run.
 *
 * With persistence mode off the driver tears the GPU's state down whenever its last client
 * closes, and the next process's first CUDA call pays for bringing it up again (seconds): every
 * runner of check-gpu's steps would pay it. A process that holds a context keeps the driver
 * initialised without changing any device setting (persistence mode needs root and stays after
 * the run; this ends with it). It retains the primary context of device 0, which initialises
 * it, prints one line "holdctx: holding a context on device 0 (NAME) since N ms", and sleeps
 * until it is killed, its parent dies (PR_SET_PDEATHSIG) or SECONDS pass. The driver's entry
 * points are looked up at run time (dlopen), so that it builds without nvcc, like
 * tests/gpu/probe.c, and fails at once, saying why, where there is no driver.
 *
 * usage: holdctx SECONDS   (make gpu-tools; tests/gpu/check-gpu.sh starts it)
 * Exit status 0 when SECONDS passed, 1 when no context could be had (the reason on stdout, one
 * line "holdctx: ..."), 2 on a usage error. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

typedef int cu_result; /* CUresult: 0 is CUDA_SUCCESS */

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Says why no context is held, with the driver's own words for R where it has them. */
static int fail(void *h, const char *what, cu_result r)
{
	const char *s = NULL;
	cu_result (*str)(cu_result, const char **) = h ? (cu_result(*)(cu_result, const char **))dlsym(h, "cuGetErrorString") : NULL;
	if (str && str(r, &s) != 0)
		s = NULL;
	printf("holdctx: %s failed: %s (%d)\n", what, s ? s : "unknown error", r);
	return 1;
}

int main(int argc, char **argv)
{
	char *end;
	long secs = argc == 2 ? strtol(argv[1], &end, 10) : -1;
	if (argc != 2 || *end || secs < 1) {
		fprintf(stderr, "usage: holdctx SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* never outlive the run that started it: check-gpu may be killed at the device call's limit */
	pid_t parent = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		return 1;
	double t0 = now_ms();
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("holdctx: no driver: %s\n", dlerror());
		return 1;
	}
	cu_result (*init)(unsigned) = (cu_result(*)(unsigned))dlsym(h, "cuInit");
	cu_result (*get)(int *, int) = (cu_result(*)(int *, int))dlsym(h, "cuDeviceGet");
	cu_result (*name)(char *, int, int) = (cu_result(*)(char *, int, int))dlsym(h, "cuDeviceGetName");
	cu_result (*retain)(void **, int) = (cu_result(*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
	if (!init || !get || !name || !retain) {
		printf("holdctx: libcuda.so.1 lacks cuInit, cuDeviceGet, cuDeviceGetName or cuDevicePrimaryCtxRetain\n");
		return 1;
	}
	int dev = 0;
	void *ctx = NULL;
	char dname[256] = "?";
	cu_result r;
	if ((r = init(0)) != 0)
		return fail(h, "cuInit", r);
	if ((r = get(&dev, 0)) != 0)
		return fail(h, "cuDeviceGet", r);
	if (name(dname, sizeof dname, dev) != 0)
		snprintf(dname, sizeof dname, "?");
	if ((r = retain(&ctx, dev)) != 0)
		return fail(h, "cuDevicePrimaryCtxRetain", r);
	printf("holdctx: holding a context on device 0 (%s) since %.0f ms\n", dname, now_ms() - t0);
	/* the context is released by the process's end, whichever way it comes */
	for (long i = 0; i < secs; i++)
		sleep(1);
	return 0;
}
