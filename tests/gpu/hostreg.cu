// hostreg.cu - the cuda owner's page-locking of its host regions, on a real GPU (make check-gpu;
// issue 27, item 7): IN as leap-bench makes it (a memfd sealed against writing, mapped
// read-only, as the runner maps it) and OUT (writable), registered by the same code as the
// runner's (lib/sandbox/runplan.c, leap_run_register, with cudaHostRegister), each on its own; then a
// copy from IN to the device and from the device into OUT, checked. One JSON line:
// {"host_register": 0|1, "readonly_supported": 0|1, "in": "registered"|"not", "out": ...,
//  "copies": "ok"|WHAT}. Exit 0 once it ran, 1 when CUDA or the memory could not be had.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "sandbox/runplan.h"

static int host_register(void *arg, void *p, size_t len, enum leap_run_reg how)
{
	(void)arg;
	cudaError_t e = cudaHostRegister(p, len, how == LEAP_RUN_REG_READONLY ? cudaHostRegisterReadOnly : cudaHostRegisterDefault);
	cudaGetLastError();
	return e == cudaSuccess ? 0 : -1;
}

/* A region of n bytes as lib/sandbox/session.c makes it, `fill` written through leap's own mapping;
 * the runner's mapping of it (read-only and sealed when `sealed`). NULL on failure. */
static unsigned char *region(size_t n, int sealed, unsigned char fill)
{
	int fd = memfd_create("hostreg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)n))
		return NULL;
	unsigned char *leap = (unsigned char *)mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (leap == MAP_FAILED)
		return NULL;
	memset(leap, fill, n);
	if (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))
		return NULL;
	void *p = mmap(NULL, n, PROT_READ | (sealed ? 0 : PROT_WRITE), MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : (unsigned char *)p;
}

int main(void)
{
	const size_t n = (size_t)64 << 20;
	int reg = 0, ro = 0;
	if (cudaFree(0) != cudaSuccess || cudaDeviceGetAttribute(&reg, cudaDevAttrHostRegisterSupported, 0) != cudaSuccess ||
	    cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0) != cudaSuccess) {
		printf("{\"error\": \"no CUDA device\"}\n");
		return 1;
	}
	unsigned char *in = region(n, 1, 0x5a), *out = region(n, 0, 0);
	unsigned char *dev = NULL;
	if (!in || !out || cudaMalloc(&dev, n) != cudaSuccess) {
		printf("{\"error\": \"no memory\"}\n");
		return 1;
	}
	unsigned got = reg ? leap_run_register(in, n, 0, out, n, ro, host_register, NULL) : 0;
	const char *copies = "ok";
	if (cudaMemcpy(dev, in, n, cudaMemcpyHostToDevice) != cudaSuccess)
		copies = "IN to the device failed";
	else if (cudaMemcpy(out, dev, n, cudaMemcpyDeviceToHost) != cudaSuccess)
		copies = "the device into OUT failed";
	else if (out[0] != 0x5a || out[n - 1] != 0x5a || memcmp(out, out + 1, n - 1))
		copies = "OUT does not hold what IN held";
	printf("{\"host_register\": %d, \"readonly_supported\": %d, \"in\": \"%s\", \"out\": \"%s\", \"copies\": \"%s\"}\n", reg,
	       ro, got >> LEAP_RUN_R_IN & 1 ? "registered" : "not", got >> LEAP_RUN_R_OUT & 1 ? "registered" : "not", copies);
	return 0;
}
