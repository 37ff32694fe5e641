/* devmove.c - the device's side of leap-bench's referee. On cuda the candidate's runner holds
 * no input of its own: the owner (the baseline's trusted runner) moves every set from its
 * device pool into the candidate's regions before a block and the outputs back into its host
 * region after it, where the referee reads them (ref_stage_dev, ref_fetch_dev). And the probes
 * the memory floor needs (verdict.c's floor_check): the device's copy bandwidth and FP32 peak,
 * measured in a trusted runner, and the cpu's caches and memory; both cached under
 * CACHE/devices/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/build.h"
#include "core/files.h"
#include "core/jsonl.h"
#include "referee_int.h"
#include "core/util.h"
#include "core/banned.h"

/* A list of data moves for the owner (cuda). */
struct xfers {
	struct leap_run_xfer *x;
	size_t n, cap;
};

static void xf_add(struct xfers *xs, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off, uint64_t len,
		const uint8_t *pattern, uint32_t elsize);
static uint32_t space_of(uint64_t off, uint32_t in_space, uint32_t out_space, uint64_t *local);
static int xf_run(struct rec *R, struct xfers *xs, int flush);
static int memfloor_from_json(const json_t *j, struct leap_memfloor *f);

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
int ref_stage_dev(struct rec *R, int client, const uint32_t *sets, const uint32_t *slots, uint32_t n)
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
			uint64_t pool = ref_pool_dev_off(P, s, p);
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
int ref_fetch_dev(struct rec *R, int client, const uint32_t *slots, uint32_t n)
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

/* ---- the device ---- */

/* The device's copy bandwidth (GB/s) and FP32 peak (GFLOP/s, 0: unknown), measured once per
 * device name and backend in a runner holding the trusted baseline, cached in memory and
 * under CACHE/devices/. Returns 0, or -1 when the probe failed (no floor then). */
int ref_device_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
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
		struct leap_session_opts so = ref_session_opts(B, d, b, 1, 0);
		ref_base_session(B, d->t, b, &so);
		int r = ref_session_open(B->v, &s, b, base_art, &so, &err);
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
const struct leap_memfloor *ref_cpu_memfloor(struct leap_bencher *B, const char *device)
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
