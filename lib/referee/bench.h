/* bench.h - time a verified candidate against its task's baseline from a referee the candidate
 * cannot reach: statistics, the input pool, the timing loop. lib/referee/referee.c times a record (its
 * design, the map of the referee's files, and its loop); lib/referee/bench.c holds the statistics and
 * the bencher. The verdict, the stopping rule and every default of the timing are verdict.h's. */
#ifndef LEAP_BENCH_H
#define LEAP_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "sandbox/cgroup.h"
#include "memfloor.h"
#include "core/record.h"
#include "task/task.h"
#include "verdict.h"
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

/* leap_stats of x[0..n) in the order it was measured (x is not changed), with the interval
 * widened for serial correlation: samples timed one after another under a load that changes
 * slowly are not independent, and an interval that assumes they are covers the truth less often
 * than it says (80 to 90% for a nominal 95% in the self-test under load). The lag-1
 * autocorrelation rho of "above the median" (0 to 0.6) inflates the variance of the count of
 * samples below the median by (1 + rho) / (1 - rho), and the ranks' distance from the middle by
 * its square root. */
void leap_stats_serial(const double *x, size_t n, struct leap_stats *s);

struct leap_bench_opts {
	double target_ci[LEAP_NBACKENDS]; /* per backend (enum leap_backend): a speedup interval wider than this,
			      * relative to the speedup, is `noisy`, never `ok` */
	double max_time;    /* seconds of timing per record (candidate, baseline and checks together) */
	long min_runs, max_runs; /* timed pairs of blocks (candidate and baseline) */
	int hot;            /* cuda: do not flush the L2 cache between blocks (blocks of one call) */
	int wall_clock;     /* cpu: time blocks on the wall clock alone, stalls included (--wall-clock) */
	double block_ms;    /* the longest a block of calls aims at */
	uint64_t pool_bytes; /* memory for the input pool: inputs and expected outputs (0: the backend's) */
	const char *cpus;   /* the candidate's cores (--cpus; NULL: all this process may use) */
	enum leap_freeze freezer; /* how candidates are frozen (NONE: the best available) */
	int cgroup_version;  /* 0: cgroup v2 where it works, else v1; 1 or 2: only that version */
	const char *baseline; /* module tasks' baseline kind (--baseline: torch-eager or
			       * torch-compile; NULL: each task's, torchbase.h) */
};

/*
 * The input pool of one (task, backend, seed): the sets the timed calls run on, and the outputs
 * the trusted baseline gave on each (what a candidate's outputs are checked against). Two base
 * sets are drawn from the seed (as leap-verify draws its inputs), and beside each a donor set
 * from the referee's secret stream, never shown to anyone. Every pair of timed blocks runs on
 * sets made for it: a base set rotated by a secret offset, every element mixed with one of
 * its donor's at a second secret offset, and one element in 16 replaced by one of its donor's
 * at secret places (leap_case_derive). So every call of a record is on a set no candidate has
 * seen, which lines up with no earlier set at any offset; the baseline's block of the pair
 * computes their expected outputs. The derived sets live in a ring reused pair after pair, so
 * memory stays at a few sets whatever the number of calls.
 */
struct leap_bpool {
	const struct leap_task *task;
	enum leap_backend backend;
	uint64_t seed;
	struct leap_case_data d;   /* nsets >= cap + nbase (the donors at cap..), arena_sets = slots */
	uint32_t nbase;            /* sets drawn from the seed (0..nbase-1) */
	uint32_t cap;              /* sets with outputs: the base sets, then the ring */
	uint32_t next;             /* the ring's next set (nbase..cap-1) */
	uint32_t slots;            /* slots of a region: two blocks of at most kb calls */
	uint32_t kb;               /* the calls of a block at most (from the baseline's time) */
	double call_ms;            /* the baseline's time per call, measured when the pool was made */
	double start_ms;           /* the trusted runner's start-up, measured then */
	uint8_t uuid[16];          /* the device's UUID (zeros on cpu): its lock's name */
	char device[LEAP_RUN_MSG]; /* the device's name, as the trusted baseline's runner said it:
				    * bench.device and the floor probe's key */
	uint64_t in_set;           /* cuda: bytes of one set's inputs in the owner's device pool */
	uint8_t *on_dev;           /* [cap] cuda: the set's inputs are in the owner's device pool */
	uint32_t *ring_base;       /* [cap] the ring's sets: the base set each is derived from, */
	uint64_t *ring_seed;       /* [cap] with this seed of the secret stream (leap_case_derive) */
	uint8_t *made;             /* [cap] its inputs are in the set's buffers (cuda: always; cpu:
				    * made in the slots, and here only to compare an unsealed
				    * region's inputs with) */
	uint64_t rng;              /* the referee's secret stream */
	double tol_scale;          /* tolerance factor at this size (longer reductions) */
	/* kept from record to record: the baseline's runner (trusted, frozen between records)
	 * and the candidates' regions, so that a record starts one runner and maps memory that
	 * is already there */
	struct leap_session bs;
	int have_bs;
	struct leap_regions creg;
	int have_creg;
	uint64_t used;             /* the bencher's use count when a record last took it */
};

struct leap_bencher {
	struct leap_verifier *v;
	struct leap_bench_opts o;
	struct leap_bpool **pools;  /* the pools kept (LEAP_BENCH_POOLS_KEPT, verdict.h) */
	size_t npools, poolcap;
	uint64_t uses;              /* records that took a pool: the pools' clock */
	cpu_set_t cpus;            /* the candidate's (and the baseline's) cores */
	int ncpus;
	struct leap_cgroups cg;    /* what the machine offers (detected by leap_bencher_init) */
	struct leap_sandbox_opts sb; /* the runners' sandbox: v->o.sb plus cores and groups */
	double probe_gbs, probe_gflops; /* cuda: the last device measured (copy GB/s, FP32 GFLOP/s) */
	char probe_device[256];
	struct leap_memfloor mf;        /* cpu: its caches and memory, measured once */
	int have_mf;                    /* 1 measured, -1 could not be */
	int lock_said;                  /* said that it waits for a device lock */
	unsigned stage_threads;         /* threads that make a block's sets (leap_case_stage): the
					 * CPUs this process may run on, at most 4 */
	struct ref_torch *torch;        /* module tasks: their Python, learnt once (torchbase.h) */
};

/* Prepares a bencher: detects the cgroups, resolves the core set (o->cpus) and the freezer
 * (o->freezer, LEAP_FREEZE_NONE: the best available). Returns 0, or -1 with a new message in
 * *err: no way to freeze a candidate here (leap-bench refuses to time without), or a bad core
 * list. */
int leap_bencher_init(struct leap_bencher *B, struct leap_verifier *v, const struct leap_bench_opts *o, char **err);
void leap_bencher_free(struct leap_bencher *B);

/* Ends a pool's baseline runner and frees its sets and regions, and the pool. */
void leap_bpool_free(struct leap_bpool *P);

/* Ends what the bencher keeps running between records (the baselines' runners) and frees the
 * candidates' regions: before a forked worker exits, and on a signal (no sandbox or temp dir
 * may outlive the program). leap_bencher_free does it too. */
void leap_bencher_stop(struct leap_bencher *B);

/* Whether a fork gets the input pools (leap_case_fork): 0 while the bencher only forks
 * sandboxes (the default: their page tables were most of leap-bench's system time), 1 around
 * the fork of a timing worker, which reads them. */
void leap_bencher_fork(struct leap_bencher *B, int copy);

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
