/* memfloor.h - the fastest a cpu can move a task's bytes: its data caches (sizes from sysfs) and
 * memory, each level's copy bandwidth measured in the referee's own process. */
#ifndef LEAP_MEMFLOOR_H
#define LEAP_MEMFLOOR_H

#include <stdint.h>

/* One place bytes can live: a data cache level or memory. */
struct leap_memlevel {
	char name[8];  /* "L1", "L2", "L3", "memory" */
	uint64_t size; /* bytes it holds for one core (0: memory, unbounded) */
	int per_core;  /* 1 when each core has its own (L1, L2 on most machines) */
	double gbs;    /* bytes copied per second by one core, read and written counted, in GB/s */
};

#define LEAP_MEMFLOOR_LEVELS 5

struct leap_memfloor {
	int n; /* levels, smallest first; the last is memory */
	struct leap_memlevel lv[LEAP_MEMFLOOR_LEVELS];
};

/* Reads the data cache levels of CPU `cpu` from /sys/devices/system/cpu/cpuN/cache and measures
 * the copy bandwidth of each, and of memory, on this thread pinned to `cpu` for the while.
 * Returns 0, or -1 when nothing could be measured. */
int leap_memfloor_measure(struct leap_memfloor *f, int cpu);

/* The fastest level that can hold `bytes` when `cores` cores work on them (a private level holds
 * `cores` times its size). f must have at least one level. */
const struct leap_memlevel *leap_memfloor_level(const struct leap_memfloor *f, uint64_t bytes, int cores);

/* The least time (ms) `cores` cores can take to move `bytes` from the level that holds them:
 * bytes at `cores` times that level's single-core bandwidth (an upper bound on what they reach
 * together, so the floor is never above what honest work can do). */
double leap_memfloor_ms(const struct leap_memfloor *f, uint64_t bytes, int cores);

#endif
