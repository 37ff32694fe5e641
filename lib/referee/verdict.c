/* verdict.c - what leap-bench's referee makes of a record's timings: the timing's defaults
 * (their table is verdict.h), the stopping rule of its loop, and the verdict (ok, noisy,
 * suspicious below the memory floor; runtime_error, timeout or mismatch when the candidate
 * failed while timed) with the fields that back it. Apart from the loop (referee.c) so that
 * whoever changes when a timing is `ok` reads this file and verdict.h: the loop only gathers
 * samples (series of times and ratios), this file judges them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prio.h"
#include "referee_int.h"
#include "core/util.h"
#include "core/banned.h"

static json_t *timed_fields(struct rec *R, const struct leap_stats *cst, const struct leap_stats *bst);
static void floor_check(struct rec *R, const char *base_art, const struct leap_stats *cst, json_t *out,
		const char **status, struct leap_buf *msg);
static json_t *stats_json(const struct leap_stats *s);

/* ---- the defaults ---- */

void leap_bench_defaults(struct leap_bench_opts *o)
{
	for (int b = 0; b < LEAP_NBACKENDS; b++) /* each row's, from verdict.h's table */
		o->target_ci[b] = leap_backend_of((enum leap_backend)b)->target_ci;
	o->max_time = LEAP_BENCH_MAX_TIME;
	o->min_runs = LEAP_BENCH_MIN_RUNS;
	o->max_runs = LEAP_BENCH_MAX_RUNS;
	o->block_ms = LEAP_BENCH_BLOCK_MS;
	o->pool_bytes = 0; /* not given: ref_pool_budget (inpool.c) */
}

/* ---- the stopping rule ---- */

int leap_bench_done(const struct leap_stats *s, long min_runs, long max_runs, double target, double elapsed,
		    double max_time, int *narrow)
{
	int tight = s->rel_ci <= target;
	if (narrow)
		*narrow = tight ? *narrow + 1 : 0;
	if ((long)s->n >= max_runs)
		return 1;
	if ((long)s->n < min_runs)
		return 0;
	return elapsed >= max_time || (tight && (!narrow || *narrow >= 2));
}

/* The stopping rule of a record: --max-runs pairs, or at least --min-runs and either the
 * speedup's interval within --target-ci (twice in a row) or --max-time spent. */
int ref_rec_done(struct rec *R, double elapsed)
{
	struct leap_stats rs;
	leap_stats_serial(R->ratio.x, R->ratio.n, &rs);
	return leap_bench_done(&rs, R->B->o.min_runs, R->B->o.max_runs, R->target, elapsed, R->B->o.max_time, &R->narrow);
}

/* ---- samples ---- */

/* Adds one sample v, of `calls` calls, to s. */
void ref_series_add(struct series *s, double v, uint32_t calls)
{
	xgrow((void **)&s->x, &s->cap, s->n + 1, sizeof *s->x);
	s->x[s->n++] = v;
	s->calls += calls;
}

/* The statistics of s (its samples stay in their order). */
void ref_series_stats(const struct series *s, struct leap_stats *st)
{
	double *tmp = xmalloc((s->n ? s->n : 1) * sizeof *tmp);
	if (s->n) /* an empty series has no array: memcpy from NULL is undefined even for 0 bytes */
		memcpy(tmp, s->x, s->n * sizeof *tmp);
	leap_stats(tmp, s->n, st);
	free(tmp);
}

/* ---- the verdict ---- */

const char *leap_bench_failed_status(int sess, int timeout, enum leap_status *st)
{
	int late = timeout || sess == LEAP_SESS_TIMEOUT;
	*st = late ? LEAP_ST_TIMEOUT : LEAP_ST_RUNTIME_ERROR;
	return late ? "timeout" : "runtime_error";
}

/* The verdict when the candidate's runner failed while timed: no output of the benchmark size
 * was checked, so the record fails too (leap_bench_failed_status). */
json_t *ref_verdict_failed(struct rec *R, const char *why, int timeout, enum leap_status *st)
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
json_t *ref_verdict_wrong(struct rec *R, enum leap_status *st)
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
json_t *ref_verdict_timed(struct rec *R, const char *base_art)
{
	struct leap_stats cst, bst, rst;
	ref_series_stats(&R->cand, &cst);
	ref_series_stats(&R->base, &bst);
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
	/* what the speedup is against: a module task's torch (torch-eager), a vendor library, a
	 * hand-written kernel, or on cpu the reference built with cc -O2 (leap-report says so) */
	const struct leap_task *t = R->P->task;
	json_object_set_new(out, "baseline_kind",
			    json_string(t->module ? leap_torch_kind(t, R->B->o.baseline)
					: !leap_backend_of(R->P->backend)->baseline ? "reference"
					: t->baseline_vendor ? "vendor" : "kernel"));
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
	if (!leap_backend_has(R->b, LEAP_BK_OWNER)) {
		const struct leap_memfloor *mf = hb ? ref_cpu_memfloor(R->B, R->P->device) : NULL;
		if (!mf)
			return;
		const struct leap_memlevel *l = leap_memfloor_level(mf, (uint64_t)bytes, R->B->ncpus);
		bytes_ms = leap_memfloor_ms(mf, (uint64_t)bytes, R->B->ncpus);
		gbs = l->gbs * R->B->ncpus;
		where = l->name;
		margin = leap_backend_of(R->b)->floor_margin;
	} else {
		double gflops;
		if (!(hb || hf) || ref_device_probe(R->B, R->b, R->P->device, base_art, R->d, &gbs, &gflops))
			return;
		bytes_ms = hb ? (double)bytes / (gbs * 1e9) * 1e3 : 0;
		flops_ms = hf && gflops > 0 ? (double)flops / (gflops * 1e9) * 1e3 : 0;
		margin = leap_backend_of(R->b)->floor_margin;
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
