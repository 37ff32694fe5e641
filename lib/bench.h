/* bench.h - time a verified candidate against its task's baseline: statistics, stopping rule, locks. */
#ifndef LEAP_BENCH_H
#define LEAP_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "task.h"
#include "verify.h"

/* Summary of timing samples. */
struct leap_stats {
	size_t n;
	double median, min, mean, stdev;
	double ci_lo, ci_hi; /* distribution-free 95% confidence interval of the median */
	double rel_ci;       /* (ci_hi - ci_lo) / 2 / median; infinity when n < 6 */
};

/* Summarises x[0..n) (sorted in place). The interval uses the order statistics of ranks
 * n/2 -+ 0.98*sqrt(n), the normal approximation of the binomial: no assumption about the
 * distribution of the times, robust to outliers (a preempted call). n may be 0. */
void leap_stats(double *x, size_t n, struct leap_stats *s);

/* The stopping rule: 1 when n >= max_runs, or n >= min_runs and either the relative
 * half-width is <= target or elapsed >= max_time (seconds): never fewer than min_runs. */
int leap_bench_done(const struct leap_stats *s, long min_runs, long max_runs, double target, double elapsed,
		    double max_time);

struct leap_bench_opts {
	double target_ci;   /* stop when the relative CI half-width of the median is below this */
	double max_time;    /* seconds of timing per record (candidate and baseline together) */
	long min_runs, max_runs;
	int sets;           /* input sets rotated between calls */
	int hot;            /* cuda: do not flush the L2 cache between calls */
	int baseline_cache; /* reuse baseline timings per (task, device, build) */
	double baseline_tol; /* ... while a check block agrees within this (relative) plus 2 CIs */
	double block_ms;    /* aim of one block of calls, candidate and baseline alternating */
};

/* A measured baseline, kept per process and on disk. */
struct leap_baseline {
	char key[65];
	struct leap_stats st;
};

/* The bench case data of one task and seed (inputs and reference results). */
struct leap_bcase {
	const struct leap_task *task;
	uint64_t seed;
	struct leap_case_data d;
};

struct leap_bencher {
	struct leap_verifier *v;
	struct leap_bench_opts o;
	struct leap_baseline *bl;
	size_t nbl, blcap;
	struct leap_bcase *bc;
	size_t nbc, bccap;
	double probe_gbs, probe_gflops; /* the last device measured (copy GB/s, FP32 GFLOP/s) */
	int lock_said;                  /* said that it waits for a device lock */
	char probe_device[256];
};

void leap_bencher_init(struct leap_bencher *B, struct leap_verifier *v, const struct leap_bench_opts *o);
void leap_bencher_free(struct leap_bencher *B);

/* Times `artifact` (a candidate that passed leap-verify) on the task's benchmark case for
 * backend b, interleaved with the task's baseline (cuda: baseline.cu, cpu: reference.c),
 * each in its own sandboxed runner, holding the device lock CACHE/locks/DEVICE.lock.
 * Returns the `bench` object: status ok, suspicious (the output was wrong on the timing
 * inputs, host time far above event time, or faster than the memory floor), runtime_error,
 * timeout or no_device, with median_ms, min_ms, mean_ms, stdev_ms, n, rel_ci,
 * host_median_ms, baseline_ms, baseline_rel_ci, baseline_n, baseline_cached, speedup,
 * roofline, device, seed, ms and message. NULL with a new message in *err when the harness
 * failed (reference or baseline does not build, no runner). */
json_t *leap_bench_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
			    const char *artifact, uint64_t seed, char **err);

/* Computes the bench case of task t for `seed` (inputs and reference results) and builds the
 * baseline now (leap_bench_artifact does both on first use), so that forked timing workers
 * share them instead of each redoing them. Returns 0, or -1 with a new message in *err. */
int leap_bench_prepare(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, uint64_t seed,
		       char **err);

#endif
