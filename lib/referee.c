/* referee.c - leap-bench's referee: one record timed against its task's baseline by a process
 * the candidate cannot reach. The file reads from the top: the design, the bounds, a record's
 * state, then leap_bench_artifact and the loop it runs (calibration, pairs of blocks, the
 * stopping rule), then the pieces the loop uses, in the order it meets them: the blocks and
 * their checks, the cuda data moves, the sessions, the verdicts, the input pool, the device's
 * floor. What outlives a record (the bencher's set-up, the statistics) is bench.c's.
 *
 * This process owns the clock, the inputs and the checks; the candidate's runner is a servant
 * (runproto.h, session.c). What that buys, attack by attack:
 * - time: taken in this process around each block (leap_session_block: thaw, go, done,
 *   freeze), less the cost of an empty block measured the same way on the trusted baseline's
 *   runner; nothing the runner reports is used, so patching its clock or forging its replies
 *   changes no number. On cpu the clock is the running one: less the time every runnable
 *   process of the runner's group waited for a CPU others held (the kernel's count, never the
 *   runner's), and the referee itself times at a real-time priority its runners do not
 *   inherit (prio.h), so that a shared machine's waits land in neither side's time;
 * - the speedup: judged as a ratio, not as two medians. Blocks come in pairs, the candidate's
 *   and the baseline's on the same sets, one after the other in alternating order, and each
 *   pair gives the ratio of their times per call; the speedup is the median of those ratios,
 *   with a distribution-free 95% interval. A load that changes slowly slows both blocks of a
 *   pair and cancels in their ratio, instead of widening two intervals;
 * - inputs: every pair runs on sets made for it from the pool's base sets and the secret
 *   stream (pool_fresh: every element mixed with a donor's, fresh values at secret places, so
 *   that no set lines up with one a candidate saw at any offset), made in slots chosen at
 *   random just before each block, past the caches (stream.h), while the candidate is frozen;
 *   the input region is sealed, so inputs cannot be changed; no set comes back within a
 *   record, so remembering results gains nothing;
 * - checks: every call of every block is checked, against the baseline's outputs on the same
 *   set, in this process's own mapping of the outputs, after the freeze: work deferred past
 *   "done" (a thread, a fault handler, a child) is either counted in the time or missing from
 *   the outputs; a wrong output makes the record a `mismatch`;
 * - the baseline: trusted code, in a runner of its own, timed with the candidate frozen; its
 *   block size comes from its own time, never from the candidate's;
 * - noise: a speedup interval wider than --target-ci is `noisy`, with no speedup.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "bench.h"
#include "build.h"
#include "files.h"
#include "jsonl.h"
#include "prio.h"
#include "rng.h"
#include "sig.h"
#include "tlock.h"
#include "util.h"
#include "banned.h"

/* Blocks the calibration times (the least taken). */
#define CALIBRATE_BLOCKS 7

/*
 * The bounds on a record's time. Honest work never reaches them, a stall always does:
 * - a call of the candidate may take SLOW times the baseline's call in the same record (so a
 *   loaded machine, which slows both, trips neither), plus BLOCK_GRACE per block (FIRST_GRACE
 *   for its first call: thread pools, page faults); more ends the record as its `timeout`;
 * - its runner must say hello within HELLO_GRACE plus HELLO_SLOW times what the trusted
 *   runner took to start;
 * - the whole record, from the runner's start to the verdict, has --timeout (the absolute
 *   cap: a stall the scaled bounds let through cannot hold a rollout step longer).
 */
#define SLOW 100.0
#define BLOCK_GRACE 0.5
#define FIRST_GRACE 2.0
#define HELLO_GRACE 2.0
#define HELLO_SLOW 10.0

/* A median below this share of the memory floor cannot be doing the work (the floor is bytes at
 * the copy speed of the fastest place they fit, for every core: a read-only kernel may move
 * bytes up to about twice as fast as a copy counts them). */
#define FLOOR_MARGIN_CPU 0.5
#define FLOOR_MARGIN_CUDA 0.5

/* One element in FRESH_EVERY of a derived set's inputs is its donor's: enough that every
 * histogram, sum and column maximum of the suite changes from set to set (a column of 16 rows
 * or more gets a new maximum with probability about 1/16 per set, so many columns do), at the
 * cost of a copy of the inputs. */
#define FRESH_EVERY 16

/* Pools of earlier tasks are kept (a task that comes back, with the next turn's records or
 * the next sample of its group, finds its sets made and its baseline's runner started) while
 * all pools together hold at most this many times --pool-memory; the one used longest ago
 * goes first. Kept without a bound, a stream of a few hundred tasks (KernelBench's suites)
 * kept a runner and its memory per task: 2.7 GB and 31 runners after 29 of the suite's cpu
 * tasks, and on cuda the device's memory, until allocations failed. */
#define POOLS_KEPT 4

/* The base sets of a pool are drawn from --seed mixed with this (not the seed's own sets, which
 * leap-verify checks on). */
#define BASE_SEED 0xbe4c4u

/* Per-call times of blocks, or ratios of pairs (one sample each), and the calls they hold. */
struct series {
	double *x;
	size_t n, cap;
	long calls;
};

/* The state of one record's timing. */
struct rec {
	struct leap_bencher *B;
	const struct leap_task *t;
	enum leap_backend b;
	struct leap_bpool *P;
	struct leap_case_data *d;
	struct leap_session cs;      /* the candidate's session */
	struct leap_session *bs;     /* the baseline's (kept in the pool from record to record) */
	int have_cs;
	double target;               /* --target-ci of the backend */
	double ovh;                  /* ms of an empty block (calibrated on the baseline's runner) */
	uint32_t k;                  /* calls of the next pair's blocks */
	double cand_ms, base_ms;     /* the last time per call of each */
	struct series cand, base;    /* times per call of each pair's blocks */
	struct series ratio;         /* per pair: the baseline's time per call over the candidate's */
	int narrow;                  /* pairs in a row whose interval was within the target */
	double cpu_ms;               /* the candidate's CPU time over its timed blocks (-1: none) */
	int running;                 /* cpu: blocks are timed less their stalls (leap_bench_opts.wall_clock) */
	double stall_ms;             /* the candidate's stalls over its timed blocks (left out when running) */
	int prio;                    /* the referee's priority while it times (enum leap_prio_how) */
	uint32_t *perm;              /* [2 * slots] the slots picked: the candidate's, then (cuda: at
				      * [k], of the same region; cpu: at [slots], of its own) the
				      * baseline's */
	long calls;
	/* the outcome */
	int r;                       /* the candidate session's enum leap_sess */
	char *err;                   /* a harness failure */
	json_t *mismatch;
	char *mmsg;
	int overrun;                 /* the parameter whose guard was damaged, or -1 */
	long bad_call;
	uint32_t bad_set;
	double block_limit;          /* the wall limit of the block that timed out (s), or 0 */
};

/* A list of data moves for the owner (cuda). */
struct xfers {
	struct leap_run_xfer *x;
	size_t n, cap;
};

/* The pieces, in the order they are defined below. */
static json_t *time_record(struct rec *R, const char *artifact, const char *base_art, enum leap_status *st);
static int rec_loop(struct rec *R);
static int session_open(struct leap_verifier *v, struct leap_session *s, enum leap_backend b, const char *artifact,
			const struct leap_session_opts *o, char **err);
static int calibrate(struct rec *R);
static int pair(struct rec *R, uint32_t k, int cand_first, int sample);
static uint32_t next_k(const struct rec *R, int from_warmup);
static double block_target(const struct leap_bench_opts *o);
static int rec_done(struct rec *R, double elapsed);
static int cand_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n, int first);
static int base_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n);
static double per_call(const struct rec *R, const struct leap_block *bt, uint32_t n);
static double block_ms(const struct rec *R, const struct leap_block *bt);
static double base_call_ms(const struct rec *R);
static void pick_slots(struct rec *R, uint32_t *perm, uint32_t n);
static void stage(struct rec *R, struct leap_session *s, const uint32_t *sets, const uint32_t *slots, uint32_t n);
static int check_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, const uint32_t *bslots,
		uint32_t n);
static json_t *check_call(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot, int inputs, char **msg);
static int identical(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot);
static struct leap_session *view(struct rec *R);
static int in_place(const struct rec *R);
static void series_add(struct series *s, double v, uint32_t calls);
static void series_stats(const struct series *s, struct leap_stats *st);
static void xf_add(struct xfers *xs, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off, uint64_t len,
		const uint8_t *pattern, uint32_t elsize);
static uint32_t space_of(uint64_t off, uint32_t in_space, uint32_t out_space, uint64_t *local);
static int xf_run(struct rec *R, struct xfers *xs, int flush);
static int stage_dev(struct rec *R, int client, const uint32_t *sets, const uint32_t *slots, uint32_t n);
static int fetch_dev(struct rec *R, int client, const uint32_t *slots, uint32_t n);
static int open_sessions(struct rec *R, const char *artifact, const char *base_art);
static void close_sessions(struct rec *R, char **why, int *timeout, struct leap_buf *output);
static struct leap_session_opts session_opts(struct leap_bencher *B, const struct leap_case_data *d,
		enum leap_backend b, uint32_t calls, int freeze);
static json_t *verdict_failed(struct rec *R, const char *why, int timeout, enum leap_status *st);
static json_t *verdict_wrong(struct rec *R, enum leap_status *st);
static json_t *verdict_timed(struct rec *R, const char *base_art);
static json_t *timed_fields(struct rec *R, const struct leap_stats *cst, const struct leap_stats *bst);
static void floor_check(struct rec *R, const char *base_art, const struct leap_stats *cst, json_t *out,
		const char **status, struct leap_buf *msg);
static json_t *stats_json(const struct leap_stats *s);
static void rec_free(struct rec *R);
static int lock_pool_device(struct leap_bencher *B, const struct leap_bpool *P, enum leap_backend b, char **err);
static char *baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, char **err);
static struct leap_bpool *pool_get(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
		uint64_t seed, const char *base_art, int *nodev, char **err);
static int base_calls(struct leap_bencher *B, struct leap_case_data *d0, enum leap_backend b, const char *art,
		uint64_t seed, double *call_ms, struct leap_bpool *P, char **err);
static char *memo_path(struct leap_bencher *B, const struct leap_task *t, const struct leap_case *c,
		const char *base_art);
static int memo_recall(const char *path, struct leap_bpool *P);
static void memo_remember(const char *path, const struct leap_bpool *P);
static void pool_size(struct leap_bencher *B, struct leap_bpool *P, const struct leap_case_data *d0,
		enum leap_backend b);
static uint64_t region_budget(struct leap_bencher *B, enum leap_backend b);
static void set_bytes(const struct leap_case_data *d, uint64_t *in, uint64_t *out);
static uint32_t pool_fresh(struct leap_bpool *P, int make);
static void pool_make(struct leap_bpool *P, uint32_t s);
static uint64_t pool_dev_off(const struct leap_bpool *P, uint32_t s, size_t param);
static int device_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
		const struct leap_case_data *d, double *gbs, double *gflops);
static const struct leap_memfloor *cpu_memfloor(struct leap_bencher *B, const char *device);
static int memfloor_from_json(const json_t *j, struct leap_memfloor *f);

/* ---- one record ---- */

/* leap_bench_artifact (bench.h): the locks, the pool, then time_record. */
json_t *leap_bench_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
			    const char *artifact, uint64_t seed, enum leap_status *st, char **err)
{
	double t0 = leap_now();
	*err = NULL;
	*st = LEAP_ST_NONE;
	char *base_art = baseline_artifact(B, t, b, err);
	if (!base_art)
		return NULL;
	struct rec R;
	memset(&R, 0, sizeof R);
	R.B = B;
	R.t = t;
	R.b = b;
	json_t *out = NULL;
	struct leap_prio prio;
	R.prio = leap_prio_raise(&prio); /* the referee takes the CPU first (prio.h) */
	/* cpu: the pool is made under the timing lock (its baseline runs on the timed cores), which
	 * also holds back leap-compile and leap-verify of this cache; cuda: the lock is the GPU's,
	 * named by the UUID the pool's baseline found */
	int cpu = b == LEAP_BACKEND_CPU, lock[2] = {-1, -1}, nodev = 0;
	int locked = cpu && leap_timing_lock(B->v->o.cache, &B->lock_said, lock, &R.err) == 0;
	if ((!cpu || locked) && (R.P = pool_get(B, t, b, seed, base_art, &nodev, &R.err)) && !cpu)
		locked = (lock[0] = lock_pool_device(B, R.P, b, &R.err)) >= 0;
	if (locked && R.P) {
		R.d = &R.P->d;
		out = time_record(&R, artifact, base_art, st);
	} else if (nodev) {
		out = json_pack("{s:s,s:s++}", "status", "no_device", "message", "Not timed: ", R.err, ".");
		free(R.err);
		R.err = NULL;
	}
	leap_timing_unlock(lock);
	leap_prio_restore(&prio);
	if (out) {
		json_object_set_new(out, "seed", json_integer((json_int_t)seed));
		json_object_set_new(out, "ms", json_real((leap_now() - t0) * 1e3));
	} else {
		*err = R.err ? R.err : xstrdup("internal error: no verdict");
		R.err = NULL;
		*st = LEAP_ST_NONE;
	}
	free(R.err);
	rec_free(&R);
	free(base_art);
	return out;
}

/* Times one record on the pool (the device lock held). Returns the bench object, or NULL with
 * R->err. */
static json_t *time_record(struct rec *R, const char *artifact, const char *base_art, enum leap_status *st)
{
	R->overrun = -1;
	R->perm = xcalloc(2 * (size_t)R->P->slots, sizeof *R->perm);
	R->target = R->B->o.target_ci[R->b];
	json_t *out = NULL;
	if (open_sessions(R, artifact, base_art) == 0 && R->r == LEAP_SESS_OK)
		rec_loop(R);
	char *why = NULL;
	int timeout = 0;
	struct leap_buf output = {0};
	close_sessions(R, &why, &timeout, &output);
	if (!R->err) {
		if (R->r != LEAP_SESS_OK)
			out = verdict_failed(R, why, timeout, st);
		else if (R->mismatch || R->overrun >= 0)
			out = verdict_wrong(R, st);
		else
			out = verdict_timed(R, base_art);
		json_object_set_new(out, "device", json_string(R->P->device)); /* trusted: the baseline's runner said it */
		json_object_set_new(out, "case", leap_case_json(R->t, leap_task_bench_case(R->t, R->b)));
		if (output.len)
			json_object_set_new(out, "output", json_string(output.s));
	}
	free(why);
	leap_buf_free(&output);
	return out;
}

/* The timing loop: calibration, a warm-up pair (one call each, the baseline's first), then pairs
 * in alternating order until rec_done. Returns 0, or -1 with R->err. The candidate's failures
 * end it with R->r / R->mismatch / R->overrun. */
static int rec_loop(struct rec *R)
{
	double t0 = leap_now();
	uint64_t ns;
	/* the running clock only where both runners' stalls are reported: a ratio of two clocks
	 * would be no ratio; never on cuda, where the device works while its host thread waits */
	R->running = R->b == LEAP_BACKEND_CPU && !R->B->o.wall_clock && leap_sandbox_stalled(&R->cs.sb, &ns) == 0 &&
		     leap_sandbox_stalled(&R->bs->sb, &ns) == 0;
	if (calibrate(R))
		return -1;
	R->base_ms = R->P->call_ms;
	int r = pair(R, 1, 0, 0);
	if (r)
		return r < 0 ? -1 : 0;
	R->k = next_k(R, 1);
	for (long i = 0;; i++) {
		if ((r = pair(R, R->k, i % 2 == 0, 1)))
			return r < 0 ? -1 : 0;
		R->k = next_k(R, 0);
		if (rec_done(R, leap_now() - t0) || leap_signal_caught())
			return 0;
	}
}

/* ---- the loop's steps ---- */

/* The cost of a block beyond its calls: empty blocks (the same thaw, go, done and freeze, no
 * call, the same table walk) on the baseline's runner, which the candidate cannot slow down.
 * Returns 0 or -1. */
static int calibrate(struct rec *R)
{
	double x[CALIBRATE_BLOCKS];
	uint32_t k = R->P->kb;
	for (int i = 0; i < CALIBRATE_BLOCKS; i++) {
		struct leap_block bt;
		pick_slots(R, R->perm, k);
		if (leap_session_block(R->bs, R->d, R->perm, k, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK) {
			R->err = xasprintf("the baseline of task '%s' failed to calibrate: %s", R->t->id, R->bs->last.msg);
			return -1;
		}
		x[i] = block_ms(R, &bt);
	}
	/* the least: the block's fixed cost, which noise (a preemption) can only lengthen */
	struct leap_stats st;
	leap_stats(x, CALIBRATE_BLOCKS, &st);
	R->ovh = st.min;
	return 0;
}

/* One pair: k fresh sets, the candidate's block and the baseline's on them (in slots of their
 * own, in the order `cand_first`), then every call of the candidate checked against the
 * baseline's outputs. `sample`: the pair's times and ratio count (not the warm-up). Returns 0,
 * 1 when the candidate ended the record, or -1 (the harness: R->err).
 * On cpu the candidate's outputs are compared with the baseline's in the baseline's own slot,
 * where its block left them: they are never copied out. */
static int pair(struct rec *R, uint32_t k, int cand_first, int sample)
{
	uint32_t sets[LEAP_RUN_MAX_CALLS];
	for (uint32_t j = 0; j < k; j++) /* cpu: made in each block's slots by stage */
		sets[j] = pool_fresh(R->P, R->b == LEAP_BACKEND_CUDA);
	uint32_t *cslots = R->perm, *bslots = R->perm + (R->b == LEAP_BACKEND_CUDA ? k : R->P->slots);
	if (R->b == LEAP_BACKEND_CUDA) {
		pick_slots(R, cslots, 2 * k); /* of the owner's one host region */
	} else {
		pick_slots(R, cslots, k);
		pick_slots(R, bslots, k);
	}
	if (!cand_first && base_block(R, sets, bslots, k))
		return -1;
	if (cand_block(R, sets, cslots, k, !sample))
		return 1;
	if (cand_first && base_block(R, sets, bslots, k))
		return -1;
	if ((R->b == LEAP_BACKEND_CUDA && fetch_dev(R, 1, cslots, k)) || check_block(R, sets, cslots, bslots, k))
		return R->err ? -1 : 1;
	R->calls += k;
	if (sample) {
		series_add(&R->cand, R->cand_ms, k);
		series_add(&R->base, R->base_ms, k);
		series_add(&R->ratio, R->base_ms / R->cand_ms, k);
	}
	return 0;
}

/* The next pair's calls: both blocks aim at the block target (the slower one reaches it),
 * changing by at most a factor of two, within the pool's slots. */
static uint32_t next_k(const struct rec *R, int from_warmup)
{
	double slower = R->cand_ms > R->base_ms ? R->cand_ms : R->base_ms;
	double k = block_target(&R->B->o) / (slower > 1e-6 ? slower : 1e-6);
	if (!from_warmup) {
		double lo = R->k / 2.0, hi = 2.0 * R->k;
		k = k < lo ? lo : k > hi ? hi : k;
	}
	return k < 1 ? 1 : k > R->P->kb ? R->P->kb : (uint32_t)k;
}

/* The block length aimed at: --block-ms, shorter when --max-time is small, so that a record
 * still gets --min-runs blocks of each side within its budget. */
static double block_target(const struct leap_bench_opts *o)
{
	double t = o->max_time * 1e3 / (4.0 * (double)(o->min_runs > 0 ? o->min_runs : 1));
	return t < o->block_ms ? (t > 0.5 ? t : 0.5) : o->block_ms;
}

/* The stopping rule of a record: --max-runs pairs, or at least --min-runs and either the
 * speedup's interval within --target-ci (twice in a row) or --max-time spent. */
static int rec_done(struct rec *R, double elapsed)
{
	struct leap_stats rs;
	leap_stats_serial(R->ratio.x, R->ratio.n, &rs);
	return leap_bench_done(&rs, R->B->o.min_runs, R->B->o.max_runs, R->target, elapsed, R->B->o.max_time, &R->narrow);
}

/* ---- the blocks of a pair ---- */

/* The candidate's block: sets[j] in slots[j], n calls, timed, within the record's bounds
 * (SLOW). `first`: its first call in the record. Returns 0, or 1 when the record ends (R->r). */
static int cand_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n, int first)
{
	if (R->b == LEAP_BACKEND_CUDA ? stage_dev(R, 1, sets, slots, n) : (stage(R, &R->cs, sets, slots, n), 0))
		return 1;
	struct leap_block bt;
	double saved = R->cs.sb.deadline;
	double limit = (first ? FIRST_GRACE : BLOCK_GRACE) + n * SLOW * base_call_ms(R) / 1e3;
	if (leap_now() + limit < saved)
		R->cs.sb.deadline = leap_now() + limit;
	R->r = leap_session_block(&R->cs, R->d, slots, n, LEAP_RUN_OP_CALL, &bt);
	if (R->r == LEAP_SESS_TIMEOUT && R->cs.sb.deadline < saved)
		R->block_limit = limit;
	R->cs.sb.deadline = saved;
	if (R->r != LEAP_SESS_OK)
		return 1;
	R->cand_ms = per_call(R, &bt, n);
	if (bt.stall_ms > 0)
		R->stall_ms += bt.stall_ms;
	if (R->cpu_ms >= 0)
		R->cpu_ms = bt.cpu_ms >= 0 ? R->cpu_ms + bt.cpu_ms : -1;
	return 0;
}

/* The baseline's block on the same sets (in slots of its own): timed, its outputs kept as the
 * sets' expected outputs. Returns 0, or -1 (the baseline failed: R->err). */
static int base_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	int cuda = R->b == LEAP_BACKEND_CUDA;
	if (cuda ? stage_dev(R, 0, sets, slots, n) : (stage(R, R->bs, sets, slots, n), 0))
		return -1;
	struct leap_block bt;
	int r = leap_session_block(R->bs, R->d, slots, n, LEAP_RUN_OP_CALL, &bt);
	if (r == LEAP_SESS_OK && cuda && fetch_dev(R, 0, slots, n))
		return -1;
	if (r != LEAP_SESS_OK) {
		R->err = xasprintf("the baseline of task '%s' failed while timed: %s", R->t->id,
				   R->bs->last.msg[0] ? R->bs->last.msg : "its runner died");
		return -1;
	}
	for (uint32_t j = 0; !in_place(R) && j < n; j++) /* else check_block reads them in place */
		leap_case_expect(R->d, sets[j], slots[j], R->bs->arena);
	R->base_ms = per_call(R, &bt, n);
	return 0;
}

/* A block's time on the record's clock: on the running clock less the time the runner's
 * processes all waited for a CPU that others held (time in which none of them ran cannot be
 * their work, and on a shared machine it is most of the noise: bench/README.md section 6). */
static double block_ms(const struct rec *R, const struct leap_block *bt)
{
	return bt->ms - (R->running && bt->stall_ms > 0 ? bt->stall_ms : 0);
}

/* The time per call of a block of n calls less the empty block's cost (never below 1 ns). */
static double per_call(const struct rec *R, const struct leap_block *bt, uint32_t n)
{
	double per = (block_ms(R, bt) - R->ovh) / n;
	return per > 1e-6 ? per : 1e-6;
}

/* The baseline's time per call in this record: the median of its timed blocks, or its warm-up
 * (or, before that, what it took when the pool was made). */
static double base_call_ms(const struct rec *R)
{
	if (R->base.n) {
		struct leap_stats st;
		series_stats(&R->base, &st);
		return st.median;
	}
	return R->base_ms > 0 ? R->base_ms : R->P->call_ms;
}

/* Picks n distinct slots of a region in random order into perm[0..n) (perm holds a region's
 * slots). */
static void pick_slots(struct rec *R, uint32_t *perm, uint32_t n)
{
	uint32_t m = R->P->slots;
	for (uint32_t i = 0; i < m; i++)
		perm[i] = i;
	for (uint32_t i = 0; i < n && i < m; i++) {
		uint32_t j = i + (uint32_t)(leap_rng_next(&R->P->rng) % (m - i));
		uint32_t x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
}

/* Stages sets[0..n) into slots[0..n) of session s (cpu), right before its block: each set
 * derived straight into its slot with streaming stores, so that the block finds none of its
 * inputs in a cache whatever ran before (stream.h), and its outputs poisoned. Both blocks of a
 * pair start alike that way. Taken back, with what showed it (bench/README.md section 6):
 * copying the inputs from a set derived once (the first block found them in the cache more than
 * the second: a column maximum 40% faster when first); poisoning the outputs past the caches
 * too (the self-test's interval then covered 1 in 75% to 97.5% of runs); staging the second
 * block from the first's slots (vector_add's pairs spread twice as wide); leaving the
 * baseline's outputs unpoisoned (an identical candidate measured 1.6% faster). */
static void stage(struct rec *R, struct leap_session *s, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	const struct leap_bpool *P = R->P;
	struct leap_case_recipe r[LEAP_RUN_MAX_CALLS];
	for (uint32_t j = 0; j < n; j++) {
		uint32_t base = P->ring_base[sets[j]];
		r[j] = (struct leap_case_recipe){.slot = slots[j], .src = base, .donor = P->cap + base,
						 .seed = P->ring_seed[sets[j]]};
	}
	leap_session_derive(s, R->d, r, n, FRESH_EVERY, R->B->stage_threads);
}

/* Checks every call of a candidate block (sets[j] in slots[j]; the baseline's block of the pair
 * ran set j in bslots[j]); records the first failure. Returns 0 or 1 (failed). */
static int check_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, const uint32_t *bslots,
		       uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		int bad = leap_session_guards(view(R), R->d, slots[j]);
		if (bad < 0 && identical(R, sets[j], slots[j], bslots[j]))
			continue;
		/* inputs are checked where the candidate could write them: an unsealed host region,
		 * against the set made in its own buffers (only then: a candidate whose outputs are
		 * right but not the baseline's to the bit comes here on every call); on cuda they are
		 * staged afresh from the pool for every block, so a changed input can only make that
		 * call's own outputs wrong */
		int inputs = R->b == LEAP_BACKEND_CPU && !R->cs.sealed;
		if (inputs)
			pool_make(R->P, sets[j]);
		json_t *mm = NULL;
		char *m = NULL;
		if (bad < 0 && !(mm = check_call(R, sets[j], slots[j], bslots[j], inputs, &m)))
			continue;
		if (mm && !R->P->made[sets[j]] && leap_case_quotes_inputs(R->d)) {
			/* the message quotes the set's inputs: made now, and the call checked again */
			char *m2 = NULL;
			pool_make(R->P, sets[j]);
			json_t *mm2 = check_call(R, sets[j], slots[j], bslots[j], 0, &m2);
			if (mm2) {
				json_decref(mm);
				free(m);
				mm = mm2;
				m = m2;
			}
		}
		R->overrun = bad;
		R->mismatch = mm;
		R->mmsg = m;
		R->bad_call = R->calls + j;
		R->bad_set = sets[j];
		return 1;
	}
	return 0;
}

/* The element-wise check of one call (set `set` in the candidate's slot `slot`): on cpu against
 * the baseline's outputs in its own slot `bslot`, where its block left them (no copy), on cuda
 * against the set's expected outputs. Returns NULL or the mismatch (*msg its message). */
static json_t *check_call(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot, int inputs, char **msg)
{
	struct leap_errstats es = {0, 0};
	return leap_case_check_against(R->d, set, slot, view(R)->arena, in_place(R) ? R->bs->arena : NULL, bslot, inputs,
				       &es, msg);
}

/* 1 when every output of slot `slot` is, byte for byte, the expected output of set `set`, or
 * in place the baseline's output in its slot `bslot` (the common case on cpu, where the candidate
 * often sums in the baseline's order): no element-wise comparison needed. */
static int identical(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot)
{
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	if (!R->cs.sealed)
		return 0; /* inputs must be compared too */
	for (size_t p = 0; p < np; p++) {
		const unsigned char *want = !d->want[(size_t)set * np + p] ? NULL
					    : in_place(R) ? R->bs->arena + d->out[(size_t)bslot * np + p]
							: d->want[(size_t)set * np + p];
		if (want && memcmp(view(R)->arena + d->out[(size_t)slot * np + p], want, (size_t)d->rp[p].bytes))
			return 0;
	}
	return 1;
}

/* 1 where the candidate's outputs are checked against the baseline's in the baseline's own
 * slot (cpu: this process maps both); on cuda the baseline's are kept as the set's expected
 * outputs right after its block. */
static int in_place(const struct rec *R)
{
	return R->b == LEAP_BACKEND_CPU;
}

/* Where this process reads the outputs of a block: the candidate's own shared memory (cpu), or
 * the owner's host region the outputs were fetched into (cuda). */
static struct leap_session *view(struct rec *R)
{
	return R->b == LEAP_BACKEND_CUDA ? R->bs : &R->cs;
}

/* ---- samples ---- */

/* Adds one sample v, of `calls` calls, to s. */
static void series_add(struct series *s, double v, uint32_t calls)
{
	xgrow((void **)&s->x, &s->cap, s->n + 1, sizeof *s->x);
	s->x[s->n++] = v;
	s->calls += calls;
}

/* The statistics of s (its samples stay in their order). */
static void series_stats(const struct series *s, struct leap_stats *st)
{
	double *tmp = xmalloc((s->n ? s->n : 1) * sizeof *tmp);
	if (s->n) /* an empty series has no array: memcpy from NULL is undefined even for 0 bytes */
		memcpy(tmp, s->x, s->n * sizeof *tmp);
	leap_stats(tmp, s->n, st);
	free(tmp);
}

/* ---- cuda: the owner (the baseline's trusted runner) moves the data ---- */

static void xf_add(struct xfers *xs, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off, uint64_t len,
		   const uint8_t *pattern, uint32_t elsize)
{
	xgrow((void **)&xs->x, &xs->cap, xs->n + 1, sizeof *xs->x);
	struct leap_run_xfer *x = &xs->x[xs->n++];
	memset(x, 0, sizeof *x);
	*x = (struct leap_run_xfer){.src_space = src, .dst_space = dst, .src_off = src_off, .dst_off = dst_off, .len = len,
				    .elsize = elsize};
	if (pattern)
		memcpy(x->pattern, pattern, elsize);
}

/* A host or device space and offset for an offset of the layout (IN below LEAP_RUN_OUT_BASE). */
static uint32_t space_of(uint64_t off, uint32_t in_space, uint32_t out_space, uint64_t *local)
{
	*local = off < LEAP_RUN_OUT_BASE ? off : off - LEAP_RUN_OUT_BASE;
	return off < LEAP_RUN_OUT_BASE ? in_space : out_space;
}

/* Sends the moves to the owner, in pieces its call table holds. Returns 0, or -1 with R->err. */
static int xf_run(struct rec *R, struct xfers *xs, int flush)
{
	size_t per = R->bs->rg->table_cap / sizeof *xs->x, done = 0;
	int r = LEAP_SESS_OK;
	while (r == LEAP_SESS_OK && done < xs->n) {
		size_t k = xs->n - done < per ? xs->n - done : per;
		r = leap_session_xfer(R->bs, xs->x + done, (uint32_t)k, flush && done + k == xs->n);
		done += k;
	}
	free(xs->x);
	memset(xs, 0, sizeof *xs);
	if (r != LEAP_SESS_OK && !R->err)
		R->err = xasprintf("the baseline's runner failed to move the data of task '%s': %s", R->t->id,
				   R->bs->last.msg);
	return r == LEAP_SESS_OK ? 0 : -1;
}

/* Stages sets[0..n) into slots[0..n) of the candidate's device regions (client) or the
 * baseline's (own): a set's inputs go to the device pool once, then to the slot; outputs are
 * poisoned; the L2 cache is flushed unless --hot. Returns 0 or -1. */
static int stage_dev(struct rec *R, int client, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	struct leap_bpool *P = R->P;
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	uint32_t tin = client ? LEAP_RUN_S_CLIENT_IN : LEAP_RUN_S_DEV_IN, tout = client ? LEAP_RUN_S_CLIENT_OUT : LEAP_RUN_S_DEV_OUT;
	struct xfers xs = {0};
	for (uint32_t j = 0; j < n; j++) {
		uint32_t s = sets[j], x = slots[j];
		int up = !P->on_dev[s];
		if (up)
			leap_case_upload(d, s, x, R->bs->arena); /* through the owner's host slot */
		for (size_t p = 0; p < np; p++) {
			const struct leap_run_param *rp = &d->rp[p];
			size_t k = (size_t)x * np + p;
			uint64_t local;
			if (rp->kind == LEAP_RUN_K_OUT) {
				xf_add(&xs, LEAP_RUN_S_FILL, 0, tout, d->out[k] - LEAP_RUN_OUT_BASE, rp->bytes, rp->poison, rp->elsize);
				continue;
			}
			if (rp->kind == LEAP_RUN_K_SCALAR)
				continue;
			uint64_t pool = pool_dev_off(P, s, p);
			if (up) {
				uint32_t hs = space_of(d->in[k], LEAP_RUN_S_HOST_IN, LEAP_RUN_S_HOST_OUT, &local);
				xf_add(&xs, hs, local, LEAP_RUN_S_POOL, pool, rp->bytes, NULL, 0);
			}
			uint32_t ts = space_of(d->in[k], tin, tout, &local);
			xf_add(&xs, LEAP_RUN_S_POOL, pool, ts, local, rp->bytes, NULL, 0);
		}
		P->on_dev[s] = 1;
	}
	return xf_run(R, &xs, !R->B->o.hot);
}

/* Brings the outputs of slots[0..n) of the candidate's (client) or the baseline's device
 * regions, guards included, into the same place of the owner's host output region, where this
 * process reads them. Returns 0 or -1. */
static int fetch_dev(struct rec *R, int client, const uint32_t *slots, uint32_t n)
{
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	struct xfers xs = {0};
	for (uint32_t j = 0; j < n; j++) {
		for (size_t p = 0; p < np; p++) {
			const struct leap_run_param *rp = &d->rp[p];
			if (rp->kind != LEAP_RUN_K_OUT && rp->kind != LEAP_RUN_K_INOUT)
				continue;
			struct leap_run_range r[4];
			leap_run_canary_ranges(d->out[(size_t)slots[j] * np + p] - LEAP_RUN_OUT_BASE, rp->bytes, r);
			uint64_t lo = r[0].off, hi = r[3].off + r[3].len;
			xf_add(&xs, client ? LEAP_RUN_S_CLIENT_OUT : LEAP_RUN_S_DEV_OUT, lo, LEAP_RUN_S_HOST_OUT, lo, hi - lo, NULL, 0);
		}
	}
	return xs.n ? xf_run(R, &xs, 0) : 0;
}

/* ---- the sessions ---- */

/* A session for the verifier's runners, on the device it has now: leap-bench moves v's device
 * from slot to slot, so the host is taken at each start. */
static int session_open(struct leap_verifier *v, struct leap_session *s, enum leap_backend b, const char *artifact,
			const struct leap_session_opts *o, char **err)
{
	struct leap_session_host h = leap_verifier_host(v);
	return leap_session_open(&h, s, b, artifact, o, err);
}

/* Starts the candidate's session and, unless the pool keeps a live one, the baseline's (the
 * baseline first: on cuda it owns the device memory); both are frozen between blocks.
 * Returns 0 (R->r says whether the candidate's started), or -1 with R->err. */
static int open_sessions(struct rec *R, const char *artifact, const char *base_art)
{
	struct leap_bpool *P = R->P;
	int cuda = R->b == LEAP_BACKEND_CUDA;
	struct leap_session_opts so = session_opts(R->B, R->d, R->b, P->slots, 1);
	if (P->have_bs && P->bs.dead) {
		leap_session_end(&P->bs, NULL, NULL, NULL, 0);
		P->have_bs = 0;
	}
	if (!P->have_bs) {
		struct leap_session_opts os = so;
		if (cuda) { /* the owner of the device memory, its pool of input sets included */
			os.role = "owner";
			os.pool_len = (uint64_t)P->cap * P->in_set;
			memset(P->on_dev, 0, P->cap);
		}
		int r = session_open(R->B->v, &P->bs, R->b, base_art, &os, &R->err);
		if (r < 0)
			return -1;
		P->have_bs = 1;
		if (r != LEAP_SESS_OK) {
			R->err = xasprintf("the baseline of task '%s' failed to start: %s", R->t->id, P->bs.last.msg);
			return -1;
		}
	}
	if (cuda) { /* the owner's client regions, cleared for it, by descriptor */
		so.role = "client";
		so.owner = &P->bs;
	}
	R->bs = &P->bs;
	R->bs->sb.deadline = leap_now() + R->B->sb.timeout; /* a new record, a new deadline */
	if (!P->have_creg) {
		if (leap_regions_make(&P->creg, &so, &R->err))
			return -1;
		P->have_creg = 1;
	}
	so.regions = &P->creg;
	so.hello_s = HELLO_GRACE + HELLO_SLOW * P->start_ms / 1e3;
	R->r = session_open(R->B->v, &R->cs, R->b, artifact, &so, &R->err);
	if (R->r < 0)
		return -1;
	R->have_cs = 1;
	return 0;
}

/* Ends both sessions; how the candidate's runner died, if it did, goes to *why and *timeout,
 * its output to `output`. A sandbox that never ran the runner is a harness error (R->err). */
static void close_sessions(struct rec *R, char **why, int *timeout, struct leap_buf *output)
{
	if (R->have_cs)
		leap_session_end(&R->cs, why, timeout, output, 2048);
	struct leap_bpool *P = R->P;
	if (P->have_bs && (P->bs.dead || P->bs.sb.child.pid <= 0)) {
		leap_session_end(&P->bs, NULL, NULL, NULL, 0);
		P->have_bs = 0;
		if (!R->err)
			R->err = leap_sandbox_start_error(&P->bs.sb);
	}
	if (!R->err && R->have_cs)
		R->err = leap_sandbox_start_error(&R->cs.sb);
}

/* Session options for case d with `calls` calls per block: sealed inputs, the bencher's
 * sandbox (cores, groups), frozen between blocks when `freeze`. */
static struct leap_session_opts session_opts(struct leap_bencher *B, const struct leap_case_data *d,
					     enum leap_backend b, uint32_t calls, int freeze)
{
	struct leap_session_opts so;
	memset(&so, 0, sizeof so);
	leap_session_fit(&so, d, calls);
	so.seal = 1;
	so.freeze = freeze ? B->o.freezer : LEAP_FREEZE_NONE;
	so.sb = &B->sb;
	so.lazy = b == LEAP_BACKEND_CUDA; /* the host regions are staging there: fault in what is used */
	return so;
}

/* ---- the verdict ---- */

/* The verdict when the candidate's runner failed while timed: no output of the benchmark size
 * was checked, so the record fails too (leap_bench_failed_status). */
static json_t *verdict_failed(struct rec *R, const char *why, int timeout, enum leap_status *st)
{
	struct leap_buf msg = {0};
	const char *status = leap_bench_failed_status(R->r, timeout, st);
	const struct leap_run_reply *last = &R->cs.last;
	if (R->r == LEAP_SESS_REPLY && (last->status == LEAP_RUN_NO_DEVICE || last->status == LEAP_RUN_NOMEM)) {
		leap_buf_addf(&msg, "Your code's runner said \"%s\" while being timed, although the baseline ran on this "
				    "device: a runtime error (benchmark case %s).", last->msg, R->d->desc);
	} else if (R->r == LEAP_SESS_REPLY) {
		leap_buf_addf(&msg, "Runtime error while being timed (call %ld): %s.", R->calls + last->call, last->msg);
	} else if (R->r == LEAP_SESS_FREEZE) {
		leap_buf_addf(&msg, "Your code could not be timed: %s (benchmark case %s).", last->msg, R->d->desc);
	} else if (timeout && R->block_limit > 0) {
		leap_buf_addf(&msg, "A block of calls did not finish within %.3g s (a hundred times the baseline's "
				    "time for the same calls, plus a grace): your code slowed down or hung while being "
				    "timed (benchmark case %s).", R->block_limit, R->d->desc);
	} else {
		leap_buf_addf(&msg, "Your code %s while being timed (benchmark case %s).", why ? why : "died", R->d->desc);
	}
	json_t *o = json_pack("{s:s,s:s}", "status", status, "message", msg.s);
	leap_buf_free(&msg);
	return o;
}

/* The verdict of a wrong output or a write outside a buffer while timed: the record fails. */
static json_t *verdict_wrong(struct rec *R, enum leap_status *st)
{
	struct leap_buf msg = {0};
	json_t *o;
	if (R->overrun >= 0) {
		*st = LEAP_ST_RUNTIME_ERROR;
		leap_buf_addf(&msg, "Your code wrote outside the bounds of buffer %s while being timed (call %ld, "
				    "benchmark case %s).", R->t->params[R->overrun].name, R->bad_call, R->d->desc);
		o = json_pack("{s:s,s:s}", "status", "runtime_error", "message", msg.s);
	} else {
		*st = LEAP_ST_MISMATCH;
		leap_buf_addf(&msg, "Wrong output while being timed (call %ld, input set %u): %s", R->bad_call, R->bad_set,
			      R->mmsg);
		json_object_set_new(R->mismatch, "call", json_integer(R->bad_call));
		json_object_set_new(R->mismatch, "set", json_integer(R->bad_set));
		o = json_pack("{s:s,s:O,s:s}", "status", "mismatch", "mismatch", R->mismatch, "message", msg.s);
	}
	json_object_set_new(o, "calls", json_integer(R->calls));
	leap_buf_free(&msg);
	return o;
}

/* The verdict of a candidate timed to the end: ok, noisy or suspicious. The speedup is the
 * median of the pairs' ratios, known to within its 95% interval. */
static json_t *verdict_timed(struct rec *R, const char *base_art)
{
	struct leap_stats cst, bst, rst;
	series_stats(&R->cand, &cst);
	series_stats(&R->base, &bst);
	leap_stats_serial(R->ratio.x, R->ratio.n, &rst);
	double sp = rst.median;
	json_t *out = timed_fields(R, &cst, &bst);
	int has_ci = isfinite(rst.rel_ci);
	if (has_ci) {
		json_object_set_new(out, "speedup_ci", json_pack("[f,f]", rst.ci_lo, rst.ci_hi));
		json_object_set_new(out, "speedup_rel_ci", json_real(rst.rel_ci));
	}
	const char *status = "ok";
	struct leap_buf msg = {0};
	floor_check(R, base_art, &cst, out, &status, &msg);
	if (!strcmp(status, "ok") && !has_ci) {
		status = "noisy";
		leap_buf_addf(&msg, "Noisy: only %zu pairs of blocks were timed, too few for an interval: the speedup (%.3gx) "
				    "is not reliable and carries no reward.", rst.n, sp);
	} else if (!strcmp(status, "ok") && rst.rel_ci > R->target) {
		status = "noisy";
		leap_buf_addf(&msg, "Noisy: the speedup is between %.3gx and %.3gx (+-%.2g%%), wider than --target-ci %g%%: "
				    "it is not reliable and carries no reward.", rst.ci_lo, rst.ci_hi, 100 * rst.rel_ci,
			      100 * R->target);
	}
	if (!strcmp(status, "ok"))
		leap_buf_addf(&msg, "Median %.4g ms over %ld calls, baseline %.4g ms: speedup %.3gx (%.3gx to %.3gx).",
			      cst.median, R->cand.calls, bst.median, sp, rst.ci_lo, rst.ci_hi);
	else
		json_object_set_new(out, "measured_speedup", json_real(sp));
	json_object_set_new(out, "speedup", json_real(strcmp(status, "ok") ? 0 : sp));
	json_object_set_new(out, "status", json_string(status));
	json_object_set_new(out, "message", json_string(msg.s ? msg.s : ""));
	leap_buf_free(&msg);
	return out;
}

/* The timing fields of a candidate timed to the end: its statistics, the baseline's, where
 * they ran. */
static json_t *timed_fields(struct rec *R, const struct leap_stats *cst, const struct leap_stats *bst)
{
	json_t *out = stats_json(cst);
	json_object_set_new(out, "calls", json_integer(R->cand.calls));
	json_object_set_new(out, "baseline_ms", json_real(bst->median));
	json_object_set_new(out, "baseline_rel_ci", json_real(isfinite(bst->rel_ci) ? bst->rel_ci : -1.0));
	json_object_set_new(out, "baseline_n", json_integer((json_int_t)bst->n));
	/* what the speedup is against: a vendor library, a hand-written kernel, or on cpu the
	 * reference built with cc -O2 (leap-report says so) */
	json_object_set_new(out, "baseline_kind", json_string(R->P->backend != LEAP_BACKEND_CUDA ? "reference"
							       : R->P->task->baseline_vendor ? "vendor" : "kernel"));
	json_object_set_new(out, "overhead_ms", json_real(R->ovh));
	if (R->cpu_ms >= 0 && R->calls > 0)
		json_object_set_new(out, "cpu_ms", json_real(R->cpu_ms / (double)R->calls));
	json_object_set_new(out, "clock", json_string(R->running ? "running" : "wall"));
	json_object_set_new(out, "referee_priority", json_string(leap_prio_name(R->prio)));
	if (R->running && R->calls > 0)
		json_object_set_new(out, "stall_ms", json_real(R->stall_ms / (double)R->calls));
	json_object_set_new(out, "cores", json_integer(R->B->ncpus));
	json_object_set_new(out, "freezer", json_string(leap_bench_freezer_name(R->B)));
	json_object_set_new(out, "sets", json_integer(R->calls));
	json_object_set_new(out, "target_ci", json_real(R->target));
	return out;
}

/* Roofline fields, and a `suspicious` verdict for a time below the memory floor: on cpu the
 * bytes at the speed of the fastest place they fit (a cache level or memory, for every core of
 * the candidate), on cuda at the device's copy bandwidth. */
static void floor_check(struct rec *R, const char *base_art, const struct leap_stats *cst, json_t *out,
			const char **status, struct leap_buf *msg)
{
	const struct leap_case *bc = leap_task_bench_case(R->t, R->b);
	int64_t bytes = 0, flops = 0;
	int hb = leap_task_eval(R->t, R->t->bytes, bc, &bytes) == 0 && bytes > 0;
	int hf = leap_task_eval(R->t, R->t->flops, bc, &flops) == 0 && flops > 0;
	double bytes_ms = 0, flops_ms = 0, margin, gbs = 0;
	const char *where = "memory";
	if (R->b == LEAP_BACKEND_CPU) {
		const struct leap_memfloor *mf = hb ? cpu_memfloor(R->B, R->P->device) : NULL;
		if (!mf)
			return;
		const struct leap_memlevel *l = leap_memfloor_level(mf, (uint64_t)bytes, R->B->ncpus);
		bytes_ms = leap_memfloor_ms(mf, (uint64_t)bytes, R->B->ncpus);
		gbs = l->gbs * R->B->ncpus;
		where = l->name;
		margin = FLOOR_MARGIN_CPU;
	} else {
		double gflops;
		if (!(hb || hf) || device_probe(R->B, R->b, R->P->device, base_art, R->d, &gbs, &gflops))
			return;
		bytes_ms = hb ? (double)bytes / (gbs * 1e9) * 1e3 : 0;
		flops_ms = hf && gflops > 0 ? (double)flops / (gflops * 1e9) * 1e3 : 0;
		margin = FLOOR_MARGIN_CUDA;
	}
	double floor_ms = bytes_ms > flops_ms ? bytes_ms : flops_ms;
	if (floor_ms > 0) {
		json_object_set_new(out, "floor_ms", json_real(floor_ms));
		json_object_set_new(out, "roofline", json_real(floor_ms / cst->median));
		if (bytes_ms > 0)
			json_object_set_new(out, "floor_level", json_string(where));
	}
	/* Only memory traffic is a hard floor (tensor cores beat the FP32 rate). */
	if (!strcmp(*status, "ok") && bytes_ms > 0 && cst->median < margin * bytes_ms) {
		*status = "suspicious";
		leap_buf_addf(msg, "%.3g ms per call is below %g of the memory floor (%.3g ms to move %lld bytes from %s "
				   "at %.0f GB/s): the kernel cannot be doing the work; no speedup.",
			      cst->median, margin, bytes_ms, (long long)bytes, where, gbs);
	}
}

/* The statistics as the bench object's fields (rel_ci -1 when not known). New reference. */
static json_t *stats_json(const struct leap_stats *s)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:I,s:f}", "median_ms", s->median, "min_ms", s->min, "mean_ms", s->mean,
			 "stdev_ms", s->stdev, "n", (json_int_t)s->n, "rel_ci", isfinite(s->rel_ci) ? s->rel_ci : -1.0);
}

/* Frees what a record holds (the sessions are ended). */
static void rec_free(struct rec *R)
{
	free(R->cand.x);
	free(R->base.x);
	free(R->ratio.x);
	free(R->perm);
	json_decref(R->mismatch);
	free(R->mmsg);
}

/* ---- the input pool ---- */

/* leap_bench_prepare (bench.h): the pool made before the workers fork, under the same lock. */
int leap_bench_prepare(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, uint64_t seed,
		       char **err)
{
	*err = NULL;
	char *base_art = baseline_artifact(B, t, b, err);
	if (!base_art)
		return -1;
	int cpu = b == LEAP_BACKEND_CPU, lock[2] = {-1, -1}, nodev = 0;
	int r = (!cpu || leap_timing_lock(B->v->o.cache, &B->lock_said, lock, err) == 0) &&
			pool_get(B, t, b, seed, base_art, &nodev, err) ? 0 : -1;
	if (r && nodev) { /* each record will say no_device */
		free(*err);
		*err = NULL;
		r = 0;
	}
	leap_timing_unlock(lock);
	free(base_art);
	return r;
}

/* Takes the exclusive lock of the device the pool's baseline ran on (cpu, or the GPU by its
 * UUID). Returns the descriptor, or -1 with *err. */
static int lock_pool_device(struct leap_bencher *B, const struct leap_bpool *P, enum leap_backend b, char **err)
{
	char *path = leap_device_lock_path(B->v->o.cache, P->uuid);
	char *what = b == LEAP_BACKEND_CUDA ? xasprintf("cuda%s", B->v->o.device) : xstrdup("cpu");
	int fd = leap_device_lock(path, LOCK_EX, what, &B->lock_said, err);
	free(path);
	free(what);
	return fd;
}

/* The baseline artifact of t on backend b: reference.c on cpu (built by the verifier),
 * baseline.cu on cuda (built and cached). Returns a new path, or NULL with *err set. */
static char *baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, char **err)
{
	struct leap_verifier *v = B->v;
	char *base_art = NULL;
	if (b == LEAP_BACKEND_CUDA) {
		char *p = xasprintf("%s/baseline.cu", t->dir);
		size_t len;
		char *src = leap_read_file(p, &len, err);
		free(p);
		if (!src)
			return NULL;
		base_art = leap_build_artifact(t, b, src, len, v->o.cache, err);
		free(src);
	} else if (leap_reference(v, t, err)) {
		for (size_t i = 0; i < v->nrefs; i++)
			if (v->refs[i].task == t)
				base_art = xstrdup(v->refs[i].path);
	}
	if (!base_art && !*err)
		*err = xasprintf("no baseline for task '%s'", t->id);
	return base_art;
}

/* About the memory a pool holds: its base sets and their donors, the sets a device keeps
 * (cuda), the candidates' regions and the baseline runner's. */
static uint64_t pool_footprint(const struct leap_bpool *P)
{
	uint64_t in, out;
	set_bytes(&P->d, &in, &out);
	uint64_t sets = 2ull * P->nbase + (P->backend == LEAP_BACKEND_CUDA ? P->cap : 0);
	uint64_t bytes = sets * (in + out);
	if (P->have_creg)
		bytes += P->creg.in_len + P->creg.out_len;
	if (P->have_bs && P->bs.rg)
		bytes += P->bs.rg->in_len + P->bs.rg->out_len;
	return bytes;
}

/* Frees the pools used longest ago until those left, with `room` more, fit in POOLS_KEPT
 * times --pool-memory (or none is left). */
static void pools_trim(struct leap_bencher *B, uint64_t room)
{
	for (;;) {
		uint64_t total = room;
		size_t old = 0;
		for (size_t i = 0; i < B->npools; i++) {
			total += pool_footprint(B->pools[i]);
			if (B->pools[i]->used < B->pools[old]->used)
				old = i;
		}
		if (!B->npools || total <= POOLS_KEPT * B->o.pool_bytes)
			return;
		leap_bpool_free(B->pools[old]);
		B->pools[old] = B->pools[--B->npools];
	}
}

/* The pool of (t, b, seed), made on first use (the pools used longest ago freed first, within
 * POOLS_KEPT). NULL with *err. */
static struct leap_bpool *pool_get(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
				   uint64_t seed, const char *base_art, int *nodev, char **err)
{
	*nodev = 0;
	B->uses++;
	for (size_t i = 0; i < B->npools; i++)
		if (B->pools[i]->task == t && B->pools[i]->backend == b && B->pools[i]->seed == seed) {
			B->pools[i]->used = B->uses;
			return B->pools[i];
		}
	pools_trim(B, B->o.pool_bytes);
	const struct leap_case *c = leap_task_bench_case(t, b);
	struct leap_case_data d0;
	uint32_t nbase = 2;
	if (leap_case_prepare(&d0, t, c, 0, nbase, nbase, err))
		return NULL;
	struct leap_bpool *P = xcalloc(1, sizeof *P);
	*P = (struct leap_bpool){.task = t, .backend = b, .seed = seed, .nbase = nbase, .used = B->uses};
	char *memo = b == LEAP_BACKEND_CPU ? memo_path(B, t, c, base_art) : NULL;
	int r = 0;
	if (memo && memo_recall(memo, P) == 0) {
		leap_case_inputs_sets(&d0, nbase, seed ^ BASE_SEED);
	} else {
		r = base_calls(B, &d0, b, base_art, seed, &P->call_ms, P, err);
		if (!r && memo)
			memo_remember(memo, P);
	}
	free(memo);
	*nodev = r == -2;
	/* the case holds the ring, the donors (last) and at least a region's slots: its layout
	 * has as many slots as it has sets */
	uint32_t nsets = 0;
	if (!r) {
		pool_size(B, P, &d0, b);
		nsets = P->cap + nbase > P->slots ? P->cap + nbase : P->slots;
	}
	if (r || leap_case_prepare(&P->d, t, c, 0, nsets, P->slots, err)) {
		leap_case_free(&d0);
		free(P);
		return NULL;
	}
	P->on_dev = xcalloc(P->cap, 1);
	P->made = xcalloc(P->cap, 1);
	P->ring_base = xcalloc(P->cap, sizeof *P->ring_base);
	P->ring_seed = xcalloc(P->cap, sizeof *P->ring_seed);
	P->rng = leap_random_seed();
	uint64_t donors = leap_rng_next(&P->rng);
	for (uint32_t k = 0; k < nbase; k++) {
		leap_case_swap(&P->d, k, &d0, k);
		/* base set k was drawn with pattern k: its donor too, from the secret stream */
		leap_case_donor(&P->d, P->cap + k, donors, k, FRESH_EVERY);
	}
	leap_case_free(&d0);
	leap_case_fork(&P->d, 0); /* every record forks a sandbox, which never reads the pool */
	P->tol_scale = P->d.tol_scale = leap_task_tol_scale(t, c);
	P->d.tol = B->v->o.tolerance;
	P->d.threads = B->stage_threads; /* every call's check, between blocks */
	xgrow((void **)&B->pools, &B->poolcap, B->npools + 1, sizeof *B->pools);
	B->pools[B->npools++] = P;
	return P;
}

/* Draws the base sets of d0 from the seed and runs the baseline once on each (slot k = set k),
 * twice: what the pool keeps of it is its time per call (the second round's least), its
 * runner's start-up and its device. Its outputs are not kept: a base set is never timed as it
 * is, and every derived set's expected outputs are the baseline's own block's in its pair.
 * Returns 0, -2 when there is no usable device (*err says why), or -1 with *err. */
static int base_calls(struct leap_bencher *B, struct leap_case_data *d0, enum leap_backend b, const char *art,
			uint64_t seed, double *call_ms, struct leap_bpool *P, char **err)
{
	struct leap_session s;
	struct leap_session_opts so = session_opts(B, d0, b, 1, 0);
	so.role = NULL; /* cuda: the runner copies each call's slots (only the outputs and a rough time matter) */
	double t0 = leap_now();
	int r = session_open(B->v, &s, b, art, &so, err);
	P->start_ms = (leap_now() - t0) * 1e3;
	if (r == LEAP_SESS_OK) /* drawn once a device answered */
		leap_case_inputs_sets(d0, d0->nsets, seed ^ BASE_SEED);
	double best = INFINITY;
	for (uint32_t round = 0; r == LEAP_SESS_OK && round < 2; round++)
		for (uint32_t k = 0; r == LEAP_SESS_OK && k < d0->nsets; k++) {
			struct leap_block bt;
			leap_session_stage(&s, d0, k, k);
			r = leap_session_block(&s, d0, &k, 1, LEAP_RUN_OP_CALL, &bt);
			if (r == LEAP_SESS_OK && round == 1 && bt.ms < best)
				best = bt.ms;
		}
	if (r < 0)
		return -1;
	char *why = NULL;
	struct leap_run_reply last = s.last;
	leap_session_end(&s, &why, NULL, NULL, 0);
	if ((*err = leap_sandbox_start_error(&s.sb))) {
		free(why);
		return -1;
	}
	if (r == LEAP_SESS_REPLY && last.status == LEAP_RUN_NO_DEVICE) {
		*err = xstrdup(last.msg);
		free(why);
		return -2;
	}
	if (r != LEAP_SESS_OK) {
		*err = xasprintf("the baseline of task '%s' failed on the benchmark case: %s", d0->t->id,
				 why ? why : last.msg);
		free(why);
		return -1;
	}
	*call_ms = best;
	memcpy(P->uuid, s.hello.uuid, 16);
	snprintf(P->device, sizeof P->device, "%s", s.hello.msg);
	return 0;
}

/* cpu: what making a pool measures of its baseline (the time per call, its runner's start-up,
 * the device its runner names) is remembered under CACHE/pools/, by task, case, baseline
 * artifact, host and cores, so that a later process makes the pool without running the
 * baseline first: in make demo, whose three turns are three leap-bench processes, the baseline's
 * runs were a quarter of each task's first record (bench/README.md section 6). Only sizes and
 * bounds come of it (the calls of a block, the grace of a start-up): a record times its
 * baseline itself, and a baseline that no longer runs fails the record's calibration. The path,
 * or NULL when the host has no name. */
static char *memo_path(struct leap_bencher *B, const struct leap_task *t, const struct leap_case *c,
		       const char *base_art)
{
	char host[256], cores[1024], hex[65];
	if (gethostname(host, sizeof host))
		return NULL;
	host[sizeof host - 1] = 0;
	leap_cpus_format(&B->cpus, cores, sizeof cores);
	json_t *cj = leap_case_json(t, c);
	char *cs = json_dumps(cj, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(cj);
	const char *parts[] = {"pool-baseline-v1", t->id, cs ? cs : "", base_art, host, cores};
	size_t lens[6];
	for (int i = 0; i < 6; i++)
		lens[i] = strlen(parts[i]) + 1; /* with the NUL: ("ab", "c") is not ("a", "bc") */
	leap_sha256_hex(hex, parts, lens, 6);
	free(cs);
	return xasprintf("%s/pools/%s.json", B->v->o.cache, hex);
}

/* Reads a remembered baseline into P. Returns 0, or -1 (none, or not one this version wrote). */
static int memo_recall(const char *path, struct leap_bpool *P)
{
	json_t *j = json_load_file(path, 0, NULL);
	double call = leap_get_num(j, "call_ms", -1), start = leap_get_num(j, "start_ms", -1);
	const char *dev = json_string_value(json_object_get(j, "device"));
	int ok = call > 0 && isfinite(call) && start >= 0 && isfinite(start) && dev && *dev;
	if (ok) {
		P->call_ms = call;
		P->start_ms = start;
		snprintf(P->device, sizeof P->device, "%s", dev);
	}
	json_decref(j);
	return ok ? 0 : -1;
}

/* Remembers P's baseline measures (best effort: a cache that cannot be written only costs the
 * next process the baseline's runs). */
static void memo_remember(const char *path, const struct leap_bpool *P)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	*slash = 0;
	json_t *o = json_pack("{s:f,s:f,s:s}", "call_ms", P->call_ms, "start_ms", P->start_ms, "device", P->device);
	if (o && leap_mkdirs(dir) == 0)
		(void)leap_json_write_file(o, path);
	free(dir);
	json_decref(o);
}

/* Sizes a new pool from the baseline's time per call: a block of the baseline aims at the
 * block target, within what a region of slots and --pool-memory hold (the ring holds the sets
 * of one block, besides the base sets and their donors). On cpu a region has the slots of one
 * block (the candidate's and the baseline's are regions of their own: their memory was a
 * quarter of a large task's first record), on cuda of two (both blocks of a pair are read back
 * through the owner's host region); a region's budget is the same either way. --hot: blocks of
 * one call, so that a call's inputs are the last the device's copies went through (hot in the
 * L2 when one set fits in it). */
static void pool_size(struct leap_bencher *B, struct leap_bpool *P, const struct leap_case_data *d0, enum leap_backend b)
{
	uint64_t in, out;
	set_bytes(d0, &in, &out);
	uint64_t per = in + out + 1;
	double k = ceil(block_target(&B->o) / (P->call_ms > 1e-4 ? P->call_ms : 1e-4));
	uint64_t kmax = region_budget(B, b) / per / 2, ring = B->o.pool_bytes / per;
	ring = ring > 2 * (uint64_t)P->nbase + 1 ? ring - 2 * P->nbase : 1; /* the donors count as sets */
	if (kmax > ring)
		kmax = ring;
	if (kmax > LEAP_RUN_MAX_CALLS / 2)
		kmax = LEAP_RUN_MAX_CALLS / 2;
	if (kmax < 1 || (B->o.hot && b == LEAP_BACKEND_CUDA))
		kmax = 1;
	P->kb = k < 1 ? 1 : k > (double)kmax ? (uint32_t)kmax : (uint32_t)k;
	P->slots = b == LEAP_BACKEND_CUDA ? 2 * P->kb : P->kb;
	P->cap = P->nbase + P->kb;
	P->next = P->nbase;
	/* cuda: the inputs of every set in the owner's device pool, each parameter 256-byte aligned */
	P->in_set = 0;
	for (size_t p = 0; p < d0->t->nparams; p++) {
		const struct leap_run_param *r = &d0->rp[p];
		if (r->kind == LEAP_RUN_K_IN || r->kind == LEAP_RUN_K_INOUT)
			P->in_set += (r->bytes + 255) & ~(uint64_t)255;
	}
}

/* The bytes one region of slots may take: on cpu 256 MiB (a candidate's address space is
 * limited to --memory beyond them); on cuda an eighth of the device's memory (the owner holds
 * its own region, the candidate's and the pool's inputs there), 256 MiB when it is unknown. */
static uint64_t region_budget(struct leap_bencher *B, enum leap_backend b)
{
	uint64_t cpu = 256ull << 20;
	if (b != LEAP_BACKEND_CUDA || !B->v->gpu.done)
		return cpu;
	char *end;
	long idx = strtol(B->v->o.device ? B->v->o.device : "0", &end, 10);
	const struct leap_gpu_dev *g = *end ? NULL : leap_gpu_device(&B->v->gpu.g, (int)idx);
	return g && g->memory_mib > 0 ? (uint64_t)g->memory_mib * (1ull << 20) / 8 : cpu;
}

/* Bytes of the inputs and of the outputs of one set. */
static void set_bytes(const struct leap_case_data *d, uint64_t *in, uint64_t *out)
{
	*in = *out = 0;
	for (size_t p = 0; p < d->t->nparams; p++) {
		const struct leap_run_param *r = &d->rp[p];
		if (r->kind == LEAP_RUN_K_IN || r->kind == LEAP_RUN_K_INOUT)
			*in += r->bytes;
		if (r->kind == LEAP_RUN_K_OUT || r->kind == LEAP_RUN_K_INOUT)
			*out += r->bytes;
	}
}

/* Takes the ring's next set for a new derived set: a base set and a seed of the secret stream,
 * and its inputs made in its buffers when `make` (else where they are needed: stage, pool_make).
 * Returns its index; its expected outputs are for the baseline's block to write. */
static uint32_t pool_fresh(struct leap_bpool *P, int make)
{
	uint32_t s = P->next;
	P->next = P->next + 1 < P->cap ? P->next + 1 : P->nbase;
	P->ring_base[s] = (uint32_t)(leap_rng_next(&P->rng) % P->nbase);
	P->ring_seed[s] = leap_rng_next(&P->rng);
	P->made[s] = 0;
	P->on_dev[s] = 0;
	if (make)
		pool_make(P, s);
	return s;
}

/* Makes the inputs of derived set s in its own buffers, if they are not there. */
static void pool_make(struct leap_bpool *P, uint32_t s)
{
	if (!P->made[s])
		leap_case_derive(&P->d, s, P->ring_base[s], P->cap + P->ring_base[s], P->ring_seed[s], FRESH_EVERY);
	P->made[s] = 1;
}

/* cuda: the offset of parameter `param` of set s in the owner's device pool. */
static uint64_t pool_dev_off(const struct leap_bpool *P, uint32_t s, size_t param)
{
	uint64_t off = (uint64_t)s * P->in_set;
	for (size_t p = 0; p < param; p++) {
		const struct leap_run_param *r = &P->d.rp[p];
		if (r->kind == LEAP_RUN_K_IN || r->kind == LEAP_RUN_K_INOUT)
			off += (r->bytes + 255) & ~(uint64_t)255;
	}
	return off;
}

/* ---- the device ---- */

/* The device's copy bandwidth (GB/s) and FP32 peak (GFLOP/s, 0: unknown), measured once per
 * device name and backend in a runner holding the trusted baseline, cached in memory and
 * under CACHE/devices/. Returns 0, or -1 when the probe failed (no floor then). */
static int device_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
			const struct leap_case_data *d, double *gbs, double *gflops)
{
	if (B->probe_gbs > 0 && !strcmp(B->probe_device, device)) {
		*gbs = B->probe_gbs;
		*gflops = B->probe_gflops;
		return 0;
	}
	char hex[65];
	const char *parts[] = {"device-probe-v1", leap_backend_name(b), device};
	size_t lens[] = {strlen(parts[0]), strlen(parts[1]), strlen(device)};
	leap_sha256_hex(hex, parts, lens, 3);
	char *dir = xasprintf("%s/devices", B->v->o.cache), *path = xasprintf("%s/%s.json", dir, hex);
	json_t *j = json_load_file(path, 0, NULL);
	*gbs = leap_get_num(j, "copy_gbs", 0);
	*gflops = leap_get_num(j, "fp32_gflops", 0);
	json_decref(j);
	if (!(*gbs > 0)) {
		struct leap_session s;
		char *err = NULL;
		struct leap_session_opts so = session_opts(B, d, b, 1, 0);
		int r = session_open(B->v, &s, b, base_art, &so, &err);
		if (r == LEAP_SESS_OK)
			r = leap_session_probe(&s, gbs, gflops);
		if (r >= 0)
			leap_session_end(&s, NULL, NULL, NULL, 0);
		free(err);
		if (r == LEAP_SESS_OK && *gbs > 0 && leap_mkdirs(dir) == 0) {
			json_t *o = json_pack("{s:s,s:s,s:f,s:f}", "device", device, "backend", leap_backend_name(b), "copy_gbs",
					      *gbs, "fp32_gflops", *gflops);
			if (o)
				(void)leap_json_write_file(o, path);
			json_decref(o);
		}
		if (r != LEAP_SESS_OK)
			*gbs = *gflops = 0;
	}
	free(dir);
	free(path);
	if (!(*gbs > 0))
		return -1;
	B->probe_gbs = *gbs;
	B->probe_gflops = *gflops;
	snprintf(B->probe_device, sizeof B->probe_device, "%s", device);
	return 0;
}

/* cpu: the caches and memory of the candidate's cores (leap_memfloor_measure on the first of
 * them, once per process and cached under CACHE/devices/ by device name and cores), or NULL
 * when they could not be measured. */
static const struct leap_memfloor *cpu_memfloor(struct leap_bencher *B, const char *device)
{
	if (B->have_mf)
		return B->have_mf > 0 ? &B->mf : NULL;
	char cores[1024], hex[65];
	leap_cpus_format(&B->cpus, cores, sizeof cores);
	const char *parts[] = {"memfloor-v1", device, cores};
	size_t lens[] = {strlen(parts[0]), strlen(device), strlen(cores)};
	leap_sha256_hex(hex, parts, lens, 3);
	char *dir = xasprintf("%s/devices", B->v->o.cache), *path = xasprintf("%s/%s.json", dir, hex);
	json_t *j = json_load_file(path, 0, NULL);
	int ok = j && memfloor_from_json(j, &B->mf) == 0;
	json_decref(j);
	int first = 0;
	while (!ok && first < CPU_SETSIZE && !CPU_ISSET(first, &B->cpus))
		first++;
	if (!ok && first < CPU_SETSIZE && leap_memfloor_measure(&B->mf, first) == 0) {
		ok = 1;
		json_t *lv = json_array();
		for (int i = 0; i < B->mf.n; i++)
			json_array_append_new(lv, json_pack("{s:s,s:I,s:b,s:f}", "name", B->mf.lv[i].name, "size",
							    (json_int_t)B->mf.lv[i].size, "per_core", B->mf.lv[i].per_core,
							    "gbs", B->mf.lv[i].gbs));
		json_t *o = json_pack("{s:s,s:s,s:o}", "device", device, "cores", cores, "levels", lv);
		if (o && leap_mkdirs(dir) == 0)
			(void)leap_json_write_file(o, path);
		json_decref(o);
	}
	free(dir);
	free(path);
	B->have_mf = ok ? 1 : -1;
	return ok ? &B->mf : NULL;
}

/* Reads a cached memory floor (levels) from j into f. Returns 0, or -1 when j holds none. */
static int memfloor_from_json(const json_t *j, struct leap_memfloor *f)
{
	const json_t *lv = json_object_get(j, "levels");
	size_t n = json_array_size(lv);
	if (!n || n > LEAP_MEMFLOOR_LEVELS)
		return -1;
	memset(f, 0, sizeof *f);
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(lv, i);
		struct leap_memlevel *l = &f->lv[f->n++];
		snprintf(l->name, sizeof l->name, "%s", leap_get_str(x, "name", "?"));
		l->size = (uint64_t)leap_get_int(x, "size", 0);
		l->per_core = json_is_true(json_object_get(x, "per_core"));
		l->gbs = leap_get_num(x, "gbs", 0);
		if (!(l->gbs > 0))
			return -1;
	}
	return f->lv[f->n - 1].size == 0 ? 0 : -1;
}
