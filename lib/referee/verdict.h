/* verdict.h - when leap-bench's timing of a record is `ok`: every default of the timing in one
 * table, the stopping rule, and what a timing that ended early makes of the record. The
 * verdicts themselves are lib/referee/verdict.c's (leap-bench(1), TARGET and The bench object, says why
 * they are what they are).
 *
 * Each default used to be written in several places (the target three times: bench.h, the
 * help text and the man page) and drifted apart. Now it is written here once: cmd/leap-bench.c
 * starts its options from leap_bench_defaults and builds the defaults its --help states from
 * these macros (LEAP_BENCH_STR), and tests/docs.bats checks that every default leap-bench(1)
 * states in its OPTIONS is the one --help states. The macros are literals so that they can be
 * pasted into the help text at compile time. */
#ifndef LEAP_VERDICT_H
#define LEAP_VERDICT_H

#include "core/record.h"

struct leap_stats;
struct leap_bench_opts;

/* ---- the options' defaults (and their ranges) ---- */

/* --target-ci per backend: the decision they serve is in leap-bench(1), TARGET. */
#define LEAP_BENCH_TARGET_CPU 0.05
#define LEAP_BENCH_TARGET_CUDA 0.02
/* --min-runs and --max-runs: timed pairs of blocks (an interval needs 6), at most RUNS_MAX */
#define LEAP_BENCH_MIN_RUNS 10
#define LEAP_BENCH_MAX_RUNS 1000
#define LEAP_BENCH_RUNS_MAX 1000000
/* --max-time: seconds of timing per record, at most a day */
#define LEAP_BENCH_MAX_TIME 2
#define LEAP_BENCH_MAX_TIME_MAX 86400
/* --block-ms: the length a block aims at, in [BLOCK_MS_MIN, BLOCK_MS_MAX]; never shorter than
 * BLOCK_MS_LEAST when a small --max-time shortens it */
#define LEAP_BENCH_BLOCK_MS 20
#define LEAP_BENCH_BLOCK_MS_MIN 0.001
#define LEAP_BENCH_BLOCK_MS_MAX 10000
#define LEAP_BENCH_BLOCK_MS_LEAST 0.5
/* --pool-memory in MiB (the help writes it with the suffix M), at least POOL_MIB_MIN; the
 * pools of earlier tasks are kept while all together hold at most POOLS_KEPT times it
 * (lib/referee/inpool.c says why). Not given, on a device with memory of its own (cuda) it is
 * that memory over POOL_DEVICE_SHARE, at most the host's over POOL_HOST_SHARE and never less
 * than POOL_MIB (inpool.c, ref_pool_budget) */
#define LEAP_BENCH_POOL_MIB 512
#define LEAP_BENCH_POOL_DEVICE_SHARE 4
#define LEAP_BENCH_POOL_HOST_SHARE 16
#define LEAP_BENCH_POOL_MIB_MIN 1
#define LEAP_BENCH_POOLS_KEPT 4
/* --timeout: the absolute bound of a record, max-time plus this many seconds */
#define LEAP_BENCH_TIMEOUT_PLUS 30
/* --memory in GiB (suffix G), and the file-size limit of a cpu child in MiB */
#define LEAP_BENCH_MEMORY_GIB 4
#define LEAP_BENCH_FSIZE_MIB 16

/* ---- the bounds of a record (leap-bench(1), Bounds) ----
 * Honest work never reaches them, a stall always does: a call of the candidate may take SLOW
 * times the baseline's call in the same record (so a loaded machine, which slows both, trips
 * neither), plus BLOCK_GRACE seconds per block (FIRST_GRACE for its first call: thread pools,
 * page faults); more ends the record as its `timeout`. The grace is what does not scale with
 * the calls, a runner woken late on a busy machine: it was half a second until a correct
 * candidate's record ended in `timeout` at a load average of 16 (which bound, not recorded;
 * this one is the tightest). Its runner must say hello within HELLO_GRACE seconds plus
 * HELLO_SLOW times what the trusted runner took to start. */
#define LEAP_BENCH_SLOW 100.0
#define LEAP_BENCH_BLOCK_GRACE 2.0
#define LEAP_BENCH_FIRST_GRACE 2.0
#define LEAP_BENCH_HELLO_GRACE 2.0
#define LEAP_BENCH_HELLO_SLOW 10.0

/* ---- suspicious (leap-bench(1), The memory floor) ----
 * A median below this share of the memory floor cannot be doing the work (the floor is bytes at
 * the copy speed of the fastest place they fit, for every core: a read-only kernel may move
 * bytes up to about twice as fast as a copy counts them). */
#define LEAP_BENCH_FLOOR_MARGIN_CPU 0.5
#define LEAP_BENCH_FLOOR_MARGIN_CUDA 0.5

/* A default as a string literal, for the help text: LEAP_BENCH_STR(LEAP_BENCH_MIN_RUNS) is "10". */
#define LEAP_BENCH_STR(x) LEAP_BENCH_STR_(x)
#define LEAP_BENCH_STR_(x) #x

/* Fills the timing options of o (target_ci, max_time, min_runs, max_runs, block_ms,
 * pool_bytes) with their defaults; the rest of o is left as it is. */
void leap_bench_defaults(struct leap_bench_opts *o);

/* ---- the stopping rule ---- */

/* 1 when n >= max_runs, or n >= min_runs and either the relative half-width is <= target or
 * elapsed >= max_time (seconds): never fewer than min_runs. With `narrow` (a counter the caller
 * keeps per series, from 0), the half-width must be within the target at two checks in a row:
 * stopping at the first narrow interval picks samples that happen to cluster, and the interval
 * then covers the truth less often (92% for a nominal 95% in
 * tests/fixtures/leap-bench/coverage.c; twice in a row: 94 to 96%). */
int leap_bench_done(const struct leap_stats *s, long min_runs, long max_runs, double target, double elapsed,
		    double max_time, int *narrow);

/* What a timing that ended before its verdict makes of the record: no output of the benchmark
 * size was checked, so the record cannot keep `pass` (a kernel wrong only beyond the verified
 * sizes would keep its reward by hanging, crashing, stalling the freezer, withholding a message
 * or claiming that there is no device). `sess` is the candidate session's enum leap_sess,
 * `timeout` 1 when its runner ran out of time. Returns the bench status ("timeout" or
 * "runtime_error") and sets *st to the record's (LEAP_ST_TIMEOUT or LEAP_ST_RUNTIME_ERROR). */
const char *leap_bench_failed_status(int sess, int timeout, enum leap_status *st);

#endif
