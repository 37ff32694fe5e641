/* referee.c - one record timed by the referee: the two sessions, calibration, blocks of calls
 * on pool sets, the interleaving with the baseline, the stopping rule and the verdict (the
 * design is described at the top of bench.c). */
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
#include "util.h"
#include "banned.h"

/* Blocks the calibration times (median taken), and check blocks a cached baseline needs. */
#define CALIBRATE_BLOCKS 7
#define CHECKS_MIN 3
#define CHECK_EVERY 4

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
	char device[LEAP_RUN_MSG];
	double ovh;                  /* ms of an empty block (calibrated on the baseline's runner) */
	uint32_t kc;                 /* calls of the candidate's next block */
	double cand_ms;              /* the candidate's last time per call */
	struct leap_series cand, fresh, repeat, base;
	struct leap_series base_f, base_r; /* baseline blocks after a candidate block on new sets / seen sets */
	int last_rep;                /* the candidate's last block was on sets it had seen */
	double cpu_ms;               /* the candidate's CPU time over its timed blocks (-1: none) */
	uint32_t *unseen;            /* known sets the candidate has not had in this record */
	uint32_t nunseen;
	uint8_t *seen;               /* [cap] */
	uint32_t *perm;              /* [slots] scratch */
	long calls, repeats;
	/* the baseline */
	char key[65];
	int cached, stale;           /* a cached baseline is checked; it disagreed */
	struct leap_stats cache_st;
	int since_check;
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

/* Makes set s known to the candidate's side: it can be drawn as a new set from now on. */
static void add_unseen(struct rec *R, uint32_t s)
{
	if (!R->seen[s])
		R->unseen[R->nunseen++] = s;
}

/* Draws the sets of a candidate block of up to *n calls into sets[]: new ones while any are
 * left (fewer calls then), else sets it has had. Returns 1 for a block of repeats. */
static int draw_sets(struct rec *R, uint32_t *sets, uint32_t *n)
{
	struct leap_bpool *P = R->P;
	if (R->nunseen) {
		if (*n > R->nunseen)
			*n = R->nunseen;
		for (uint32_t j = 0; j < *n; j++) {
			uint32_t i = (uint32_t)(leap_bench_rnd(&P->rng) % R->nunseen);
			sets[j] = R->unseen[i];
			R->unseen[i] = R->unseen[--R->nunseen];
			R->seen[sets[j]] = 1;
		}
		return 0;
	}
	for (uint32_t j = 0; j < *n; j++) {
		uint32_t s;
		do
			s = (uint32_t)(leap_bench_rnd(&P->rng) % P->n);
		while (!P->known[s]);
		sets[j] = s;
	}
	return 1;
}

/* Stages sets[0..n) into random slots (R->perm) of session s. */
static void stage(struct rec *R, struct leap_session *s, const uint32_t *sets, uint32_t n)
{
	pick_slots(R, n);
	for (uint32_t j = 0; j < n; j++)
		leap_session_stage(s, R->d, sets[j], R->perm[j]);
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

/* Stages sets[0..n) into random slots (R->perm) of the candidate's device regions (client) or
 * the baseline's (own): a set's inputs go to the device pool once, then to the slot; outputs
 * are poisoned; the L2 cache is flushed unless --hot. Returns 0 or -1. */
static int stage_dev(struct rec *R, int client, const uint32_t *sets, uint32_t n)
{
	struct leap_bpool *P = R->P;
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	uint32_t tin = client ? LEAP_RUN_S_CLIENT_IN : LEAP_RUN_S_DEV_IN, tout = client ? LEAP_RUN_S_CLIENT_OUT : LEAP_RUN_S_DEV_OUT;
	struct xfers xs = {0};
	pick_slots(R, n);
	for (uint32_t j = 0; j < n; j++) {
		uint32_t s = sets[j], x = R->perm[j];
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

/* Brings the outputs of slots R->perm[j] (j < n, only those with want[j] when want is not NULL)
 * of the candidate's (client) or the baseline's device regions, guards included, into the same
 * place of the owner's host output region, where this process reads them. Returns 0 or -1. */
static int fetch_dev(struct rec *R, int client, uint32_t n, const uint8_t *want)
{
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	struct xfers xs = {0};
	for (uint32_t j = 0; j < n; j++) {
		if (want && !want[j])
			continue;
		for (size_t p = 0; p < np; p++) {
			const struct leap_run_param *rp = &d->rp[p];
			if (rp->kind != LEAP_RUN_K_OUT && rp->kind != LEAP_RUN_K_INOUT)
				continue;
			struct leap_run_range r[4];
			leap_run_canary_ranges(d->out[(size_t)R->perm[j] * np + p] - LEAP_RUN_OUT_BASE, rp->bytes, r);
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

/* Checks every call of a candidate block; records the first failure. Returns 0 or 1 (failed). */
static int check_block(struct rec *R, const uint32_t *sets, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		int bad = leap_session_guards(view(R), R->d, R->perm[j]);
		if (bad < 0 && identical(R, sets[j], R->perm[j]))
			continue;
		struct leap_errstats es = {0, 0};
		char *m = NULL;
		/* inputs are checked where the candidate could write them: an unsealed host region;
		 * on cuda they are staged afresh from the pool for every block, so a changed input
		 * can only make that call's own outputs wrong */
		int inputs = R->b == LEAP_BACKEND_CPU && !R->cs.sealed;
		json_t *mm = bad >= 0 ? NULL : leap_case_check(R->d, sets[j], R->perm[j], view(R)->arena, inputs, &es, &m);
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

/* One block of the candidate: `want` calls on drawn sets, timed, every call checked. `sample`:
 * its time is a sample (not the warm-up). Returns 0, or 1 when the record ends (a failure). */
static int cand_block(struct rec *R, uint32_t want, int sample)
{
	uint32_t sets[LEAP_RUN_MAX_CALLS], n = want;
	int rep = draw_sets(R, sets, &n), cuda = R->b == LEAP_BACKEND_CUDA;
	if (cuda ? stage_dev(R, 1, sets, n) : (stage(R, &R->cs, sets, n), 0))
		return 1;
	struct leap_block bt;
	/* a candidate that turns slow cannot stall the run: a block may take ten times what the
	 * calls before took (the first: a hundred times the baseline's calls), and half a second */
	double each = R->cand_ms > 0 ? 10 * R->cand_ms : 100 * R->P->call_ms;
	double saved = R->cs.sb.deadline, limit = (R->cand_ms > 0 ? 0.5 : 2) + n * each / 1e3;
	if (leap_now() + limit < saved)
		R->cs.sb.deadline = leap_now() + limit;
	R->r = leap_session_block(&R->cs, R->d, R->perm, n, LEAP_RUN_OP_CALL, &bt);
	if (R->r == LEAP_SESS_TIMEOUT && R->cs.sb.deadline < saved)
		R->block_limit = limit;
	R->cs.sb.deadline = saved;
	if (R->r != LEAP_SESS_OK || (cuda && fetch_dev(R, 1, n, NULL)) || check_block(R, sets, n))
		return 1;
	double per = (bt.ms - R->ovh) / n;
	if (per < 1e-6)
		per = 1e-6;
	R->cand_ms = per;
	R->calls += n;
	R->repeats += rep ? n : 0;
	if (R->cpu_ms >= 0)
		R->cpu_ms = bt.cpu_ms >= 0 ? R->cpu_ms + bt.cpu_ms : -1;
	if (sample) {
		leap_series_add(&R->cand, per, n);
		leap_series_add(rep ? &R->repeat : &R->fresh, per, n);
	}
	R->last_rep = rep;
	/* the next block aims at the block target, changing by at most a factor of two */
	double k = leap_bench_block_target(&R->B->o) / per;
	double lo = R->kc / 2.0 < 1 ? 1 : R->kc / 2.0, hi = 2.0 * R->kc;
	k = k < lo ? lo : k > hi ? hi : k;
	R->kc = k > R->P->slots ? R->P->slots : (uint32_t)k;
	if (R->kc < 1)
		R->kc = 1;
	return 0;
}

/* One block of the baseline (k calls): new sets while the pool has room, their outputs kept as
 * the expected outputs. `sample`: its time is a sample. Returns 0, or -1 (the baseline failed:
 * R->err). */
static int base_block(struct rec *R, uint32_t k, int sample)
{
	struct leap_bpool *P = R->P;
	uint32_t sets[LEAP_RUN_MAX_CALLS];
	uint8_t fresh[LEAP_RUN_MAX_CALLS];
	for (uint32_t j = 0; j < k; j++) {
		fresh[j] = P->n < P->cap;
		if (fresh[j]) {
			sets[j] = P->n;
			leap_bpool_derive(P, P->n++);
		} else {
			do
				sets[j] = (uint32_t)(leap_bench_rnd(&P->rng) % P->n);
			while (!P->known[sets[j]]);
		}
	}
	int cuda = R->b == LEAP_BACKEND_CUDA;
	if (cuda ? stage_dev(R, 0, sets, k) : (stage(R, R->bs, sets, k), 0))
		return -1;
	struct leap_block bt;
	int r = leap_session_block(R->bs, R->d, R->perm, k, LEAP_RUN_OP_CALL, &bt);
	if (r == LEAP_SESS_OK && cuda && fetch_dev(R, 0, k, fresh))
		return -1;
	size_t np = R->t->nparams;
	for (uint32_t j = 0; j < k; j++) {
		if (!fresh[j])
			continue;
		if (r != LEAP_SESS_OK) { /* the set never got its outputs: forget it */
			P->n = sets[j] < P->n ? sets[j] : P->n;
			continue;
		}
		for (size_t p = 0; p < np; p++)
			if (R->d->want[(size_t)sets[j] * np + p])
				memcpy(R->d->want[(size_t)sets[j] * np + p], R->bs->arena + R->d->out[(size_t)R->perm[j] * np + p],
				       R->d->rp[p].bytes);
		P->known[sets[j]] = 1;
		P->nknown++;
		add_unseen(R, sets[j]);
	}
	if (r != LEAP_SESS_OK) {
		R->err = xasprintf("the baseline of task '%s' failed while timed: %s", R->t->id,
				   R->bs->last.msg[0] ? R->bs->last.msg : "its runner died");
		return -1;
	}
	if (sample) {
		double per = (bt.ms - R->ovh) / k;
		leap_series_add(&R->base, per > 1e-6 ? per : 1e-6, k);
		leap_series_add(R->last_rep ? &R->base_r : &R->base_f, per > 1e-6 ? per : 1e-6, k);
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
	R->r = leap_session_start(R->B->v, &R->cs, R->b, artifact, &so, &R->err);
	if (R->r < 0)
		return -1;
	R->have_cs = 1;
	snprintf(R->device, sizeof R->device, "%s", R->cs.hello.msg); /* from before its code loaded */
	return 0;
}

/* The stopping rule of a record (leap_bench_done for the candidate, and enough of the
 * baseline: --min-runs blocks when timed afresh, CHECKS_MIN checks of a cached one). */
static int rec_done(struct rec *R, double elapsed)
{
	const struct leap_bench_opts *o = &R->B->o;
	struct leap_stats cs, bs;
	leap_series_stats(&R->cand, &cs);
	leap_series_stats(&R->base, &bs);
	if ((long)cs.n >= o->max_runs)
		return 1;
	int check = R->cached && !R->stale;
	if ((long)cs.n < o->min_runs || (check ? R->base.n < CHECKS_MIN : (long)bs.n < o->min_runs))
		return 0;
	if (elapsed >= o->max_time)
		return 1;
	return cs.rel_ci <= o->target_ci && (check || bs.rel_ci <= o->target_ci);
}

/* After a check block: a cached baseline whose checks disagree with it by more than
 * --baseline-tolerance is stale: the baseline is timed afresh from here (the checks count). */
static void judge_cache(struct rec *R)
{
	if (!R->cached || R->stale || R->base.n < CHECKS_MIN)
		return;
	struct leap_stats bs;
	leap_series_stats(&R->base, &bs);
	if (fabs(bs.median - R->cache_st.median) > R->B->o.baseline_tol * R->cache_st.median)
		R->stale = 1;
}

/* The timing loop: warm-ups, then candidate blocks with baseline blocks between them (every
 * time, or every CHECK_EVERY-th while a cached baseline agrees), until rec_done. Returns 0, or
 * -1 with R->err. The candidate's failures end it with R->r / R->mismatch / R->overrun. */
static int rec_loop(struct rec *R)
{
	double t0 = leap_now();
	if (calibrate(R) || base_block(R, 1, 0))
		return -1;
	R->kc = 1;
	if (cand_block(R, 1, 0))
		return 0;
	double k = leap_bench_block_target(&R->B->o) / R->cand_ms;
	R->kc = k < 1 ? 1 : k > R->P->slots ? R->P->slots : (uint32_t)k;
	if (R->cached && base_block(R, R->P->kb, 1))
		return -1;
	for (;;) {
		if (cand_block(R, R->kc, 1))
			return 0;
		int check = R->cached && !R->stale;
		if (!check || ++R->since_check >= CHECK_EVERY) {
			R->since_check = 0;
			if (base_block(R, R->P->kb, 1))
				return -1;
			judge_cache(R);
		}
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

/* The verdict when the candidate's runner failed while timed. */
static json_t *verdict_failed(struct rec *R, const char *why, int timeout, enum leap_status *st)
{
	struct leap_buf msg = {0};
	const char *status = "runtime_error";
	const struct leap_run_reply *last = &R->cs.last;
	if (R->r == LEAP_SESS_REPLY && last->status == LEAP_RUN_NO_DEVICE) {
		status = "no_device";
		leap_buf_addf(&msg, "Not timed: %s.", last->msg);
	} else if (R->r == LEAP_SESS_REPLY) {
		leap_buf_addf(&msg, "Runtime error while being timed (call %ld): %s.", R->calls + last->call, last->msg);
		*st = LEAP_ST_RUNTIME_ERROR;
	} else if (R->r == LEAP_SESS_FREEZE) {
		leap_buf_addf(&msg, "Not timed: %s.", last->msg);
	} else if (timeout && R->block_limit > 0) {
		status = "timeout";
		leap_buf_addf(&msg, "A block of calls did not finish within %.3g s (ten times what the calls before "
				    "took, or for the first a hundred times the baseline's): your code slowed down or hung "
				    "while being timed (benchmark case %s).", R->block_limit, R->d->desc);
	} else {
		status = timeout ? "timeout" : "runtime_error";
		leap_buf_addf(&msg, "Your code %s while being timed (benchmark case %s).", why ? why : "died", R->d->desc);
		if (!timeout)
			*st = LEAP_ST_RUNTIME_ERROR;
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

/* 1 when the candidate is much faster on sets it had seen than on new ones (beyond both
 * intervals): it remembers results. */
static int memoises(const struct rec *R, struct leap_stats *fs, struct leap_stats *rs)
{
	struct leap_stats bf, br;
	leap_series_stats(&R->fresh, fs);
	leap_series_stats(&R->repeat, rs);
	leap_series_stats(&R->base_f, &bf);
	leap_series_stats(&R->base_r, &br);
	return leap_bench_memoises(fs, rs, &bf, &br);
}

/* Roofline fields, and a `suspicious` verdict for a time below the memory floor. */
static void floor_check(struct rec *R, const char *base_art, const struct leap_stats *cst, json_t *out,
			const char **status, struct leap_buf *msg)
{
	const struct leap_case *bc = leap_task_bench_case(R->t, R->b);
	int64_t bytes = 0, flops = 0;
	int hb = leap_task_eval(R->t, R->t->bytes, bc, &bytes) == 0 && bytes > 0;
	int hf = leap_task_eval(R->t, R->t->flops, bc, &flops) == 0 && flops > 0;
	double gbs, gflops;
	if (!(hb || hf) || leap_bench_probe(R->B, R->b, R->device, base_art, R->d, &gbs, &gflops))
		return;
	double bytes_ms = hb ? (double)bytes / (gbs * 1e9) * 1e3 : 0;
	double flops_ms = hf && gflops > 0 ? (double)flops / (gflops * 1e9) * 1e3 : 0;
	double floor_ms = bytes_ms > flops_ms ? bytes_ms : flops_ms;
	if (floor_ms > 0) {
		json_object_set_new(out, "floor_ms", json_real(floor_ms));
		json_object_set_new(out, "roofline", json_real(floor_ms / cst->median));
	}
	/* Only memory traffic is a hard floor (tensor cores beat the FP32 rate); on cpu caches can
	 * hold a benchmark case, hence the wider margin. */
	double margin = R->b == LEAP_BACKEND_CUDA ? 0.5 : 0.25;
	if (!strcmp(*status, "ok") && bytes_ms > 0 && cst->median < margin * bytes_ms) {
		*status = "suspicious";
		leap_buf_addf(msg, "%.3g ms per call is below %g of the memory floor (%.3g ms to move %lld bytes at %.0f "
				   "GB/s): the kernel cannot be doing the work; no speedup.",
			      cst->median, margin, bytes_ms, (long long)bytes, gbs);
	}
}

/* The baseline's statistics for the speedup: the cached ones while they were confirmed, else
 * this record's; a fresh baseline tight enough is cached, a stale one that is not is forgotten. */
static int baseline_stats(struct rec *R, struct leap_stats *bst)
{
	const struct leap_bench_opts *o = &R->B->o;
	if (R->cached && !R->stale) {
		*bst = R->cache_st;
		return 1;
	}
	leap_series_stats(&R->base, bst);
	if (o->baseline_cache && bst->rel_ci <= 2 * o->target_ci)
		leap_baseline_put(R->B, R->key, bst, R->t->id);
	else if (o->baseline_cache && R->stale)
		leap_baseline_put(R->B, R->key, NULL, R->t->id);
	return 0;
}

/* The verdict of a candidate timed to the end: ok, noisy or suspicious. */
static json_t *verdict_timed(struct rec *R, const char *base_art)
{
	const struct leap_bench_opts *o = &R->B->o;
	struct leap_stats cst, bst, fs, rs;
	leap_series_stats(&R->cand, &cst);
	int cached = baseline_stats(R, &bst);
	double sp = cst.median > 0 ? bst.median / cst.median : 0;
	json_t *out = leap_stats_json(&cst);
	json_object_set_new(out, "calls", json_integer(R->cand.calls));
	json_object_set_new(out, "baseline_ms", json_real(bst.median));
	json_object_set_new(out, "baseline_rel_ci", json_real(isfinite(bst.rel_ci) ? bst.rel_ci : -1.0));
	json_object_set_new(out, "baseline_n", json_integer((json_int_t)bst.n));
	json_object_set_new(out, "baseline_cached", json_boolean(cached));
	/* what the speedup is against: a vendor library, a hand-written kernel, or on cpu the
	 * reference built with cc -O2 (leap-report says so) */
	json_object_set_new(out, "baseline_kind", json_string(R->P->backend != LEAP_BACKEND_CUDA ? "reference"
							       : R->P->task->baseline_vendor ? "vendor" : "kernel"));
	json_object_set_new(out, "overhead_ms", json_real(R->ovh));
	if (R->cpu_ms >= 0 && R->calls > 0)
		json_object_set_new(out, "cpu_ms", json_real(R->cpu_ms / (double)R->calls));
	json_object_set_new(out, "cores", json_integer(R->B->ncpus));
	json_object_set_new(out, "freezer", json_string(leap_bench_freezer_name(R->B)));
	json_object_set_new(out, "sets", json_integer(R->calls - R->repeats));
	json_object_set_new(out, "repeats", json_integer(R->repeats));
	const char *status = "ok";
	struct leap_buf msg = {0};
	if (memoises(R, &fs, &rs)) {
		status = "suspicious";
		leap_buf_addf(&msg, "%.3g ms per call on input sets seen before in this record, %.3g ms on new ones: "
				    "the kernel seems to remember results; no speedup.", rs.median, fs.median);
	}
	floor_check(R, base_art, &cst, out, &status, &msg);
	int noisy = cst.rel_ci > o->target_ci || (!cached && bst.rel_ci > o->target_ci);
	if (!strcmp(status, "ok") && noisy) {
		status = "noisy";
		leap_buf_addf(&msg, "Noisy: the median %.4g ms is known to +-%.2g%% and the baseline's %.4g ms to +-%.2g%%, "
				    "more than --target-ci %g%%: the speedup (%.3gx) is not reliable and carries no reward.",
			      cst.median, 100 * (isfinite(cst.rel_ci) ? cst.rel_ci : 1), bst.median,
			      100 * (isfinite(bst.rel_ci) ? bst.rel_ci : 1), 100 * o->target_ci, sp);
	}
	if (!strcmp(status, "ok"))
		leap_buf_addf(&msg, "Median %.4g ms over %ld calls (+-%.2g%%), baseline %.4g ms: speedup %.3gx.", cst.median,
			      R->cand.calls, 100 * cst.rel_ci, bst.median, sp);
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
	free(R->fresh.x);
	free(R->repeat.x);
	free(R->base.x);
	free(R->base_f.x);
	free(R->base_r.x);
	free(R->unseen);
	free(R->seen);
	free(R->perm);
	json_decref(R->mismatch);
	free(R->mmsg);
}

/* Times one record on the pool (the device lock held). Returns the bench object, or NULL with
 * R->err. */
static json_t *time_record(struct rec *R, const char *artifact, const char *base_art, enum leap_status *st)
{
	struct leap_bpool *P = R->P;
	R->overrun = -1;
	R->unseen = xcalloc(P->cap, sizeof *R->unseen);
	R->seen = xcalloc(P->cap, 1);
	R->perm = xcalloc(P->slots, sizeof *R->perm);
	for (uint32_t s = 0; s < P->n; s++)
		if (P->known[s])
			add_unseen(R, s);
	json_t *out = NULL;
	if (open_sessions(R, artifact, base_art) == 0 && R->r == LEAP_SESS_OK) {
		leap_baseline_key(R->B, R->t, R->b, R->device, base_art, R->d, R->key);
		R->cached = R->B->o.baseline_cache && leap_baseline_get(R->B, R->key, &R->cache_st);
		rec_loop(R);
	}
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
		if (R->r == LEAP_SESS_OK || R->r == LEAP_SESS_DIED || R->r == LEAP_SESS_TIMEOUT)
			json_object_set_new(out, "device", json_string(R->device));
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

/* The exclusive lock of the cpu. */
static int lock_cpu(struct leap_bencher *B, char **err)
{
	uint8_t none[16] = {0};
	char *path = leap_device_lock_path(B->v->o.cache, none);
	int fd = leap_device_lock(path, LOCK_EX, "cpu", &B->lock_said, err);
	free(path);
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
	/* cpu: the pool is made under the lock (its baseline runs on the timed cores); cuda: the
	 * lock is the GPU's, named by the UUID the pool's baseline found */
	int cpu = b == LEAP_BACKEND_CPU, lock = cpu ? lock_cpu(B, &R.err) : -1, nodev = 0;
	if ((!cpu || lock >= 0) && (R.P = leap_bpool_get(B, t, b, seed, base_art, &nodev, &R.err)) && !cpu)
		lock = lock_pool_device(B, R.P, b, &R.err);
	if (lock >= 0 && R.P) {
		R.d = &R.P->d;
		out = time_record(&R, artifact, base_art, st);
	} else if (nodev) {
		out = json_pack("{s:s,s:s++}", "status", "no_device", "message", "Not timed: ", R.err, ".");
		free(R.err);
		R.err = NULL;
	}
	if (lock >= 0)
		close(lock);
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
	int cpu = b == LEAP_BACKEND_CPU, lock = cpu ? lock_cpu(B, err) : -1;
	int nodev;
	int r = (!cpu || lock >= 0) && leap_bpool_get(B, t, b, seed, base_art, &nodev, err) ? 0 : -1;
	if (r && nodev) { /* each record will say no_device */
		free(*err);
		*err = NULL;
		r = 0;
	}
	if (lock >= 0)
		close(lock);
	free(base_art);
	return r;
}
