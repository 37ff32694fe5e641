/* bench.c - time a verified candidate against its task's baseline from a referee the candidate
 * cannot reach: statistics, the input pool, the baseline cache, the timing loop, the verdict. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "bench.h"
#include "bench_int.h"
#include "build.h"
#include "jsonl.h"
#include "util.h"
#include "banned.h"

/*
 * The referee. This process owns the clock, the inputs and the checks; the candidate's runner
 * is a servant (runproto.h, session.c). What that buys, attack by attack:
 * - time: taken here around each block (thaw, go, done, freeze), less the cost of an empty
 *   block measured the same way on the trusted baseline's runner; nothing the runner reports
 *   is used, so patching its clock or forging its replies changes no number;
 * - the speedup: judged as a ratio, not as two medians. Blocks come in pairs, the candidate's
 *   and the baseline's on the same sets, one after the other in alternating order, and each
 *   pair gives the ratio of their times per call; the speedup is the median of those ratios,
 *   with a distribution-free 95% interval. A load that changes slowly slows both blocks of a
 *   pair and cancels in their ratio, instead of widening two intervals;
 * - inputs: every pair runs on sets made for it from the pool's base sets and the secret
 *   stream (leap_bpool_fresh: fresh values at secret places), written into slots chosen at
 *   random just before each block, while the candidate is frozen; the input region is sealed,
 *   so inputs cannot be changed; no set comes back within a record, so remembering results
 *   gains nothing;
 * - checks: every call of every block is checked, against the baseline's outputs on the same
 *   set, in this process's own mapping of the outputs, after the freeze: work deferred past
 *   "done" (a thread, a fault handler, a child) is either counted in the time or missing from
 *   the outputs; a wrong output makes the record a `mismatch`;
 * - the baseline: trusted code, in a runner of its own, timed with the candidate frozen; its
 *   block size comes from its own time, never from the candidate's;
 * - noise: a speedup interval wider than --target-ci is `noisy`, with no speedup.
 */

/* qsort comparison of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void order_ci(const double *x, size_t n, double f, struct leap_stats *s);

void leap_stats(double *x, size_t n, struct leap_stats *s)
{
	memset(s, 0, sizeof *s);
	s->n = n;
	s->rel_ci = INFINITY;
	if (!n)
		return;
	qsort(x, n, sizeof *x, cmp_double);
	s->min = x[0];
	s->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	s->ci_lo = s->ci_hi = s->median;
	if (n >= 6)
		order_ci(x, n, 1, s);
}

/* The interval of the median from the order statistics of sorted x[0..n), n >= 6: ranks
 * n/2 -+ 0.98 * sqrt(n * f), where f >= 1 is how much serial correlation inflates the
 * variance of a count of samples below the median (1: independent samples). */
static void order_ci(const double *x, size_t n, double f, struct leap_stats *s)
{
	double half = 1.959964 * sqrt((double)n * f) / 2;
	long lo = (long)floor((double)n / 2 - half), hi = (long)ceil((double)n / 2 + half); /* 1-based ranks */
	if (lo < 1)
		lo = 1;
	if (hi > (long)n)
		hi = (long)n;
	s->ci_lo = x[lo - 1];
	s->ci_hi = x[hi - 1];
	s->rel_ci = s->median > 0 ? (s->ci_hi - s->ci_lo) / 2 / s->median : INFINITY;
}

void leap_stats_serial(const double *x, size_t n, struct leap_stats *s)
{
	double *sorted = xmalloc((n ? n : 1) * sizeof *sorted);
	if (n)
		memcpy(sorted, x, n * sizeof *sorted);
	leap_stats(sorted, n, s);
	if (n >= 6) {
		/* the lag-1 autocorrelation of "above the median", in time order */
		double p = 0, num = 0, den = 0;
		for (size_t i = 0; i < n; i++)
			p += x[i] > s->median;
		p /= (double)n;
		for (size_t i = 0; i < n; i++) {
			double a = (x[i] > s->median) - p;
			den += a * a;
			if (i + 1 < n)
				num += a * ((x[i + 1] > s->median) - p);
		}
		double rho = den > 0 ? num / den : 0;
		rho = rho < 0 ? 0 : rho > 0.6 ? 0.6 : rho;
		if (rho > 0)
			order_ci(sorted, n, (1 + rho) / (1 - rho), s);
	}
	free(sorted);
}

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

const char *leap_bench_failed_status(int sess, int timeout, enum leap_status *st)
{
	int late = timeout || sess == LEAP_SESS_TIMEOUT;
	*st = late ? LEAP_ST_TIMEOUT : LEAP_ST_RUNTIME_ERROR;
	return late ? "timeout" : "runtime_error";
}

/* ---- samples ---- */

void leap_series_add(struct leap_series *s, double v, uint32_t calls)
{
	xgrow((void **)&s->x, &s->cap, s->n + 1, sizeof *s->x);
	s->x[s->n++] = v;
	s->calls += calls;
}

/* The statistics of s (its samples stay in their order). */
void leap_series_stats(const struct leap_series *s, struct leap_stats *st)
{
	double *tmp = xmalloc((s->n ? s->n : 1) * sizeof *tmp);
	if (s->n) /* an empty series has no array: memcpy from NULL is undefined even for 0 bytes */
		memcpy(tmp, s->x, s->n * sizeof *tmp);
	leap_stats(tmp, s->n, st);
	free(tmp);
}

/* ---- set-up ---- */

int leap_bencher_init(struct leap_bencher *B, struct leap_verifier *v, const struct leap_bench_opts *o, char **err)
{
	memset(B, 0, sizeof *B);
	B->v = v;
	B->o = *o;
	B->ncpus = leap_cpus_parse(o->cpus, &B->cpus, err);
	if (B->ncpus < 0)
		return -1;
	leap_cgroups_detect(&B->cg, o->cgroup_version == 1 ? LEAP_CG_V1 : LEAP_CG_NONE);
	if (o->cgroup_version && B->cg.mode[LEAP_CG_FREEZER] != (enum leap_cg_mode)o->cgroup_version) {
		*err = xasprintf("no cgroup v%d freezer (%s)", o->cgroup_version, B->cg.note[0] ? B->cg.note : "the other version serves");
		return -1;
	}
	B->sb = v->o.sb;
	B->sb.cpus = &B->cpus;
	B->sb.cgroups = &B->cg;
	B->sb.cg_ctrl = (1u << LEAP_CG_CPUSET) | (1u << LEAP_CG_CPUACCT);
	enum leap_freeze f = o->freezer;
	if (f == LEAP_FREEZE_NONE)
		f = B->cg.mode[LEAP_CG_FREEZER] ? LEAP_FREEZE_CGROUP : LEAP_FREEZE_SIGNALS;
	if (f == LEAP_FREEZE_CGROUP && !B->cg.mode[LEAP_CG_FREEZER]) {
		*err = xasprintf("no cgroup freezer (%s)", B->cg.note);
		return -1;
	}
	if (f == LEAP_FREEZE_SIGNALS) {
		leap_sandbox_probe(&v->env, &v->o.sb);
		if (!v->o.sb.namespaces || v->env.ns_ok != 1) {
			*err = xasprintf("cannot freeze candidates: no cgroup freezer (%s) and no PID namespace to stop "
					 "(namespaces %s)", B->cg.note, v->o.sb.namespaces ? "unavailable" : "turned off");
			return -1;
		}
	}
	if (f == LEAP_FREEZE_CGROUP)
		B->sb.cg_ctrl |= 1u << LEAP_CG_FREEZER;
	B->o.freezer = f;
	return 0;
}

const char *leap_bench_freezer_name(const struct leap_bencher *B)
{
	if (B->o.freezer == LEAP_FREEZE_SIGNALS)
		return "SIGSTOP from the PID namespace's init";
	return B->cg.mode[LEAP_CG_FREEZER] == LEAP_CG_V2 ? "cgroup v2 freezer" : "cgroup v1 freezer";
}

void leap_bencher_stop(struct leap_bencher *B)
{
	for (size_t i = 0; i < B->npools; i++) {
		struct leap_bpool *P = B->pools[i];
		if (P->have_bs)
			leap_session_end(&P->bs, NULL, NULL, NULL, 0);
		if (P->have_creg)
			leap_regions_free(&P->creg);
		P->have_bs = P->have_creg = 0;
	}
}

void leap_bencher_fork(struct leap_bencher *B, int copy)
{
	for (size_t i = 0; i < B->npools; i++)
		leap_case_fork(&B->pools[i]->d, copy);
}

void leap_bencher_free(struct leap_bencher *B)
{
	leap_bencher_stop(B);
	for (size_t i = 0; i < B->npools; i++) {
		leap_case_free(&B->pools[i]->d);
		free(B->pools[i]->on_dev);
		free(B->pools[i]);
	}
	free(B->pools);
	leap_cgroups_free(&B->cg);
	memset(B, 0, sizeof *B);
}

/* The block length aimed at: --block-ms, shorter when --max-time is small, so that a record
 * still gets --min-runs blocks of each side within its budget. */
double leap_bench_block_target(const struct leap_bench_opts *o)
{
	double t = o->max_time * 1e3 / (4.0 * (double)(o->min_runs > 0 ? o->min_runs : 1));
	return t < o->block_ms ? (t > 0.5 ? t : 0.5) : o->block_ms;
}

/* ---- the input pool ---- */

/* splitmix64: the next 64 bits of the referee's secret stream. */
uint64_t leap_bench_rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
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

/* One element in FRESH_EVERY of a derived set's inputs is its donor's: enough that every
 * histogram, sum and column maximum of the suite changes from set to set (a column of 16 rows
 * or more gets a new maximum with probability about 1/16 per set, so many columns do), at the
 * cost of a copy of the inputs. */
#define FRESH_EVERY 16

uint32_t leap_bpool_fresh(struct leap_bpool *P)
{
	uint32_t s = P->next, base = (uint32_t)(leap_bench_rnd(&P->rng) % P->nbase);
	P->next = P->next + 1 < P->cap ? P->next + 1 : P->nbase;
	leap_case_derive(&P->d, s, base, P->cap + base, &P->rng, FRESH_EVERY);
	P->on_dev[s] = 0;
	return s;
}

/* Elements of the outputs of case c of t (sum over output parameters), or -1. */
static int64_t out_elements(const struct leap_task *t, const struct leap_case *c)
{
	int64_t *sz = xcalloc(t->nparams ? t->nparams : 1, sizeof *sz), n = 0;
	char *err = NULL;
	if (leap_task_sizes(t, c, sz, &err)) {
		free(err);
		free(sz);
		return -1;
	}
	for (size_t p = 0; p < t->nparams; p++)
		if (t->params[p].role == LEAP_ROLE_OUT || t->params[p].role == LEAP_ROLE_INOUT)
			n += sz[p];
	free(sz);
	return n;
}

/* How much wider the tolerances are at the benchmark size: a sum over K terms has rounding
 * errors growing like sqrt(K), and the task's tolerances were chosen for its verification
 * cases. K is estimated as flops per output element (2*K for a product); 1 without flops. */
static double tol_scale(const struct leap_task *t, const struct leap_case *bench)
{
	int64_t f, n = out_elements(t, bench);
	if (leap_task_eval(t, t->flops, bench, &f) || f <= 0 || n <= 0)
		return 1;
	double kb = (double)f / (double)n, kv = 0;
	for (size_t i = 0; i < t->ncases; i++) {
		int64_t fi, ni = out_elements(t, &t->cases[i]);
		if (!leap_task_eval(t, t->flops, &t->cases[i], &fi) && fi > 0 && ni > 0 && (double)fi / (double)ni > kv)
			kv = (double)fi / (double)ni;
	}
	return kv > 0 && kb > kv ? sqrt(kb / kv) : 1;
}

/* The baseline artifact of t on backend b: reference.c on cpu (built by the verifier),
 * baseline.cu on cuda (built and cached). Returns a new path, or NULL with *err set. */
char *leap_bench_baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, char **err)
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

/* Session options for case d with `calls` calls per block: sealed inputs, the bencher's
 * sandbox (cores, groups), frozen between blocks when `freeze`. */
struct leap_session_opts leap_bench_session_opts(struct leap_bencher *B, const struct leap_case_data *d,
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

/* Draws the base sets of d0 from the seed and runs the baseline once on each (slot k = set k),
 * twice, keeping its outputs as the sets' expected outputs and its time per call. Returns 0,
 * -2 when there is no usable device (*err says why), or -1 with *err. */
static int base_outputs(struct leap_bencher *B, struct leap_case_data *d0, enum leap_backend b, const char *art,
			uint64_t seed, double *call_ms, struct leap_bpool *P, char **err)
{
	struct leap_session s;
	struct leap_session_opts so = leap_bench_session_opts(B, d0, b, 1, 0);
	so.role = NULL; /* cuda: the runner copies each call's slots (only the outputs and a rough time matter) */
	double t0 = leap_now();
	int r = leap_session_start(B->v, &s, b, art, &so, err);
	P->start_ms = (leap_now() - t0) * 1e3;
	for (uint32_t k = 0; r == LEAP_SESS_OK && k < d0->nsets; k++) /* drawn once a device answered */
		leap_case_inputs(d0, k, seed ^ 0xbe4c4u, k, NULL);
	double best = INFINITY;
	size_t np = d0->t->nparams;
	for (uint32_t round = 0; r == LEAP_SESS_OK && round < 2; round++)
		for (uint32_t k = 0; r == LEAP_SESS_OK && k < d0->nsets; k++) {
			struct leap_block bt;
			leap_session_stage(&s, d0, k, k);
			r = leap_session_block(&s, d0, &k, 1, LEAP_RUN_OP_CALL, &bt);
			if (r == LEAP_SESS_OK && round == 1 && bt.ms < best)
				best = bt.ms;
			for (size_t p = 0; r == LEAP_SESS_OK && round == 0 && p < np; p++)
				if (d0->want[(size_t)k * np + p])
					memcpy(d0->want[(size_t)k * np + p], s.arena + d0->out[(size_t)k * np + p], d0->rp[p].bytes);
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

/* Sizes a new pool from the baseline's time per call: a block of the baseline aims at the
 * block target, within what a region of slots and --pool-memory hold (the ring holds the sets
 * of one block, besides the base sets and their donors); a region has the slots of two blocks
 * (the candidate's and the baseline's of a pair: on cuda both are read back through the
 * owner's host region). --hot: blocks of one call, so that a call's inputs are the last the
 * device's copies went through (hot in the L2 when one set fits in it). */
static void pool_size(struct leap_bencher *B, struct leap_bpool *P, const struct leap_case_data *d0, enum leap_backend b)
{
	uint64_t in, out;
	set_bytes(d0, &in, &out);
	uint64_t per = in + out + 1;
	double k = ceil(leap_bench_block_target(&B->o) / (P->call_ms > 1e-4 ? P->call_ms : 1e-4));
	uint64_t kmax = region_budget(B, b) / per / 2, ring = B->o.pool_bytes / per;
	ring = ring > 2 * (uint64_t)P->nbase + 1 ? ring - 2 * P->nbase : 1; /* the donors count as sets */
	if (kmax > ring)
		kmax = ring;
	if (kmax > LEAP_RUN_MAX_CALLS / 2)
		kmax = LEAP_RUN_MAX_CALLS / 2;
	if (kmax < 1 || (B->o.hot && b == LEAP_BACKEND_CUDA))
		kmax = 1;
	P->kb = k < 1 ? 1 : k > (double)kmax ? (uint32_t)kmax : (uint32_t)k;
	P->slots = 2 * P->kb;
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

uint64_t leap_bpool_dev_off(const struct leap_bpool *P, uint32_t s, size_t param)
{
	uint64_t off = (uint64_t)s * P->in_set;
	for (size_t p = 0; p < param; p++) {
		const struct leap_run_param *r = &P->d.rp[p];
		if (r->kind == LEAP_RUN_K_IN || r->kind == LEAP_RUN_K_INOUT)
			off += (r->bytes + 255) & ~(uint64_t)255;
	}
	return off;
}

/* The pool of (t, b, seed), made on first use. NULL with *err. */
struct leap_bpool *leap_bpool_get(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
				  uint64_t seed, const char *base_art, int *nodev, char **err)
{
	*nodev = 0;
	for (size_t i = 0; i < B->npools; i++)
		if (B->pools[i]->task == t && B->pools[i]->backend == b && B->pools[i]->seed == seed)
			return B->pools[i];
	const struct leap_case *c = leap_task_bench_case(t, b);
	struct leap_case_data d0;
	uint32_t nbase = 2;
	if (leap_case_prepare(&d0, t, c, 0, nbase, nbase, err))
		return NULL;
	struct leap_bpool *P = xcalloc(1, sizeof *P);
	*P = (struct leap_bpool){.task = t, .backend = b, .seed = seed, .nbase = nbase};
	int r = base_outputs(B, &d0, b, base_art, seed, &P->call_ms, P, err);
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
	size_t np = t->nparams;
	P->on_dev = xcalloc(P->cap, 1);
	P->rng = leap_random_seed();
	uint64_t donors = leap_bench_rnd(&P->rng);
	for (uint32_t k = 0; k < nbase; k++) {
		for (size_t p = 0; p < np; p++) {
			size_t i = (size_t)k * np + p;
			if (d0.inputs[i])
				memcpy(P->d.inputs[i], d0.inputs[i], d0.rp[p].bytes);
			if (d0.want[i])
				memcpy(P->d.want[i], d0.want[i], d0.rp[p].bytes);
		}
		/* base set k was drawn with pattern k: its donor too, from the secret stream */
		leap_case_donor(&P->d, P->cap + k, donors, k, FRESH_EVERY);
	}
	leap_case_free(&d0);
	leap_case_fork(&P->d, 0); /* every record forks a sandbox, which never reads the pool */
	P->tol_scale = P->d.tol_scale = tol_scale(t, c);
	P->d.tol = B->v->o.tolerance;
	xgrow((void **)&B->pools, &B->poolcap, B->npools + 1, sizeof *B->pools);
	B->pools[B->npools++] = P;
	return P;
}

/* ---- the bench object ---- */

/* The statistics as the bench object's fields (rel_ci -1 when not known). New reference. */
json_t *leap_stats_json(const struct leap_stats *s)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:I,s:f}", "median_ms", s->median, "min_ms", s->min, "mean_ms", s->mean,
			 "stdev_ms", s->stdev, "n", (json_int_t)s->n, "rel_ci", isfinite(s->rel_ci) ? s->rel_ci : -1.0);
}

/* ---- the device ---- */

/* The device's copy bandwidth (GB/s) and FP32 peak (GFLOP/s, 0: unknown), measured once per
 * device name and backend in a runner holding the trusted baseline, cached in memory and
 * under CACHE/devices/. Returns 0, or -1 when the probe failed (no floor then). */
int leap_bench_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
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
		struct leap_session_opts so = leap_bench_session_opts(B, d, b, 1, 0);
		int r = leap_session_start(B->v, &s, b, base_art, &so, &err);
		if (r == LEAP_SESS_OK)
			r = leap_session_probe(&s, gbs, gflops);
		if (r >= 0)
			leap_session_end(&s, NULL, NULL, NULL, 0);
		free(err);
		if (r == LEAP_SESS_OK && *gbs > 0 && leap_mkdirs(dir) == 0) {
			json_t *o = json_pack("{s:s,s:s,s:f,s:f}", "device", device, "backend", leap_backend_name(b), "copy_gbs",
					      *gbs, "fp32_gflops", *gflops);
			char *tmp = xasprintf("%s.%d", path, (int)getpid());
			if (o && leap_json_write_file(o, tmp) == 0)
				rename(tmp, path);
			unlink(tmp);
			free(tmp);
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

const struct leap_memfloor *leap_bench_memfloor(struct leap_bencher *B, const char *device)
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
		char *tmp = xasprintf("%s.%d", path, (int)getpid());
		if (o && leap_mkdirs(dir) == 0 && leap_json_write_file(o, tmp) == 0)
			rename(tmp, path);
		unlink(tmp);
		free(tmp);
		json_decref(o);
	}
	free(dir);
	free(path);
	B->have_mf = ok ? 1 : -1;
	return ok ? &B->mf : NULL;
}
