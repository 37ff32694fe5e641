/* case.c - the data of verification: a case's buffers, poison, reference outputs. */
/*
 * What a verdict is checked against lives here, in the referee's process, never in memory the
 * candidate can reach: each input set is drawn from the run's seed (the same seed gives the same
 * inputs, so a verdict can be re-run), the parent keeps its own copy of every input and the
 * reference's outputs (the shared arena proves nothing), and output slots start as poison (a
 * NaN with a payload, 0xA5 bytes), so that an element never written is told from one computed.
 * The check is element-wise within the task's tolerance and says where the first wrong element
 * is in the candidate's terms (y[3][5], a coordinate per factor of the size, and the inputs
 * when they are few). leap-bench derives
 * its fresh sets from these (leap_case_derive); large buffers are mappings of their own, so that
 * a fork can leave them out (leap_case_fork).
 *
 * One interface (case.h), three files by job: this one holds a case's buffers (prepared, forked,
 * freed), the poison, the copies between the parent and the arena, and the reference's run;
 * case_draw.c makes the inputs (drawn, donors, derived sets, a block staged on threads) and
 * case_check.c compares outputs and writes the mismatch; case_int.h holds the element types'
 * numbers the last two share.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * NaN-poisoned outputs:
 *
 * Before every call each output buffer is filled with a poison pattern (NaN for floating-point
 * types), so elements the kernel did not write are found, and a kernel that skips repeated
 * calls (relying on the previous call's results) is caught. Tests: "unwritten elements are
 * found: one missing, half missing, nothing written, written late by a thread" (unwritten.c,
 * half.c, noop.c, thread_late.c), "a NaN in the output is a mismatch of kind not_finite",
 * leap-bench.bats "a kernel that skips calls on the same pointers is caught: every call's
 * outputs are poisoned".
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/util.h"
#include "case.h"
#include "core/banned.h"

/* The poison element of a type: a quiet NaN with a payload for floating point, 0xA5 bytes
 * for integers. */
static void poison_of(enum leap_type ty, uint8_t out[8])
{
	uint64_t v;
	switch (ty) {
	case LEAP_T_FLOAT:
		v = 0x7FE5A5A5u;
		break;
	case LEAP_T_DOUBLE:
		v = 0x7FFCA5A5A5A5A5A5ull;
		break;
	case LEAP_T_HALF:
		v = 0x7EA5;
		break;
	case LEAP_T_BF16:
		v = 0x7FE5;
		break;
	default:
		v = 0xA5A5A5A5A5A5A5A5ull;
		break;
	}
	memcpy(out, &v, 8); /* little-endian: the low elsize bytes are the element */
}

/* ---- set buffers ---- */

/* Buffers of at least this size are mappings of their own, so that leap_case_fork can tell a
 * fork to leave them out: leap-bench keeps the input pools of every task it met (hundreds of MB
 * to GB) and forks a sandbox per record, and copying those page tables was most of its system
 * time (bench/README.md section 6). */
#define BIG_BUFFER (1u << 20)

static unsigned char *buf_alloc(uint64_t n)
{
	if (n < BIG_BUFFER)
		return xmalloc(n ? (size_t)n : 1);
	void *p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		leap_die("out of memory (%llu bytes for input data)", (unsigned long long)n);
	return p;
}

static void buf_free(unsigned char *p, uint64_t n)
{
	if (!p)
		return;
	if (n < BIG_BUFFER)
		free(p);
	else
		munmap(p, (size_t)n);
}

/* ---- cases ---- */

int leap_case_prepare(struct leap_case_data *d, const struct leap_task *t, const struct leap_case *c, size_t index,
		      uint32_t nsets, uint32_t arena_sets, char **err)
{
	memset(d, 0, sizeof *d);
	d->t = t;
	d->c = c;
	d->index = index;
	d->nsets = nsets;
	d->arena_sets = arena_sets && arena_sets < nsets ? arena_sets : nsets;
	size_t np = t->nparams;
	d->sizes = xcalloc(np ? np : 1, sizeof *d->sizes);
	if (leap_task_sizes(t, c, d->sizes, err)) {
		leap_case_free(d);
		return -1;
	}
	d->rp = xcalloc(np ? np : 1, sizeof *d->rp);
	struct leap_buf desc = {0};
	for (size_t i = 0; i < np; i++) {
		const struct leap_param *p = &t->params[i];
		struct leap_run_param *r = &d->rp[i];
		r->elsize = (uint32_t)leap_type_size(p->type);
		if (p->role == LEAP_ROLE_SCALAR) {
			r->kind = LEAP_RUN_K_SCALAR;
			const union leap_scalar *v = &c->vals[i];
			switch (p->type) {
			case LEAP_T_FLOAT: {
				float f = (float)v->f;
				memcpy(r->value, &f, 4);
				leap_buf_addf(&desc, "%s%s=%g", desc.len ? ", " : "", p->name, v->f);
				break;
			}
			case LEAP_T_DOUBLE:
				memcpy(r->value, &v->f, 8);
				leap_buf_addf(&desc, "%s%s=%g", desc.len ? ", " : "", p->name, v->f);
				break;
			default: {
				int64_t x = v->i;
				if (p->type == LEAP_T_INT) {
					int32_t y = (int32_t)x;
					memcpy(r->value, &y, 4);
				} else if (p->type == LEAP_T_UINT8) {
					r->value[0] = (uint8_t)x;
				} else {
					memcpy(r->value, &x, 8);
				}
				leap_buf_addf(&desc, "%s%s=%lld", desc.len ? ", " : "", p->name, (long long)x);
			}
			}
			continue;
		}
		r->kind = p->role == LEAP_ROLE_IN ? LEAP_RUN_K_IN : p->role == LEAP_ROLE_OUT ? LEAP_RUN_K_OUT : LEAP_RUN_K_INOUT;
		if ((uint64_t)d->sizes[i] > UINT64_MAX / r->elsize) {
			*err = xasprintf("buffer %s is too large", p->name);
			leap_buf_free(&desc);
			leap_case_free(d);
			return -1;
		}
		r->bytes = (uint64_t)d->sizes[i] * r->elsize;
		poison_of(p->type, r->poison);
	}
	d->desc = desc.s ? leap_buf_detach(&desc) : xstrdup("no scalars");
	size_t slots = (size_t)nsets * (np ? np : 1);
	size_t aslots = (size_t)d->arena_sets * (np ? np : 1);
	d->in = xcalloc(aslots, sizeof *d->in);
	d->out = xcalloc(aslots, sizeof *d->out);
	d->after = xcalloc(aslots, sizeof *d->after);
	d->arena_bytes = leap_run_layout(d->rp, (uint32_t)np, d->arena_sets, d->in, d->out, d->after);
	if (!d->arena_bytes) {
		*err = xasprintf("the buffers of case %zu are too large", index);
		leap_case_free(d);
		return -1;
	}
	d->inputs = xcalloc(slots, sizeof *d->inputs);
	d->want = xcalloc(slots, sizeof *d->want);
	for (uint32_t s = 0; s < nsets; s++)
		for (size_t i = 0; i < np; i++) {
			const struct leap_run_param *r = &d->rp[i];
			if (r->kind == LEAP_RUN_K_SCALAR)
				continue;
			size_t k = (size_t)s * np + i;
			if (r->kind != LEAP_RUN_K_OUT)
				d->inputs[k] = buf_alloc(r->bytes);
			if (r->kind != LEAP_RUN_K_IN)
				d->want[k] = buf_alloc(r->bytes);
		}
	return 0;
}

void leap_case_fork(struct leap_case_data *d, int copy)
{
	size_t np = d->t ? d->t->nparams : 0;
	for (size_t k = 0; k < (size_t)d->nsets * np; k++) {
		uint64_t n = d->rp[k % np].bytes;
		if (n < BIG_BUFFER)
			continue;
		/* best effort: without it a fork copies more page tables, nothing else */
		if (d->inputs[k])
			(void)madvise(d->inputs[k], (size_t)n, copy ? MADV_DOFORK : MADV_DONTFORK);
		if (d->want[k])
			(void)madvise(d->want[k], (size_t)n, copy ? MADV_DOFORK : MADV_DONTFORK);
	}
}

void leap_case_free(struct leap_case_data *d)
{
	size_t np = d->t && d->t->nparams ? d->t->nparams : 1;
	size_t slots = (size_t)d->nsets * np;
	for (size_t k = 0; k < slots; k++) {
		uint64_t n = d->rp ? d->rp[k % np].bytes : 0;
		if (d->inputs)
			buf_free(d->inputs[k], n);
		if (d->want)
			buf_free(d->want[k], n);
	}
	free(d->inputs);
	free(d->want);
	free(d->sizes);
	free(d->rp);
	free(d->in);
	free(d->out);
	free(d->after);
	free(d->desc);
	memset(d, 0, sizeof *d);
}

void leap_case_mark_drawn(struct leap_case_data *d)
{
	d->drawn = 1;
	char *desc = xasprintf("%s; random sizes, not a listed case", d->desc);
	free(d->desc);
	d->desc = desc;
}

void leap_case_poison(const struct leap_case_data *d, unsigned char *arena, uint32_t slot)
{
	size_t np = d->t->nparams;
	for (size_t p = 0; p < np; p++) {
		const struct leap_run_param *rp = &d->rp[p];
		if (rp->kind == LEAP_RUN_K_OUT)
			leap_fill(arena + d->out[(size_t)slot * np + p], rp->bytes, rp->poison, rp->elsize);
	}
}

void leap_case_upload(const struct leap_case_data *d, uint32_t set, uint32_t slot, unsigned char *arena)
{
	size_t np = d->t->nparams;
	for (size_t i = 0; i < np; i++) {
		const struct leap_run_param *r = &d->rp[i];
		if (r->kind == LEAP_RUN_K_SCALAR || r->kind == LEAP_RUN_K_OUT)
			continue;
		memcpy(arena + d->in[(size_t)slot * np + i], d->inputs[(size_t)set * np + i], r->bytes);
	}
}

void leap_case_swap(struct leap_case_data *d, uint32_t set, struct leap_case_data *o, uint32_t oset)
{
	size_t np = d->t->nparams;
	for (size_t p = 0; p < np; p++) {
		size_t i = (size_t)set * np + p, j = (size_t)oset * np + p;
		unsigned char *x = d->inputs[i], *y = d->want[i];
		d->inputs[i] = o->inputs[j];
		d->want[i] = o->want[j];
		o->inputs[j] = x;
		o->want[j] = y;
	}
}

void leap_case_expect(struct leap_case_data *d, uint32_t set, uint32_t slot, const unsigned char *arena)
{
	size_t np = d->t->nparams;
	for (size_t p = 0; p < np; p++)
		if (d->want[(size_t)set * np + p])
			memcpy(d->want[(size_t)set * np + p], arena + d->out[(size_t)slot * np + p], d->rp[p].bytes);
}

int leap_case_reference(struct leap_case_data *d, uint32_t set, leap_entry_fn ref)
{
	size_t np = d->t->nparams;
	void **args = xcalloc(np ? np : 1, sizeof *args);
	unsigned char **tmp = xcalloc(np ? np : 1, sizeof *tmp);
	for (size_t i = 0; i < np; i++) {
		const struct leap_run_param *r = &d->rp[i];
		size_t k = (size_t)set * np + i;
		if (r->kind == LEAP_RUN_K_SCALAR) {
			args[i] = (void *)r->value;
		} else if (r->kind == LEAP_RUN_K_IN) {
			tmp[i] = xmalloc(r->bytes ? r->bytes : 1);
			memcpy(tmp[i], d->inputs[k], r->bytes);
			args[i] = tmp[i];
		} else {
			if (r->kind == LEAP_RUN_K_INOUT)
				memcpy(d->want[k], d->inputs[k], r->bytes);
			else
				leap_fill(d->want[k], r->bytes, r->poison, r->elsize);
			args[i] = d->want[k];
		}
	}
	int rc = ref(args);
	for (size_t i = 0; i < np; i++)
		free(tmp[i]);
	free(tmp);
	free(args);
	return rc;
}
