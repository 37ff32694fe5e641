/* vcases.c - the cases leap-verify runs a task's candidates on, made once per task and seed. */
/*
 * The listed cases, the cases of sizes drawn from the seed, a case of every remainder the task
 * asks for, each with its inputs and the trusted reference's outputs, computed in this process
 * once per run (the seed is per run, so every candidate of a task sees the same inputs), and
 * the reference's longest time per case, the base of the bound on a candidate's call. verify.c
 * runs the candidates on them. The reference itself is here too: reference.c built and loaded
 * into this process (leap_reference, which leap-bench's cpu baseline also uses), or a module
 * task's kept torch process.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "task/build.h"
#include "core/files.h"
#include "torchref.h"
#include "verify.h"
#include "core/util.h"
#include "core/banned.h"

leap_entry_fn leap_reference(struct leap_verifier *v, const struct leap_task *t, char **err)
{
	if (t->module) {
		/* its reference is torch (torch_reference): no C entry to call or time yet */
		*err = xasprintf("task '%s' is a module task: its reference is torch, which this program "
				 "does not run yet", t->id);
		return NULL;
	}
	for (size_t i = 0; i < v->nrefs; i++)
		if (v->refs[i].task == t)
			return v->refs[i].entry;
	char *src_path = xasprintf("%s/reference.c", t->dir);
	size_t len = 0;
	char *src = leap_read_file(src_path, &len, err);
	free(src_path);
	if (!src)
		return NULL;
	char *path = leap_build_artifact(t, leap_backend_reference(), src, len, v->o.cache, err);
	free(src);
	if (!path) {
		char *e = xasprintf("the reference of task '%s' does not build: %s", t->id, *err);
		free(*err);
		*err = e;
		return NULL;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	leap_entry_fn f = h ? (leap_entry_fn)(uintptr_t)dlsym(h, LEAP_ABI_ENTRY) : NULL;
	if (!f) {
		*err = xasprintf("the reference of task '%s' cannot be loaded: %s", t->id, dlerror());
		if (h)
			dlclose(h);
		free(path);
		return NULL;
	}
	xgrow((void **)&v->refs, &v->cap, v->nrefs + 1, sizeof *v->refs);
	v->refs[v->nrefs++] = (struct leap_ref){t, leap_backend_reference(), h, f, path};
	return f;
}

/* The kept torch process of module task t, started on first use. NULL with a new message in
 * *err when torch is not there or the process does not start. */
static struct leap_torchref *torch_reference(struct leap_verifier *v, const struct leap_task *t, char **err)
{
	for (size_t i = 0; i < v->nrefs; i++)
		if (v->refs[i].task == t)
			return v->refs[i].torch;
	struct leap_torchref *r = leap_torchref_start(t, v->o.libexec, err);
	if (!r)
		return NULL;
	xgrow((void **)&v->refs, &v->cap, v->nrefs + 1, sizeof *v->refs);
	v->refs[v->nrefs++] = (struct leap_ref){.task = t, .backend = leap_backend_reference(), .torch = r};
	return r;
}

/* The reference outputs of set k of d: reference.c's entry, or a module task's torch. */
static int reference_set(struct leap_case_data *d, uint32_t k, leap_entry_fn ref, struct leap_torchref *tr,
			 char **err)
{
	if (tr)
		return leap_torchref_case(tr, d, k, err);
	int rc = leap_case_reference(d, k, ref);
	if (rc)
		*err = xasprintf("the reference of task '%s' returned %d on %s", d->t->id, rc, d->desc);
	return rc;
}

/* The cases of task t for `seed` with their inputs and reference results, computed once
 * per run (the seed is per run, so every candidate of the task sees the same inputs): the
 * listed cases, then v->o.drawn cases of sizes drawn from the seed within the task's ranges,
 * then a case of every remainder of the task's "residues" (none when no case is drawn).
 * Returns NULL with a new message in *err when the reference fails. */
struct leap_vcache *leap_verify_cases(struct leap_verifier *v, const struct leap_task *t, uint64_t seed, char **err)
{
	for (size_t i = 0; i < v->ncache; i++)
		if (v->cache[i].task == t && v->cache[i].seed == seed)
			return &v->cache[i];
	leap_entry_fn ref = NULL;
	struct leap_torchref *tr = NULL;
	if (t->module ? !(tr = torch_reference(v, t, err)) : !(ref = leap_reference(v, t, err)))
		return NULL;
	int trials = v->o.trials;
	/* the drawn cases, then (where the task asks for "residues") a case of every remainder */
	size_t nrand = t->nranges && v->o.drawn > 0 ? (size_t)v->o.drawn : 0;
	size_t nres = nrand ? (size_t)t->residue_mod : 0, ndrawn = nrand + nres, n = t->ncases + ndrawn;
	struct leap_case *drawn = xcalloc(ndrawn ? ndrawn : 1, sizeof *drawn);
	for (size_t k = 0; k < nrand; k++)
		leap_task_draw_case(t, seed, k, &drawn[k]);
	for (size_t k = 0; k < nres; k++) /* the loader proved each exists */
		if (leap_task_residue_case(t, k, &drawn[nrand + k]))
			leap_task_smallest_case(t, 0, &drawn[nrand + k]);
	struct leap_case_data *cd = xcalloc(n ? n : 1, sizeof *cd);
	double *ref_s = xcalloc(n ? n : 1, sizeof *ref_s);
	uint64_t arena = 64;
	size_t ci = 0;
	for (; ci < n; ci++) {
		struct leap_case_data *d = &cd[ci];
		const struct leap_case *c = ci < t->ncases ? &t->cases[ci] : &drawn[ci - t->ncases];
		/* a residue case is there for its size: one input set, the patterns rotating over
		 * the cases (64 of them at every trial would cost more than all the others) */
		int residue = ci >= t->ncases + nrand, sets = residue ? 1 : trials;
		if (leap_case_prepare(d, t, c, ci, (uint32_t)sets, 1, err))
			goto fail;
		d->tol = v->o.tolerance;
		if (ci >= t->ncases + nrand)
			leap_case_mark_residue(d);
		else if (ci >= t->ncases)
			leap_case_mark_drawn(d);
		if (d->arena_bytes > arena)
			arena = d->arena_bytes;
		for (int k = 0; k < sets; k++) {
			leap_case_inputs(d, (uint32_t)k, seed, (unsigned)(residue ? ci : ci * (size_t)trials + (size_t)k), NULL);
			double r0 = leap_now();
			int rc = reference_set(d, (uint32_t)k, ref, tr, err);
			if (leap_now() - r0 > ref_s[ci])
				ref_s[ci] = leap_now() - r0;
			if (rc) {
				ci++;
				goto fail;
			}
		}
	}
	xgrow((void **)&v->cache, &v->ccap, v->ncache + 1, sizeof *v->cache);
	v->cache[v->ncache] = (struct leap_vcache){t, seed, cd, n, drawn, ndrawn, nrand, arena, ref_s};
	return &v->cache[v->ncache++];
fail:
	for (size_t i = 0; i < ci; i++)
		leap_case_free(&cd[i]);
	free(cd);
	free(ref_s);
	for (size_t k = 0; k < ndrawn; k++)
		free(drawn[k].vals);
	free(drawn);
	return NULL;
}

/* verify.drawn: the values of the cases drawn at random, so that a verdict can be read and
 * replayed (the residue cases are the task's own, whatever the seed). */
json_t *leap_verify_drawn_json(const struct leap_vcache *vc)
{
	json_t *a = json_array();
	for (size_t k = 0; k < vc->nrandom; k++)
		json_array_append_new(a, leap_case_json(vc->task, &vc->drawn[k]));
	return a;
}

int leap_verify_prepare(struct leap_verifier *v, const struct leap_task *t, uint64_t seed, char **err)
{
	return leap_verify_cases(v, t, seed, err) ? 0 : -1;
}
