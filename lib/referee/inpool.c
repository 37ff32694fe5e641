/* inpool.c - leap-bench's input pools (struct leap_bpool, bench.h): per (task, backend, seed)
 * the base sets, their donors and the ring of derived sets every pair of blocks runs on, sized
 * from the baseline's time per call; the baseline's measures remembered under CACHE/pools/;
 * the pools of earlier tasks kept within a bound. The referee's loop (referee.c) only takes a
 * pool and asks it for fresh sets (ref_pool_fresh); how the sets are made secret, and why, is
 * the design at the top of referee.c and the pool's comment in bench.h. (lib/referee/pool.c is another
 * thing: the forked workers of leap-verify and leap-bench.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "task/build.h"
#include "core/files.h"
#include "core/jsonl.h"
#include "referee_int.h"
#include "core/rng.h"
#include "tlock.h"
#include "core/util.h"
#include "core/banned.h"

/* Pools of earlier tasks are kept (a task that comes back, with the next turn's records or
 * the next sample of its group, finds its sets made and its baseline's runner started) while
 * all pools together hold at most LEAP_BENCH_POOLS_KEPT (verdict.h) times --pool-memory; the
 * one used longest ago goes first. Kept without a bound, a stream of a few hundred tasks
 * (KernelBench's suites) kept a runner and its memory per task: 2.7 GB and 31 runners after 29
 * of the suite's cpu tasks, and on cuda the device's memory, until allocations failed. */

/* The base sets of a pool are drawn from --seed mixed with this (not the seed's own sets, which
 * leap-verify checks on). */
#define BASE_SEED 0xbe4c4u

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

/* ---- the input pool ---- */

/* leap_bench_prepare (bench.h): the pool made before the workers fork, under the same lock. */
int leap_bench_prepare(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, uint64_t seed,
		       char **err)
{
	*err = NULL;
	int skip = 0;
	char *base_art = ref_baseline_artifact(B, t, b, &skip, err);
	if (!base_art && skip) { /* each record will say why it is not timed (leap_bench_artifact) */
		free(*err);
		*err = NULL;
		return 0;
	}
	if (!base_art)
		return -1;
	int cpu = leap_backend_has(b, LEAP_BK_HOST), lock[2] = {-1, -1}, nodev = 0;
	int r = (!cpu || leap_timing_lock(B->v->o.cache, &B->lock_said, lock, err) == 0) &&
			ref_pool_get(B, t, b, seed, base_art, &nodev, err) ? 0 : -1;
	if (r && nodev) { /* each record will say no_device */
		free(*err);
		*err = NULL;
		r = 0;
	}
	leap_timing_unlock(lock);
	free(base_art);
	return r;
}

/* The baseline artifact of t on backend b: a module task's torch (torchbase.h), else the
 * backend's baseline file (cuda: baseline.cu, built and cached), else reference.c (cpu: built
 * by the verifier). Returns a new path, or NULL with *err set, and *skip when the task has no
 * baseline to time against (leap_torch_baseline). */
char *ref_baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, int *skip,
			    char **err)
{
	struct leap_verifier *v = B->v;
	char *base_art = NULL;
	*skip = 0;
	if (t->module) {
		base_art = leap_torch_baseline(&B->torch, v, t, b, leap_torch_kind(t, B->o.baseline), B->ncpus, skip,
					       err);
	} else if (leap_backend_of(b)->baseline) {
		char *p = xasprintf("%s/%s", t->dir, leap_backend_of(b)->baseline);
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
	uint64_t sets = 2ull * P->nbase + (leap_backend_has(P->backend, LEAP_BK_OWNER) ? P->cap : 0);
	uint64_t bytes = sets * (in + out);
	if (P->have_creg)
		bytes += P->creg.in_len + P->creg.out_len;
	if (P->have_bs && P->bs.rg)
		bytes += P->bs.rg->in_len + P->bs.rg->out_len;
	return bytes;
}

/* Frees the pools used longest ago until those left, with `room` more, fit in
 * LEAP_BENCH_POOLS_KEPT times `budget`, the pool's (or none is left). */
static void pools_trim(struct leap_bencher *B, uint64_t room, uint64_t budget)
{
	for (;;) {
		uint64_t total = room;
		size_t old = 0;
		for (size_t i = 0; i < B->npools; i++) {
			total += pool_footprint(B->pools[i]);
			if (B->pools[i]->used < B->pools[old]->used)
				old = i;
		}
		if (!B->npools || total <= LEAP_BENCH_POOLS_KEPT * budget)
			return;
		leap_bpool_free(B->pools[old]);
		B->pools[old] = B->pools[--B->npools];
	}
}

/* The pool of (t, b, seed), made on first use (the pools used longest ago freed first, within
 * LEAP_BENCH_POOLS_KEPT). NULL with *err. */
struct leap_bpool *ref_pool_get(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
				   uint64_t seed, const char *base_art, int *nodev, char **err)
{
	*nodev = 0;
	B->uses++;
	for (size_t i = 0; i < B->npools; i++)
		if (B->pools[i]->task == t && B->pools[i]->backend == b && B->pools[i]->seed == seed) {
			B->pools[i]->used = B->uses;
			return B->pools[i];
		}
	uint64_t budget = ref_pool_budget(B, b); /* the new pool's room, and the bound of all kept */
	pools_trim(B, budget, budget);
	const struct leap_case *c = leap_task_bench_case(t, b);
	struct leap_case_data d0;
	uint32_t nbase = 2;
	if (leap_case_prepare(&d0, t, c, 0, nbase, nbase, err))
		return NULL;
	struct leap_bpool *P = xcalloc(1, sizeof *P);
	*P = (struct leap_bpool){.task = t, .backend = b, .seed = seed, .nbase = nbase, .used = B->uses};
	char *memo = leap_backend_has(b, LEAP_BK_HOST) ? memo_path(B, t, c, base_art) : NULL;
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
	struct leap_session_opts so = ref_session_opts(B, d0, b, 1, 0);
	so.role = NULL; /* cuda: the runner copies each call's slots (only the outputs and a rough time matter) */
	ref_base_session(B, d0->t, b, &so);
	double t0 = leap_now();
	int r = ref_session_open(B->v, &s, b, art, &so, err);
	/* the bound on a candidate's start-up: its runner's, up to the hello; a module task's torch
	 * imports torch when loaded, after it (seconds a candidate's runner never needs: with them
	 * a withheld hello held a record 30 s instead of 2) */
	double end = d0->t->module && s.hello_at > t0 ? s.hello_at : leap_now();
	P->start_ms = (end - t0) * 1e3;
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
	double k = ceil(ref_block_target(&B->o) / (P->call_ms > 1e-4 ? P->call_ms : 1e-4));
	uint64_t kmax = region_budget(B, b) / per / 2, ring = ref_pool_budget(B, b) / per;
	ring = ring > 2 * (uint64_t)P->nbase + 1 ? ring - 2 * P->nbase : 1; /* the donors count as sets */
	if (kmax > ring)
		kmax = ring;
	if (kmax > LEAP_RUN_MAX_CALLS / 2)
		kmax = LEAP_RUN_MAX_CALLS / 2;
	if (kmax < 1 || (B->o.hot && leap_backend_has(b, LEAP_BK_OWNER)))
		kmax = 1;
	P->kb = k < 1 ? 1 : k > (double)kmax ? (uint32_t)kmax : (uint32_t)k;
	P->slots = leap_backend_has(b, LEAP_BK_OWNER) ? 2 * P->kb : P->kb;
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

/* The memory of the device the verifier has now, in bytes: 0 on a backend whose device is the
 * host's (cpu), or when the device's memory is not known. */
static uint64_t device_bytes(struct leap_bencher *B, enum leap_backend b)
{
	if (!leap_backend_has(b, LEAP_BK_OWNER) || !B->v->gpu.done)
		return 0;
	char *end;
	long idx = strtol(B->v->o.device ? B->v->o.device : "0", &end, 10);
	const struct leap_gpu_dev *g = *end ? NULL : leap_gpu_device(&B->v->gpu.g, (int)idx);
	return g && g->memory_mib > 0 ? (uint64_t)g->memory_mib << 20 : 0;
}

/* The bytes one region of slots may take: on cpu 256 MiB (a candidate's address space is
 * limited to --memory beyond them); on cuda an eighth of the device's memory (the owner holds
 * its own region, the candidate's and the pool's inputs there), 256 MiB when it is unknown. */
static uint64_t region_budget(struct leap_bencher *B, enum leap_backend b)
{
	uint64_t dev = device_bytes(B, b);
	return dev ? dev / 8 : 256ull << 20;
}

/* --pool-memory, or when it was not given the backend's: on cuda a quarter of the device's
 * memory (verdict.h's shares), at most a sixteenth of the host's, never below the 512M that
 * every backend gets otherwise. The cpu's stays 512M: there a region's budget, not the pool,
 * bounds a block of large sets. On a device the pool's 512M made every set over 85 MiB a
 * one-call block, whatever the device held (bench/blocks.md: 129 of KernelBench's 197 tasks
 * at their benchmark sizes), while its region budget had room for several. */
uint64_t ref_pool_budget(struct leap_bencher *B, enum leap_backend b)
{
	uint64_t least = (uint64_t)LEAP_BENCH_POOL_MIB << 20, dev = device_bytes(B, b);
	if (B->o.pool_bytes)
		return B->o.pool_bytes;
	if (!dev)
		return least;
	uint64_t v = dev / LEAP_BENCH_POOL_DEVICE_SHARE;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	if (pages > 0 && page > 0 && (uint64_t)pages * (uint64_t)page / LEAP_BENCH_POOL_HOST_SHARE < v)
		v = (uint64_t)pages * (uint64_t)page / LEAP_BENCH_POOL_HOST_SHARE;
	return v > least ? v : least;
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
 * and its inputs made in its buffers when `make` (else where they are needed: stage, ref_pool_make).
 * Returns its index; its expected outputs are for the baseline's block to write. */
uint32_t ref_pool_fresh(struct leap_bpool *P, int make)
{
	uint32_t s = P->next;
	P->next = P->next + 1 < P->cap ? P->next + 1 : P->nbase;
	P->ring_base[s] = (uint32_t)(leap_rng_next(&P->rng) % P->nbase);
	P->ring_seed[s] = leap_rng_next(&P->rng);
	P->made[s] = 0;
	P->on_dev[s] = 0;
	if (make)
		ref_pool_make(P, s);
	return s;
}

/* Makes the inputs of derived set s in its own buffers, if they are not there. */
void ref_pool_make(struct leap_bpool *P, uint32_t s)
{
	if (!P->made[s])
		leap_case_derive(&P->d, s, P->ring_base[s], P->cap + P->ring_base[s], P->ring_seed[s], FRESH_EVERY);
	P->made[s] = 1;
}

/* cuda: the offset of parameter `param` of set s in the owner's device pool. */
uint64_t ref_pool_dev_off(const struct leap_bpool *P, uint32_t s, size_t param)
{
	uint64_t off = (uint64_t)s * P->in_set;
	for (size_t p = 0; p < param; p++) {
		const struct leap_run_param *r = &P->d.rp[p];
		if (r->kind == LEAP_RUN_K_IN || r->kind == LEAP_RUN_K_INOUT)
			off += (r->bytes + 255) & ~(uint64_t)255;
	}
	return off;
}


