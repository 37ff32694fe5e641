/* cpu.c - the runner's cpu backend: the candidate's buffers are the referee's shared regions. */
/* Why: on the host nothing needs copying. The candidate's pointers point straight into the
 * memory the referee maps too, so there is no copy-back a candidate could hook (a fault handler
 * on a protected output, a thread finishing after the call) and no buffer of the runner's own.
 * The cores the candidate runs on are the referee's choice, made before this process started
 * (a cgroup cpuset or the affinity it inherited): the runner does not pin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backend.h"
#include "fault.h"
#include "heap.h"
#include "core/banned.h"

struct rb {
	unsigned char *in, *out;
	int check_heap; /* 0 for the "trusted" role: a torch baseline (lib/referee/torchbase.c) */
	double t0; /* the runner's clock at the start of a block (cross-check only) */
};

/* The monotonic clock in milliseconds. */
static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int rb_init(struct rb **b, const char *device, const char *role, char *msg, uint8_t uuid[16])
{
	(void)device;
	memset(uuid, 0, 16);
	*b = calloc(1, sizeof **b); /* one per process; main owns it */
	if (!*b) {
		snprintf(msg, LEAP_RUN_MSG, "out of memory");
		return LEAP_RUN_NOMEM;
	}
	/* The heap check walks every live block after each block of calls: a handful in a C
	 * kernel, hundreds of thousands in an interpreter with torch loaded (a block's check then
	 * took ten times the calls it followed). It can only fail a candidate, never pass one, so
	 * the trusted torch baseline, which the referee starts with this role, goes without. */
	(*b)->check_heap = strcmp(role, "trusted") != 0;
	snprintf(msg, LEAP_RUN_MSG, "cpu");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return LEAP_RUN_OK;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = 0;
		snprintf(msg, LEAP_RUN_MSG, "%s", colon);
		break;
	}
	fclose(f);
	return LEAP_RUN_OK;
}

int rb_regions(struct rb *b, unsigned char *in, uint64_t in_len, unsigned char *out, uint64_t out_len,
	       const struct leap_run_ctl *ctl, struct rb_devmem *dm, char *msg)
{
	(void)in_len;
	(void)out_len;
	(void)ctl;
	(void)dm; /* no device memory to share */
	(void)msg;
	b->in = in;
	b->out = out;
	return LEAP_RUN_OK;
}

int rb_host_pointers(const struct rb *b)
{
	(void)b;
	return 1; /* the candidate's buffers are the shared regions themselves */
}

unsigned char *rb_base(struct rb *b, int r)
{
	return r == LEAP_RUN_R_IN ? b->in : b->out;
}

int rb_block_begin(struct rb *b, char *msg)
{
	(void)msg;
	b->t0 = now_ms();
	return LEAP_RUN_OK;
}

int rb_block_end(struct rb *b, double *own_ms, int *code, char *msg)
{
	*own_ms = now_ms() - b->t0;
	/* a write past a block the code allocated itself fails the block it happened in */
	uint64_t bytes, off;
	uintptr_t site;
	const char *fn;
	if (!b->check_heap || !heap_check(&bytes, &site, &fn))
		return LEAP_RUN_OK;
	/* the call's line: the return address less one (runner/fault.c does the same) */
	*code = site && fault_artifact_offset(site - 1, &off) && off < INT32_MAX ? (int)off + 1 : 0;
	snprintf(msg, LEAP_RUN_MSG, "wrote past the end of a %llu-byte block it allocated with %s",
		 (unsigned long long)bytes, fn);
	return LEAP_RUN_HEAP;
}

int rb_call(struct rb *b, leap_entry_fn entry, void *const *args, const struct leap_run_arg *row, uint32_t nparams,
	    int *code, char *msg)
{
	(void)b;
	(void)row;
	(void)nparams;
	int rc = entry(args);
	if (rc) {
		*code = rc;
		snprintf(msg, LEAP_RUN_MSG, "the entry point returned %d", rc);
		return LEAP_RUN_CALL;
	}
	return LEAP_RUN_OK;
}

int rb_xfer(struct rb *b, const struct leap_run_xfer *x, uint32_t n, int flush_l2, char *msg)
{
	(void)b;
	(void)x;
	(void)n;
	(void)flush_l2;
	snprintf(msg, LEAP_RUN_MSG, "the cpu runner owns no device memory");
	return LEAP_RUN_PROTO;
}

int rb_probe(struct rb *b, double *copy_gbs, double *gflops, char *msg)
{
	(void)b;
	size_t n = 64u << 20;
	unsigned char *x = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *y = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x == MAP_FAILED || y == MAP_FAILED) {
		snprintf(msg, LEAP_RUN_MSG, "cannot allocate the probe buffers");
		return LEAP_RUN_DEVICE; /* not NOMEM: that status belongs to the hello (runproto.h) */
	}
	memset(x, 1, n);
	memset(y, 2, n);
	double best = INFINITY;
	for (int i = 0; i < 7; i++) {
		double t0 = now_ms();
		memcpy(i % 2 ? x : y, i % 2 ? y : x, n);
		double ms = now_ms() - t0;
		if (ms < best)
			best = ms;
	}
	munmap(x, n);
	munmap(y, n);
	*copy_gbs = best > 0 ? 2.0 * (double)n / (best * 1e6) : 0;
	*gflops = 0;
	return LEAP_RUN_OK;
}
