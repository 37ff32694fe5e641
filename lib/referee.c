/* referee.c - one record timed by the referee: the two sessions, calibration, pairs of blocks
 * (the candidate's and the baseline's on the same fresh sets), the bounds on a record's time,
 * the stopping rule and the verdict (the design is described at the top of bench.c). */
#include <math.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_int.h"
#include "jsonl.h"
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
	struct leap_series cand, base; /* times per call of each pair's blocks */
	struct leap_series ratio;    /* per pair: the baseline's time per call over the candidate's */
	int narrow;                  /* pairs in a row whose interval was within the target */
	double cpu_ms;               /* the candidate's CPU time over its timed blocks (-1: none) */
	uint32_t *perm;              /* [slots] scratch: the candidate's slots, then the baseline's */
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

/* Picks n distinct slots in random order into R->perm[0..n). */
static void pick_slots(struct rec *R, uint32_t n)
{
	uint32_t m = R->P->slots;
	for (uint32_t i = 0; i < m; i++)
		R->perm[i] = i;
	for (uint32_t i = 0; i < n && i < m; i++) {
		uint32_t j = i + (uint32_t)(leap_bench_rnd(&R->P->rng) % (m - i));
		uint32_t x = R->perm[i];
		R->perm[i] = R->perm[j];
		R->perm[j] = x;
	}
}

/* Stages sets[0..n) into slots[0..n) of session s. */
static void stage(struct rec *R, struct leap_session *s, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		leap_session_stage(s, R->d, sets[j], slots[j]);
}

/* ---- cuda: the owner (the baseline's trusted runner) moves the data ---- */

/* A list of data moves for the owner. */
struct xfers {
	struct leap_run_xfer *x;
	size_t n, cap;
};

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
			uint64_t pool = leap_bpool_dev_off(P, s, p);
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

/* Where this process reads the outputs of a block: the candidate's own shared memory (cpu), or
 * the owner's host region the outputs were fetched into (cuda). */
static struct leap_session *view(struct rec *R)
{
	return R->b == LEAP_BACKEND_CUDA ? R->bs : &R->cs;
}

/* 1 when every output of slot `slot` is, byte for byte, the expected output of set `set` (the
 * common case on cpu, where the candidate often sums in the baseline's order): no element-wise
 * comparison needed. */
static int identical(struct rec *R, uint32_t set, uint32_t slot)
{
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	if (!R->cs.sealed)
		return 0; /* inputs must be compared too */
	for (size_t p = 0; p < np; p++)
		if (d->want[(size_t)set * np + p] && memcmp(view(R)->arena + d->out[(size_t)slot * np + p],
							   d->want[(size_t)set * np + p], (size_t)d->rp[p].bytes))
			return 0;
	return 1;
}

/* Checks every call of a candidate block (sets[j] in slots[j]); records the first failure.
 * Returns 0 or 1 (failed). */
static int check_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		int bad = leap_session_guards(view(R), R->d, slots[j]);
		if (bad < 0 && identical(R, sets[j], slots[j]))
			continue;
		struct leap_errstats es = {0, 0};
		char *m = NULL;
		/* inputs are checked where the candidate could write them: an unsealed host region;
		 * on cuda they are staged afresh from the pool for every block, so a changed input
		 * can only make that call's own outputs wrong */
		int inputs = R->b == LEAP_BACKEND_CPU && !R->cs.sealed;
		json_t *mm = bad >= 0 ? NULL : leap_case_check(R->d, sets[j], slots[j], view(R)->arena, inputs, &es, &m);
		if (bad < 0 && !mm)
			continue;
		R->overrun = bad;
		R->mismatch = mm;
		R->mmsg = m;
		R->bad_call = R->calls + j;
		R->bad_set = sets[j];
		return 1;
	}
	return 0;
}

/* The time per call of a block of n calls less the empty block's cost (never below 1 ns). */
static double per_call(const struct rec *R, const struct leap_block *bt, uint32_t n)
{
	double per = (bt->ms - R->ovh) / n;
	return per > 1e-6 ? per : 1e-6;
}

/* The baseline's time per call in this record: the median of its timed blocks, or its warm-up
 * (or, before that, what it took when the pool was made). */
static double base_call_ms(const struct rec *R)
{
	if (R->base.n) {
		struct leap_stats st;
		leap_series_stats(&R->base, &st);
		return st.median;
	}
	return R->base_ms > 0 ? R->base_ms : R->P->call_ms;
}

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
	size_t np = R->t->nparams;
	for (uint32_t j = 0; j < n; j++)
		for (size_t p = 0; p < np; p++)
			if (R->d->want[(size_t)sets[j] * np + p])
				memcpy(R->d->want[(size_t)sets[j] * np + p], R->bs->arena + R->d->out[(size_t)slots[j] * np + p],
				       R->d->rp[p].bytes);
	R->base_ms = per_call(R, &bt, n);
	return 0;
}

/* One pair: k fresh sets, the candidate's block and the baseline's on them (in slots of their
 * own, in the order `cand_first`), then every call of the candidate checked against the
 * baseline's outputs. `sample`: the pair's times and ratio count (not the warm-up). Returns 0,
 * 1 when the candidate ended the record, or -1 (the harness: R->err). */
static int pair(struct rec *R, uint32_t k, int cand_first, int sample)
{
	uint32_t sets[LEAP_RUN_MAX_CALLS];
	for (uint32_t j = 0; j < k; j++)
		sets[j] = leap_bpool_fresh(R->P);
	pick_slots(R, 2 * k);
	const uint32_t *cslots = R->perm, *bslots = R->perm + k;
	if (!cand_first && base_block(R, sets, bslots, k))
		return -1;
	if (cand_block(R, sets, cslots, k, !sample))
		return 1;
	if (cand_first && base_block(R, sets, bslots, k))
		return -1;
	if ((R->b == LEAP_BACKEND_CUDA && fetch_dev(R, 1, cslots, k)) || check_block(R, sets, cslots, k))
		return R->err ? -1 : 1;
	R->calls += k;
	if (sample) {
		leap_series_add(&R->cand, R->cand_ms, k);
		leap_series_add(&R->base, R->base_ms, k);
		leap_series_add(&R->ratio, R->base_ms / R->cand_ms, k);
	}
	return 0;
}

/* The cost of a block beyond its calls: empty blocks (the same thaw, go, done and freeze, no
 * call, the same table walk) on the baseline's runner, which the candidate cannot slow down.
 * Returns 0 or -1. */
static int calibrate(struct rec *R)
{
	double x[CALIBRATE_BLOCKS];
	uint32_t k = R->P->kb;
	for (int i = 0; i < CALIBRATE_BLOCKS; i++) {
		struct leap_block bt;
		pick_slots(R, k);
		if (leap_session_block(R->bs, R->d, R->perm, k, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK) {
			R->err = xasprintf("the baseline of task '%s' failed to calibrate: %s", R->t->id, R->bs->last.msg);
			return -1;
		}
		x[i] = bt.ms;
	}
	/* the least: the block's fixed cost, which noise (a preemption) can only lengthen */
	struct leap_stats st;
	leap_stats(x, CALIBRATE_BLOCKS, &st);
	R->ovh = st.min;
	return 0;
}

/* Starts the candidate's session and, unless the pool keeps a live one, the baseline's (the
 * baseline first: on cuda it owns the device memory); both are frozen between blocks.
 * Returns 0 (R->r says whether the candidate's started), or -1 with R->err. */
static int open_sessions(struct rec *R, const char *artifact, const char *base_art)
{
	struct leap_bpool *P = R->P;
	int cuda = R->b == LEAP_BACKEND_CUDA;
	struct leap_session_opts so = leap_bench_session_opts(R->B, R->d, R->b, P->slots, 1);
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
		int r = leap_session_start(R->B->v, &P->bs, R->b, base_art, &os, &R->err);
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
	R->r = leap_session_start(R->B->v, &R->cs, R->b, artifact, &so, &R->err);
	if (R->r < 0)
		return -1;
	R->have_cs = 1;
	return 0;
}

/* The stopping rule of a record: --max-runs pairs, or at least --min-runs and either the
 * speedup's interval within --target-ci (twice in a row) or --max-time spent. */
static int rec_done(struct rec *R, double elapsed)
{
	struct leap_stats rs;
	leap_stats_serial(R->ratio.x, R->ratio.n, &rs);
	return leap_bench_done(&rs, R->B->o.min_runs, R->B->o.max_runs, R->target, elapsed, R->B->o.max_time, &R->narrow);
}

/* The next pair's calls: both blocks aim at the block target (the slower one reaches it),
 * changing by at most a factor of two, within the pool's slots. */
static uint32_t next_k(const struct rec *R, int from_warmup)
{
	double slower = R->cand_ms > R->base_ms ? R->cand_ms : R->base_ms;
	double k = leap_bench_block_target(&R->B->o) / (slower > 1e-6 ? slower : 1e-6);
	if (!from_warmup) {
		double lo = R->k / 2.0, hi = 2.0 * R->k;
		k = k < lo ? lo : k > hi ? hi : k;
	}
	return k < 1 ? 1 : k > R->P->kb ? R->P->kb : (uint32_t)k;
}

/* The timing loop: calibration, a warm-up pair (one call each, the baseline's first), then pairs
 * in alternating order until rec_done. Returns 0, or -1 with R->err. The candidate's failures
 * end it with R->r / R->mismatch / R->overrun. */
static int rec_loop(struct rec *R)
{
	double t0 = leap_now();
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

/* ---- the verdict ---- */

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
		leap_buf_addf(&msg, "A block of calls did not finish within %.3g s (ten times what the calls before "
				    "took, or for the first a hundred times the baseline's): your code slowed down or hung "
				    "while being timed (benchmark case %s).", R->block_limit, R->d->desc);
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
		const struct leap_memfloor *mf = hb ? leap_bench_memfloor(R->B, R->P->device) : NULL;
		if (!mf)
			return;
		const struct leap_memlevel *l = leap_memfloor_level(mf, (uint64_t)bytes, R->B->ncpus);
		bytes_ms = leap_memfloor_ms(mf, (uint64_t)bytes, R->B->ncpus);
		gbs = l->gbs * R->B->ncpus;
		where = l->name;
		margin = FLOOR_MARGIN_CPU;
	} else {
		double gflops;
		if (!(hb || hf) || leap_bench_probe(R->B, R->b, R->P->device, base_art, R->d, &gbs, &gflops))
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

/* The timing fields of a candidate timed to the end: its statistics, the baseline's, where
 * they ran. */
static json_t *timed_fields(struct rec *R, const struct leap_stats *cst, const struct leap_stats *bst)
{
	json_t *out = leap_stats_json(cst);
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
	json_object_set_new(out, "cores", json_integer(R->B->ncpus));
	json_object_set_new(out, "freezer", json_string(leap_bench_freezer_name(R->B)));
	json_object_set_new(out, "sets", json_integer(R->calls));
	json_object_set_new(out, "target_ci", json_real(R->target));
	return out;
}

/* The verdict of a candidate timed to the end: ok, noisy or suspicious. The speedup is the
 * median of the pairs' ratios, known to within its 95% interval. */
static json_t *verdict_timed(struct rec *R, const char *base_art)
{
	struct leap_stats cst, bst, rst;
	leap_series_stats(&R->cand, &cst);
	leap_series_stats(&R->base, &bst);
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

/* Times one record on the pool (the device lock held). Returns the bench object, or NULL with
 * R->err. */
static json_t *time_record(struct rec *R, const char *artifact, const char *base_art, enum leap_status *st)
{
	R->overrun = -1;
	R->perm = xcalloc(R->P->slots, sizeof *R->perm);
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

json_t *leap_bench_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
			    const char *artifact, uint64_t seed, enum leap_status *st, char **err)
{
	double t0 = leap_now();
	*err = NULL;
	*st = LEAP_ST_NONE;
	char *base_art = leap_bench_baseline_artifact(B, t, b, err);
	if (!base_art)
		return NULL;
	struct rec R;
	memset(&R, 0, sizeof R);
	R.B = B;
	R.t = t;
	R.b = b;
	json_t *out = NULL;
	/* cpu: the pool is made under the timing lock (its baseline runs on the timed cores), which
	 * also holds back leap-compile and leap-verify of this cache; cuda: the lock is the GPU's,
	 * named by the UUID the pool's baseline found */
	int cpu = b == LEAP_BACKEND_CPU, lock[2] = {-1, -1}, nodev = 0;
	int locked = cpu && leap_timing_lock(B->v->o.cache, &B->lock_said, lock, &R.err) == 0;
	if ((!cpu || locked) && (R.P = leap_bpool_get(B, t, b, seed, base_art, &nodev, &R.err)) && !cpu)
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

int leap_bench_prepare(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, uint64_t seed,
		       char **err)
{
	*err = NULL;
	char *base_art = leap_bench_baseline_artifact(B, t, b, err);
	if (!base_art)
		return -1;
	int cpu = b == LEAP_BACKEND_CPU, lock[2] = {-1, -1}, nodev = 0;
	int r = (!cpu || leap_timing_lock(B->v->o.cache, &B->lock_said, lock, err) == 0) &&
			leap_bpool_get(B, t, b, seed, base_art, &nodev, err) ? 0 : -1;
	if (r && nodev) { /* each record will say no_device */
		free(*err);
		*err = NULL;
		r = 0;
	}
	leap_timing_unlock(lock);
	free(base_art);
	return r;
}
