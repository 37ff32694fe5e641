/* cpu.c - the runner's cpu backend: host buffers between guard pages, monotonic-clock timing. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "banned.h"

#define CANARY 0xA7

/* Geometry of a guarded buffer: [guard page][data pages][guard page], the buffer ending
 * at the first 64-byte boundary at or before the second guard page; the rest of the data
 * pages is canary. */
struct geom {
	size_t page, data, start; /* data: bytes of the data pages; start: buffer offset in them */
};

/* Computes the geometry of a guarded buffer of `bytes`; -1 when too large. */
static int geom(uint64_t bytes, struct geom *g)
{
	long ps = sysconf(_SC_PAGESIZE);
	g->page = ps > 0 ? (size_t)ps : 4096;
	if (bytes > SIZE_MAX / 2)
		return -1;
	g->data = ((size_t)bytes + 64 + g->page - 1) / g->page * g->page;
	g->start = (g->data - (size_t)bytes) & ~(size_t)63;
	return 0;
}

/* The cpu backend keeps no state; the struct exists for the interface. */
struct rb {
	int unused;
};

int rb_init(struct rb **b, const char *device, char *msg)
{
	(void)device;
	static struct rb none; /* stateless: one shared, never written */
	*b = &none;
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

void *rb_alloc(struct rb *be, uint64_t bytes)
{
	(void)be;
	struct geom g;
	if (geom(bytes, &g))
		return NULL;
	unsigned char *base = mmap(NULL, g.data + 2 * g.page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mprotect(base + g.page, g.data, PROT_READ | PROT_WRITE)) {
		munmap(base, g.data + 2 * g.page);
		return NULL;
	}
	unsigned char *buf = base + g.page + g.start;
	memset(base + g.page, CANARY, g.start);
	memset(buf + bytes, CANARY, g.data - g.start - (size_t)bytes);
	return buf;
}

void rb_free(struct rb *be, void *buf, uint64_t bytes)
{
	(void)be;
	struct geom g;
	if (!buf || geom(bytes, &g))
		return;
	munmap((unsigned char *)buf - g.start - g.page, g.data + 2 * g.page);
}

/* 1 when all n bytes still hold the canary. */
static int all_canary(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

int rb_guard_ok(struct rb *be, const void *buf, uint64_t bytes)
{
	(void)be;
	struct geom g;
	if (geom(bytes, &g))
		return 0;
	const unsigned char *b = buf;
	return all_canary(b - g.start, g.start) && all_canary(b + bytes, g.data - g.start - (size_t)bytes);
}

int rb_upload(struct rb *be, void *buf, const void *host, uint64_t bytes, char *msg)
{
	(void)be;
	(void)msg;
	memcpy(buf, host, (size_t)bytes);
	return LEAP_RUN_OK;
}

int rb_download(struct rb *be, void *host, const void *buf, uint64_t bytes, char *msg)
{
	(void)be;
	(void)msg;
	memcpy(host, buf, (size_t)bytes);
	return LEAP_RUN_OK;
}

int rb_is_device(const struct rb *be)
{
	(void)be;
	return 0;
}

int rb_copy(struct rb *be, void *dst, const void *src, uint64_t bytes, char *msg)
{
	(void)be;
	(void)msg;
	memcpy(dst, src, (size_t)bytes);
	return LEAP_RUN_OK;
}

int rb_poison(struct rb *be, void *buf, uint64_t bytes, const uint8_t *pattern, uint32_t elsize, char *msg)
{
	(void)be;
	(void)msg;
	unsigned char *b = buf;
	if (elsize == 0 || elsize > 8)
		return LEAP_RUN_PROTO;
	size_t n = (size_t)bytes;
	if (n >= elsize) {
		memcpy(b, pattern, elsize);
		size_t done = elsize;
		while (done < n) { /* doubling copy: O(n) memcpy work */
			size_t k = done < n - done ? done : n - done;
			memcpy(b + done, b, k);
			done += k;
		}
	}
	return LEAP_RUN_OK;
}

/* Milliseconds from a to b. */
static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Pins the process to the last CPU it may run on (idempotent; failures are ignored:
 * timing still works, only less stably). */
static void pin(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set))
		return;
	int last = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;
	if (last < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(last, &set);
	sched_setaffinity(0, sizeof set, &set);
}

int rb_call(struct rb *be, leap_entry_fn entry, void *const *args, uint32_t flags, struct leap_run_time *t, int *code, char *msg)
{
	(void)be;
	if (flags & LEAP_RUN_F_PIN)
		pin();
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int rc = entry(args);
	clock_gettime(CLOCK_MONOTONIC, &b);
	t->ms = t->host_ms = ms_between(&a, &b);
	if (rc) {
		*code = rc;
		snprintf(msg, LEAP_RUN_MSG, "the entry point returned %d", rc);
		return LEAP_RUN_CALL;
	}
	return LEAP_RUN_OK;
}

int rb_probe(struct rb *be, double *copy_gbs, double *gflops, char *msg)
{
	(void)be;
	size_t n = 64u << 20;
	unsigned char *a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED) {
		snprintf(msg, LEAP_RUN_MSG, "cannot allocate the probe buffers");
		return LEAP_RUN_NOMEM;
	}
	memset(a, 1, n);
	memset(b, 2, n);
	pin();
	double best = INFINITY;
	for (int i = 0; i < 7; i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		memcpy(i % 2 ? a : b, i % 2 ? b : a, n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = ms_between(&t0, &t1);
		if (ms < best)
			best = ms;
	}
	munmap(a, n);
	munmap(b, n);
	*copy_gbs = best > 0 ? 2.0 * (double)n / (best * 1e6) : 0;
	*gflops = 0;
	return LEAP_RUN_OK;
}
