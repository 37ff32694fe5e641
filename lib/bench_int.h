/* bench_int.h - what the timing loop (referee.c) uses of bench.c: samples, the pool, the
 * device. Not an interface for programs: see bench.h. */
#ifndef LEAP_BENCH_INT_H
#define LEAP_BENCH_INT_H

#include "bench.h"

/* Per-call times of blocks, or ratios of pairs (one sample each), and the calls they hold. */
struct leap_series {
	double *x;
	size_t n, cap;
	long calls;
};
void leap_series_add(struct leap_series *s, double v, uint32_t calls);
/* The statistics of s (its samples keep their order). */
void leap_series_stats(const struct leap_series *s, struct leap_stats *st);

/* The block length aimed at (ms): --block-ms, shorter when --max-time is small, so that a
 * record still gets --min-runs pairs of blocks within its budget. */
double leap_bench_block_target(const struct leap_bench_opts *o);

/* The next 64 bits of a secret stream (splitmix64). */
uint64_t leap_bench_rnd(uint64_t *s);

/* The pool of (t, b, seed), made on first use (base sets, their donors, the baseline's outputs
 * on the base sets and its time per call, which sizes the blocks). NULL with *err; *nodev is 1
 * when that is because there is no usable device (*err then says why). */
struct leap_bpool *leap_bpool_get(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
				  uint64_t seed, const char *base_art, int *nodev, char **err);
/* cuda: the offset of parameter `param` of set s in the owner's device pool. */
uint64_t leap_bpool_dev_off(const struct leap_bpool *P, uint32_t s, size_t param);

/* Makes a new set (the ring's next) from a base set, its donor and the secret stream, and
 * returns its index; its expected outputs are for the baseline's block to write. */
uint32_t leap_bpool_fresh(struct leap_bpool *P);

/* The baseline artifact of t on b (a new path), or NULL with *err. */
char *leap_bench_baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, char **err);

/* Session options for case d with `calls` calls per block: sealed inputs, the bencher's
 * sandbox (cores, groups), frozen between blocks when `freeze`. */
struct leap_session_opts leap_bench_session_opts(struct leap_bencher *B, const struct leap_case_data *d,
						 enum leap_backend b, uint32_t calls, int freeze);

/* Statistics as the bench object's fields. New reference. */
json_t *leap_stats_json(const struct leap_stats *s);

/* cuda: the device's copy GB/s and FP32 GFLOP/s, measured once by the trusted baseline's
 * runner. Returns 0, or -1 (no floor then). */
int leap_bench_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
		     const struct leap_case_data *d, double *gbs, double *gflops);

/* cpu: the caches and memory of the candidate's cores (leap_memfloor_measure on the first of
 * them, once per process and cached under CACHE/devices/ by device name and cores), or NULL
 * when they could not be measured. */
const struct leap_memfloor *leap_bench_memfloor(struct leap_bencher *B, const char *device);

#endif
