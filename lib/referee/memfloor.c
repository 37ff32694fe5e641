/* memfloor.c - the fastest a cpu can move a task's bytes: its data caches (sizes from sysfs) and
 * memory, each level's copy bandwidth measured in the referee's own process.
 *
 * Why levels: leap-bench's memory floor (a median below it cannot be doing the work) once used
 * the bandwidth of memory alone, and bench_cpu cases often fit in L2 or L3, where honest code
 * runs several times faster than memory allows: the floor had to be loose by a factor of four
 * to pass them, and then a kernel doing none of the work at 1.5 times memory speed passed too
 * (issue 26). Knowing where the bytes can live lets the floor be tight. Why here: the numbers
 * come from trusted code on one of the candidate's cores, never from a runner that may hold
 * candidate code; sysfs gives sizes, and a copy of a buffer that fits in each level gives its
 * speed (what the hardware manuals say is a peak no copy reaches). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memfloor.h"
#include "core/util.h"
#include "core/banned.h"

/* Bytes each timed copy moves at least, trials per level (the least time is taken: noise only
 * lengthens a copy), and the buffer of the memory level when the caches are small. */
#define PROBE_BYTES (64ull << 20)
#define PROBE_TRIALS 5
#define MEMORY_BUF (64ull << 20)

/* Reads the first line of a sysfs file into buf. Returns 0 or -1. */
static int sysfs_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -1;
	int ok = fgets(buf, (int)len, fp) != NULL;
	fclose(fp);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* "32K", "16384K", "1M": bytes, or 0. */
static uint64_t cache_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	else if (*end == 'G')
		v <<= 30;
	return v;
}

/* The data and unified caches of `cpu`, smallest level first, into f (without speeds). */
static void read_caches(struct leap_memfloor *f, int cpu)
{
	f->n = 0;
	for (int i = 0; i < 16 && f->n < LEAP_MEMFLOOR_LEVELS - 1; i++) {
		char base[96], path[128], type[32], level[16], size[32], shared[256];
		snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu%d/cache/index%d", cpu, i);
		snprintf(path, sizeof path, "%s/type", base);
		if (sysfs_line(path, type, sizeof type))
			break;
		snprintf(path, sizeof path, "%s/level", base);
		int ok = !sysfs_line(path, level, sizeof level);
		snprintf(path, sizeof path, "%s/size", base);
		ok = ok && !sysfs_line(path, size, sizeof size);
		snprintf(path, sizeof path, "%s/shared_cpu_list", base);
		if (sysfs_line(path, shared, sizeof shared))
			shared[0] = 0;
		uint64_t bytes = ok ? cache_size(size) : 0;
		if (!bytes || !strcmp(type, "Instruction"))
			continue;
		struct leap_memlevel *l = &f->lv[f->n++];
		memset(l, 0, sizeof *l);
		snprintf(l->name, sizeof l->name, "L%.3s", level);
		l->size = bytes;
		/* one CPU in the list (no comma, no range): this core's own */
		l->per_core = shared[0] && !strpbrk(shared, ",-");
	}
	for (int i = 1; i < f->n; i++) /* sysfs lists them by index, not by size */
		for (int j = i; j > 0 && f->lv[j].size < f->lv[j - 1].size; j--) {
			struct leap_memlevel t = f->lv[j];
			f->lv[j] = f->lv[j - 1];
			f->lv[j - 1] = t;
		}
}

/* The copy bandwidth (GB/s, read and written counted) of buffers of `len` bytes each. */
static double copy_gbs(unsigned char *a, unsigned char *b, uint64_t len)
{
	uint64_t reps = PROBE_BYTES / len ? PROBE_BYTES / len : 1;
	memset(a, 1, len);
	memset(b, 2, len);
	double best = 0;
	for (int t = 0; t < PROBE_TRIALS; t++) {
		double t0 = leap_now();
		for (uint64_t r = 0; r < reps; r++)
			memcpy(r % 2 ? a : b, r % 2 ? b : a, len);
		double s = leap_now() - t0;
		if (s > 0 && 2.0 * (double)(reps * len) / s / 1e9 > best)
			best = 2.0 * (double)(reps * len) / s / 1e9;
	}
	return best;
}

int leap_memfloor_measure(struct leap_memfloor *f, int cpu)
{
	read_caches(f, cpu);
	uint64_t last = f->n ? f->lv[f->n - 1].size : 0, mem = 4 * last > MEMORY_BUF ? 4 * last : MEMORY_BUF;
	struct leap_memlevel *m = &f->lv[f->n++];
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "memory");
	cpu_set_t old, one;
	int pinned = sched_getaffinity(0, sizeof old, &old) == 0;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pinned = pinned && sched_setaffinity(0, sizeof one, &one) == 0;
	unsigned char *a = mmap(NULL, (size_t)mem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *b = mmap(NULL, (size_t)mem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok = a != MAP_FAILED && b != MAP_FAILED;
	for (int i = 0; ok && i < f->n; i++) /* two buffers of a quarter each: both fit, with room */
		f->lv[i].gbs = copy_gbs(a, b, f->lv[i].size ? f->lv[i].size / 4 : mem);
	if (a != MAP_FAILED)
		munmap(a, (size_t)mem);
	if (b != MAP_FAILED)
		munmap(b, (size_t)mem);
	if (pinned)
		sched_setaffinity(0, sizeof old, &old);
	/* a level slower than the one above it was disturbed: it is at least as fast */
	for (int i = f->n - 2; ok && i >= 0; i--)
		if (f->lv[i].gbs < f->lv[i + 1].gbs)
			f->lv[i].gbs = f->lv[i + 1].gbs;
	return ok && m->gbs > 0 ? 0 : -1;
}

const struct leap_memlevel *leap_memfloor_level(const struct leap_memfloor *f, uint64_t bytes, int cores)
{
	for (int i = 0; i < f->n - 1; i++) {
		uint64_t holds = f->lv[i].size * (f->lv[i].per_core && cores > 1 ? (uint64_t)cores : 1);
		if (bytes <= holds)
			return &f->lv[i];
	}
	return &f->lv[f->n - 1];
}

double leap_memfloor_ms(const struct leap_memfloor *f, uint64_t bytes, int cores)
{
	const struct leap_memlevel *l = leap_memfloor_level(f, bytes, cores);
	double gbs = l->gbs * (cores > 1 ? cores : 1);
	return gbs > 0 ? (double)bytes / (gbs * 1e9) * 1e3 : 0;
}
