/* bench.h - time a verified candidate against its task's baseline from a referee the candidate
 * cannot reach: statistics, the input pool, the baseline cache, the timing loop, the verdict. */
#ifndef LEAP_BENCH_H
#define LEAP_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cgroup.h"
#include "record.h"
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
 * distribution of the times, robust to outliers (a preempted block). n may be 0. */
void leap_stats(double *x, size_t n, struct leap_stats *s);

/* The stopping rule: 1 when n >= max_runs, or n >= min_runs and either the relative
 * half-width is <= target or elapsed >= max_time (seconds): never fewer than min_runs. */
int leap_bench_done(const struct leap_stats *s, long min_runs, long max_runs, double target, double elapsed,
		    double max_time);

/* The memoisation rule: 1 when a candidate's calls on input sets it has seen (rs) are faster
 * than those on new sets (fs) by more than chance and load explain. Both the raw times and the
 * times relative to the baseline blocks timed beside each phase (bf, br: used when each has 3
 * samples) must say so: the ratio alone turns a load spike on the baseline into an accusation,
 * the raw times alone a load that fell between the phases. Needs 6 samples of each phase. */
int leap_bench_memoises(const struct leap_stats *fs, const struct leap_stats *rs, const struct leap_stats *bf,
			const struct leap_stats *br);

struct leap_bench_opts {
	double target_ci;   /* an interval wider than this is `noisy`, never `ok` */
	double max_time;    /* seconds of timing per record (candidate and baseline together) */
	long min_runs, max_runs; /* timed blocks of the candidate */
	int hot;            /* cuda: do not flush the L2 cache between blocks */
	int baseline_cache; /* reuse baseline timings per (task, device, build, case, cores) */
	double baseline_tol; /* a check of a cached baseline that disagrees by more replaces it */
	double block_ms;    /* the longest a block of calls aims at */
	uint64_t pool_bytes; /* memory for the input pool: inputs and expected outputs */
	const char *cpus;   /* the candidate's cores (--cpus; NULL: all this process may use) */
	enum leap_freeze freezer; /* how candidates are frozen (NONE: the best available) */
	int cgroup_version;  /* 0: cgroup v2 where it works, else v1; 1 or 2: only that version */
};

/* A measured baseline, kept per process and on disk. */
struct leap_baseline {
	char key[65];
	struct leap_stats st;
};

/*
 * The input pool of one (task, backend, seed): the sets every timed call draws from, and the
 * outputs the trusted baseline gave on each (what a candidate's outputs are checked against).
 * The first sets are drawn from the seed (as leap-verify draws its inputs); the others are
 * derived from them by the referee's secret random stream, which the candidate never sees: each
 * input buffer rotated by its own offset and a fraction of its elements swapped, so each new set
 * keeps the task's distributions and costs a copy, not a fresh draw. A set's expected outputs
 * are the baseline's outputs on it, taken in a baseline block: the pool grows as the baseline
 * is timed and serves every record of the task.
 */
struct leap_bpool {
	const struct leap_task *task;
	enum leap_backend backend;
	uint64_t seed;
	struct leap_case_data d;   /* nsets = cap, arena_sets = slots */
	uint32_t nbase;            /* sets drawn from the seed */
	uint32_t n;                /* sets with inputs */
	uint32_t cap;              /* sets the pool may hold */
	uint8_t *known;            /* [cap] 1: want[] holds the baseline's outputs */
	uint32_t nknown;
	uint32_t slots;            /* calls a block may have */
	uint32_t kb;               /* calls of a baseline block (from its own time) */
	double call_ms;            /* the baseline's time per call, measured when the pool was made */
	uint8_t uuid[16];          /* the device's UUID (zeros on cpu): its lock's name */
	uint64_t in_set;           /* cuda: bytes of one set's inputs in the owner's device pool */
	uint8_t *on_dev;           /* [cap] cuda: the set's inputs are in the owner's device pool */
	uint64_t rng;              /* the referee's secret stream */
	double tol_scale;          /* tolerance factor at this size (longer reductions) */
	/* kept from record to record: the baseline's runner (trusted, frozen between records)
	 * and the candidates' regions, so that a record starts one runner and maps memory that
	 * is already there */
	struct leap_session bs;
	int have_bs;
	struct leap_regions creg;
	int have_creg;
};

struct leap_bencher {
	struct leap_verifier *v;
	struct leap_bench_opts o;
	struct leap_baseline *bl;
	size_t nbl, blcap;
	struct leap_bpool **pools;
	size_t npools, poolcap;
	cpu_set_t cpus;            /* the candidate's (and the baseline's) cores */
	int ncpus;
	struct leap_cgroups cg;    /* what the machine offers (detected by leap_bench_setup) */
	struct leap_sandbox_opts sb; /* the runners' sandbox: v->o.sb plus cores and groups */
	double probe_gbs, probe_gflops; /* the last device measured (copy GB/s, FP32 GFLOP/s) */
	int lock_said;                  /* said that it waits for a device lock */
	char probe_device[256];
};

/* Prepares a bencher: detects the cgroups, resolves the core set (o->cpus) and the freezer
 * (o->freezer, LEAP_FREEZE_NONE: the best available). Returns 0, or -1 with a new message in
 * *err: no way to freeze a candidate here (leap-bench refuses to time without), or a bad core
 * list. */
int leap_bencher_init(struct leap_bencher *B, struct leap_verifier *v, const struct leap_bench_opts *o, char **err);
void leap_bencher_free(struct leap_bencher *B);

/* Ends what the bencher keeps running between records (the baselines' runners) and frees the
 * candidates' regions: before a forked worker exits, and on a signal (no sandbox or temp dir
 * may outlive the program). leap_bencher_free does it too. */
void leap_bencher_stop(struct leap_bencher *B);

/* "cgroup v2 freezer", "cgroup v1 freezer" or "SIGSTOP from the PID namespace's init". */
const char *leap_bench_freezer_name(const struct leap_bencher *B);

/* Times `artifact` (a candidate that passed leap-verify) on the task's benchmark case for
 * backend b against the task's baseline (cuda: baseline.cu, cpu: reference.c), each in its own
 * sandboxed runner, holding the device lock CACHE/locks/DEVICE.lock. Returns the `bench`
 * object (status ok, noisy, suspicious, mismatch, runtime_error, timeout or no_device; see
 * leap-bench(1)) and sets *st to the record status the timing found (LEAP_ST_MISMATCH,
 * LEAP_ST_RUNTIME_ERROR, or LEAP_ST_NONE: unchanged). NULL with a new message in *err when the
 * harness failed (reference or baseline does not build or fails, no runner, a broken freezer). */
json_t *leap_bench_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
			    const char *artifact, uint64_t seed, enum leap_status *st, char **err);

/* Makes the input pool of task t for `seed` (base sets and the baseline's outputs on them) now
 * (leap_bench_artifact does it on first use), so that forked timing workers share it. Returns
 * 0, or -1 with a new message in *err. */
int leap_bench_prepare(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, uint64_t seed,
		       char **err);

#endif
