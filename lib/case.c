/* case.c - the data of verification: seeded inputs, poison, reference outputs, comparison. */
/*
 * What a verdict is checked against lives here, in the referee's process, never in memory the
 * candidate can reach: each input set is drawn from the run's seed (the same seed gives the same
 * inputs, so a verdict can be re-run), the parent keeps its own copy of every input and the
 * reference's outputs (the shared arena proves nothing), and output slots start as poison (a
 * NaN with a payload, 0xA5 bytes), so that an element never written is told from one computed.
 * The check is element-wise within the task's tolerance and says where the first wrong element
 * is in the candidate's terms (y[3][5], and the inputs when they are few). leap-bench derives
 * its fresh sets from these (leap_case_derive); large buffers are mappings of their own, so that
 * a fork can leave them out (leap_case_fork).
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
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jsonl.h"
#include "par.h"
#include "rng.h"
#include "stream.h"
#include "util.h"
#include "case.h"
#include "banned.h"

/* ---- numbers ---- */

/* Standard normal draws from the stream *rng, two at a time: Box-Muller in single precision,
 * both of its outputs, both uniforms from one 64-bit draw (u in (0, 1], so tails end at 5.8
 * standard deviations). Inputs are single precision or narrower; the double-precision log
 * and cosine per draw were most of what a pool's first record took to draw vector_add's four
 * million-element inputs (bench/README.md section 6). */
struct normals {
	uint64_t *rng;
	float spare;
	int have;
};

static double normal(struct normals *g)
{
	if (g->have) {
		g->have = 0;
		return g->spare;
	}
	uint64_t x = leap_rng_next(g->rng);
	float u = (float)((x >> 40) + 1) * 0x1.0p-24f, v = (float)(x & 0xffffff) * 0x1.0p-24f;
	float r = sqrtf(-2.0f * logf(u)), sn, cs;
	sincosf(6.28318531f * v, &sn, &cs);
	g->spare = r * sn;
	g->have = 1;
	return r * cs;
}

/* IEEE binary16 bits of f, rounded to nearest even (overflow to infinity). */
static uint16_t float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
	if (e == 0xff)
		return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
	int ex = (int)e - 127 + 15;
	if (ex >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (ex <= 0) {
		if (ex < -10)
			return (uint16_t)sign;
		m |= 0x800000;
		int shift = 14 - ex;
		uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (hm & 1)))
			hm++;
		return (uint16_t)(sign | hm);
	}
	uint32_t hm = m >> 13, rem = m & 0x1fff;
	uint32_t h = sign | ((uint32_t)ex << 10) | hm;
	if (rem > 0x1000 || (rem == 0x1000 && (hm & 1)))
		h++;
	return (uint16_t)h;
}

/* The float value of binary16 bits h (exact). */
static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
	if (e == 0) {
		if (m == 0) {
			x = sign;
		} else {
			int k = -1;
			do {
				k++;
				m <<= 1;
			} while (!(m & 0x400));
			x = sign | ((uint32_t)(127 - 15 - k) << 23) | ((m & 0x3ff) << 13);
		}
	} else if (e == 31) {
		x = sign | 0x7f800000 | (m << 13);
	} else {
		x = sign | ((e + 127 - 15) << 23) | (m << 13);
	}
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* bfloat16 bits of f, rounded to nearest even (NaN stays NaN). */
static uint16_t float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

/* The float value of bfloat16 bits h (exact). */
static float bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* Element i of a buffer of type `ty` as a double. */
static double get(enum leap_type ty, const unsigned char *b, size_t i)
{
	switch (ty) {
	case LEAP_T_FLOAT: {
		float f;
		memcpy(&f, b + 4 * i, 4);
		return f;
	}
	case LEAP_T_DOUBLE: {
		double f;
		memcpy(&f, b + 8 * i, 8);
		return f;
	}
	case LEAP_T_INT: {
		int32_t v;
		memcpy(&v, b + 4 * i, 4);
		return v;
	}
	case LEAP_T_INT64: {
		int64_t v;
		memcpy(&v, b + 8 * i, 8);
		return (double)v;
	}
	case LEAP_T_HALF: {
		uint16_t h;
		memcpy(&h, b + 2 * i, 2);
		return half_to_float(h);
	}
	case LEAP_T_BF16: {
		uint16_t h;
		memcpy(&h, b + 2 * i, 2);
		return bf16_to_float(h);
	}
	case LEAP_T_UINT8:
		return b[i];
	}
	return 0;
}

/* Stores v as element i of a buffer of type ty (converted, rounded for half/bf16). */
static void put(enum leap_type ty, unsigned char *b, size_t i, double v)
{
	switch (ty) {
	case LEAP_T_FLOAT: {
		float f = (float)v;
		memcpy(b + 4 * i, &f, 4);
		break;
	}
	case LEAP_T_DOUBLE:
		memcpy(b + 8 * i, &v, 8);
		break;
	case LEAP_T_INT: {
		int32_t x = (int32_t)v;
		memcpy(b + 4 * i, &x, 4);
		break;
	}
	case LEAP_T_INT64: {
		int64_t x = (int64_t)v;
		memcpy(b + 8 * i, &x, 8);
		break;
	}
	case LEAP_T_HALF: {
		uint16_t h = float_to_half((float)v);
		memcpy(b + 2 * i, &h, 2);
		break;
	}
	case LEAP_T_BF16: {
		uint16_t h = float_to_bf16((float)v);
		memcpy(b + 2 * i, &h, 2);
		break;
	}
	case LEAP_T_UINT8:
		b[i] = (unsigned char)v;
		break;
	}
}

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

/* Marks d drawn, its description saying how its sizes were chosen. */
static void mark_unlisted(struct leap_case_data *d, const char *how)
{
	d->drawn = 1;
	char *desc = xasprintf("%s; %s, not a listed case", d->desc, how);
	free(d->desc);
	d->desc = desc;
}

void leap_case_mark_drawn(struct leap_case_data *d)
{
	mark_unlisted(d, "random sizes");
}

void leap_case_mark_residue(struct leap_case_data *d)
{
	mark_unlisted(d, "one of every remainder of a size");
}

/* The k-th (mod count) pattern bit allowed by `dists`. */
static unsigned pick_dist(unsigned dists, unsigned k)
{
	unsigned n = 0;
	for (unsigned b = 1; b <= LEAP_DIST_LAST; b <<= 1)
		n += (dists & b) != 0;
	if (!n)
		return LEAP_DIST_NORMAL;
	k %= n;
	for (unsigned b = 1; b <= LEAP_DIST_LAST; b <<= 1)
		if ((dists & b) && k-- == 0)
			return b;
	return LEAP_DIST_NORMAL;
}

const char *leap_case_pattern_name(const struct leap_case_data *d, unsigned pattern)
{
	for (size_t i = 0; i < d->t->nparams; i++) {
		const struct leap_param *p = &d->t->params[i];
		if (p->role != LEAP_ROLE_SCALAR && p->role != LEAP_ROLE_OUT && leap_type_is_float(p->type))
			return leap_dist_name(pick_dist(p->dists, pattern));
	}
	return "range";
}

/* Fills n elements of parameter p's buffer from *rng: its integer range, or the float
 * pattern number `pattern` selects; never all zeros. */
static void fill(const struct leap_param *p, unsigned char *b, size_t n, uint64_t *rng, unsigned pattern)
{
	if (!leap_type_is_float(p->type)) {
		uint64_t span = (uint64_t)(p->hi - p->lo) + 1;
		int any = 0;
		for (size_t i = 0; i < n; i++) {
			int64_t v = p->lo + (int64_t)(span ? leap_rng_next(rng) % span : leap_rng_next(rng));
			any |= v != 0;
			put(p->type, b, i, (double)v);
		}
		if (!any && n && p->hi != 0)
			put(p->type, b, n / 2, (double)p->hi);
		return;
	}
	unsigned dist = pick_dist(p->dists, pattern);
	struct normals g = {rng, 0, 0};
	int any = 0;
	for (size_t i = 0; i < n; i++) {
		double v;
		switch (dist) {
		case LEAP_DIST_UNIFORM:
			v = 2.0 * leap_rng_unit(rng) - 1.0;
			break;
		case LEAP_DIST_SMALL:
			v = normal(&g) * 1e-3;
			break;
		case LEAP_DIST_LARGE:
			v = normal(&g) * 1e3;
			break;
		case LEAP_DIST_SPARSE:
			v = leap_rng_unit(rng) < 0.9 ? 0.0 : normal(&g);
			break;
		case LEAP_DIST_POSITIVE:
			v = 0.1 + 9.9 * leap_rng_unit(rng);
			break;
		case LEAP_DIST_LOGITS:
			v = normal(&g) * 3.0;
			break;
		case LEAP_DIST_NEAR_ONE:
			v = 1.0 + normal(&g) * 1e-2;
			break;
		case LEAP_DIST_TIES:
			v = (double)(leap_rng_next(rng) % 9) - 4.0;
			break;
		case LEAP_DIST_LARGE_INT:
			v = rint(normal(&g) * 16.0);
			break;
		default:
			v = normal(&g);
			break;
		}
		put(p->type, b, i, v);
		any = any || get(p->type, b, i) != 0.0; /* read back: the type may round v to 0 */
	}
	if (!any && n)
		put(p->type, b, n / 2, dist == LEAP_DIST_SMALL ? 1e-3 : 1.0);
}

/* The elements of a donor for an input of n elements: one per element a derived set takes
 * (n / fresh_every, at least 64 or n). */
static uint64_t donor_elements(uint64_t n, uint32_t fresh_every)
{
	uint64_t m = fresh_every > 1 ? n / fresh_every : n;
	return m < 64 ? (n < 64 ? n : 64) : m;
}

/* leap_case_inputs, for the donor's share of each input when `part` (its fresh_every), else whole. */
static void draw_inputs(struct leap_case_data *d, uint32_t set, uint64_t seed, unsigned pattern, uint32_t part)
{
	size_t np = d->t->nparams;
	for (size_t i = 0; i < np; i++) {
		const struct leap_run_param *r = &d->rp[i];
		if (r->kind == LEAP_RUN_K_SCALAR || r->kind == LEAP_RUN_K_OUT)
			continue;
		size_t k = (size_t)set * np + i;
		uint64_t rng = seed ^ (0x9E3779B97F4A7C15ull * (d->index + 1)) ^ (0xC2B2AE3D27D4EB4Full * (set + 1)) ^
			       (0x165667B19E3779F9ull * (i + 1));
		leap_rng_next(&rng);
		uint64_t n = (uint64_t)d->sizes[i];
		fill(&d->t->params[i], d->inputs[k], (size_t)(part ? donor_elements(n, part) : n), &rng, pattern);
	}
}

void leap_case_inputs(struct leap_case_data *d, uint32_t set, uint64_t seed, unsigned pattern, unsigned char *arena)
{
	draw_inputs(d, set, seed, pattern, 0);
	if (arena)
		leap_case_upload(d, set, set % d->arena_sets, arena);
}

/* One set of leap_case_inputs_sets on a thread of its own. */
struct draw_job {
	struct leap_case_data *d;
	uint32_t set;
	uint64_t seed;
	pthread_t th;
	int started;
};

static void *draw_job(void *arg)
{
	struct draw_job *j = arg;
	draw_inputs(j->d, j->set, j->seed, j->set, 0);
	return NULL;
}

void leap_case_inputs_sets(struct leap_case_data *d, uint32_t nsets, uint64_t seed)
{
	struct draw_job *jobs = xcalloc(nsets ? nsets : 1, sizeof *jobs);
	for (uint32_t k = 0; k < nsets; k++) {
		jobs[k] = (struct draw_job){.d = d, .set = k, .seed = seed};
		/* the first set on this thread; a set whose thread cannot start, after the others */
		jobs[k].started = k > 0 && pthread_create(&jobs[k].th, NULL, draw_job, &jobs[k]) == 0;
	}
	for (uint32_t k = 0; k < nsets; k++)
		if (!jobs[k].started)
			draw_job(&jobs[k]);
	for (uint32_t k = 0; k < nsets; k++)
		if (jobs[k].started)
			pthread_join(jobs[k].th, NULL);
	free(jobs);
}

void leap_case_donor(struct leap_case_data *d, uint32_t set, uint64_t seed, unsigned pattern, uint32_t fresh_every)
{
	draw_inputs(d, set, seed, pattern, fresh_every);
}

/* Copies one element of es bytes: the sizes of leap's types as fixed-size copies the compiler
 * inlines (a call to memcpy per element was half of a derived set's cost). */
static inline void copy_element(unsigned char *to, const unsigned char *from, uint64_t es)
{
	switch (es) {
	case 1: *to = *from; break;
	case 2: memcpy(to, from, 2); break;
	case 4: memcpy(to, from, 4); break;
	case 8: memcpy(to, from, 8); break;
	default: memcpy(to, from, (size_t)es); break;
	}
}

/* Bytes of a streamed input made at a time (in the first-level cache), then written past the
 * caches: a multiple of every element size it is used for. */
#define DERIVE_CHUNK 8192

/* Elements of an input made from one stream of their own: the pieces threads share (a
 * multiple of DERIVE_CHUNK / es for every element size). */
#define DERIVE_PIECE ((uint64_t)1 << 16)

/* Staging or checking fewer bytes than this takes one thread: below it a thread costs more
 * than it saves. */
#define PAR_BYTES ((uint64_t)1 << 20)

/* The secret stream of piece `piece` of input p of a derived set; piece UINT64_MAX is the
 * input's own (its rotation). Pieces are independent, so any thread can make any of them. */
static uint64_t piece_stream(uint64_t seed, size_t p, uint64_t piece)
{
	return leap_mix64(seed ^ leap_mix64(0x9E3779B97F4A7C15ull * (p + 1) + 0xC2B2AE3D27D4EB4Full * (piece + 1)));
}

/* What a derived input is made from: `from` (n elements of es bytes, of type `type`, drawn with
 * pattern `dist` or, for integers, in [lo, hi]) rotated by rot, every element then mixed with
 * its donor's (m elements: `fresh`) at a second rotation rotd with weights c and s (mix()), and
 * one element in about n / m replaced by a donor's at secret places. */
struct derivation {
	const unsigned char *from, *fresh;
	uint64_t n, es, m, rot, rotd;
	enum leap_type type;
	unsigned dist;
	int64_t lo, hi;
	double c, s;
};

static struct derivation derivation_of(const struct leap_case_data *d, size_t p, uint32_t src, uint32_t donor,
				       uint64_t seed, uint32_t fresh_every)
{
	size_t np = d->t->nparams;
	const struct leap_param *par = &d->t->params[p];
	uint64_t n = (uint64_t)d->sizes[p], rng = piece_stream(seed, p, UINT64_MAX);
	struct derivation v = {.from = d->inputs[(size_t)src * np + p],
			       .fresh = d->inputs[(size_t)donor * np + p],
			       .n = n,
			       .es = d->rp[p].elsize,
			       .m = donor_elements(n, fresh_every),
			       .type = par->type,
			       .dist = pick_dist(par->dists, src), /* base set k is drawn with pattern k */
			       .lo = par->lo,
			       .hi = par->hi};
	v.rot = n ? leap_rng_next(&rng) % n : 0;
	v.rotd = v.m ? leap_rng_next(&rng) % v.m : 0;
	double theta = 0.3926990817 + 0.7853981634 * leap_rng_unit(&rng); /* pi/8 to 3pi/8 */
	v.c = cos(theta);
	v.s = sin(theta);
	return v;
}

/* Element a (from the base set) mixed with element b (from its donor, drawn alike) so that the
 * result is distributed as both are, and is neither: a Gaussian pattern's a*c + b*s (c^2 + s^2 =
 * 1), a uniform one's a + b wrapped into its interval, an integer range's sum modulo the range;
 * a sparse pattern keeps its zeros. A derived set thus shares no element with its base set or
 * with another set derived from it (a kernel that finds a set's rotation against one it
 * remembers finds no output to reuse: bench/README.md section 6), and no input's distribution
 * changes. */
static double mix(const struct derivation *v, double a, double b)
{
	if (!leap_type_is_float(v->type)) {
		double span = (double)v->hi - (double)v->lo + 1;
		double t = (a - (double)v->lo) + (b - (double)v->lo);
		return (double)v->lo + (span > 0 ? t - span * floor(t / span) : 0);
	}
	switch (v->dist) {
	case LEAP_DIST_UNIFORM: {
		double t = a + b + 1; /* U(-1, 1) */
		return t - 2 * floor(t / 2) - 1;
	}
	case LEAP_DIST_POSITIVE: {
		double t = (a - 0.1) + (b - 0.1); /* U(0.1, 10) */
		return 0.1 + (t - 9.9 * floor(t / 9.9));
	}
	case LEAP_DIST_NEAR_ONE:
		return 1 + (a - 1) * v->c + (b - 1) * v->s;
	case LEAP_DIST_SPARSE:
		return a == 0 ? 0 : a * v->c + b * v->s;
	case LEAP_DIST_TIES: {
		double t = (a + 4) + (b + 4); /* the integers of [-4, 4], as an integer range mixes */
		return t - 9 * floor(t / 9) - 4;
	}
	case LEAP_DIST_LARGE_INT:
		return rint(a * v->c + b * v->s); /* still integers of the same spread */
	default: /* normal, small, large, logits: N(0, sigma^2) */
		return a * v->c + b * v->s;
	}
}

/* Four floats at a time (the compiler's vector extension: SSE on x86-64, NEON on arm64, plain
 * code elsewhere): the mix would otherwise cost more than the copy it follows. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

/* mix() of n floats o[k] with f[k] in single precision, for the float inputs (most of them):
 * one loop per pattern, without branches, so that it runs at about the speed of the copy. */
static void mix_floats(float *restrict o, const float *restrict f, uint64_t n, unsigned dist, float c, float s)
{
	uint64_t k = 0;
	if (dist & (LEAP_DIST_UNIFORM | LEAP_DIST_NORMAL | LEAP_DIST_SMALL | LEAP_DIST_LARGE | LEAP_DIST_LOGITS))
		for (; k + 4 <= n; k += 4) {
			v4f a, b;
			memcpy(&a, o + k, 16);
			memcpy(&b, f + k, 16);
			if (dist == LEAP_DIST_UNIFORM) { /* as below, four at a time */
				v4f t = a + b + 1;
				v4i q = __builtin_convertvector(t * 0.5f + 1.0f, v4i) - 1;
				a = t - 2.0f * __builtin_convertvector(q, v4f) - 1;
			} else {
				a = a * c + b * s;
			}
			memcpy(o + k, &a, 16);
		}
	switch (dist) {
	case LEAP_DIST_UNIFORM:
		for (; k < n; k++) {
			float t = o[k] + f[k] + 1; /* in [-1, 3): wrapped into [0, 2) by floor(t / 2), */
			o[k] = t - 2.0f * (float)((int)(t * 0.5f + 1.0f) - 1) - 1; /* a truncation */
		}
		break;
	case LEAP_DIST_POSITIVE:
		for (; k < n; k++) {
			float t = (o[k] - 0.1f) + (f[k] - 0.1f); /* in [0, 19.8): wrapped into [0, 9.9) */
			o[k] = 0.1f + t - 9.9f * (float)(int)(t * (1 / 9.9f));
		}
		break;
	case LEAP_DIST_NEAR_ONE:
		for (; k < n; k++)
			o[k] = 1 + (o[k] - 1) * c + (f[k] - 1) * s;
		break;
	case LEAP_DIST_SPARSE:
		for (; k < n; k++)
			o[k] = (o[k] * c + f[k] * s) * (float)(o[k] != 0); /* its zeros kept */
		break;
	case LEAP_DIST_TIES:
		for (; k < n; k++) {
			float t = (o[k] + 4) + (f[k] + 4); /* an integer of [0, 16]: wrapped into [0, 9) */
			o[k] = t - 9.0f * (float)(int)(t * (1 / 9.0f) + 0x1p-8f) - 4;
		}
		break;
	case LEAP_DIST_LARGE_INT:
		for (; k < n; k++)
			o[k] = rintf(o[k] * c + f[k] * s);
		break;
	default:
		for (; k < n; k++)
			o[k] = o[k] * c + f[k] * s;
		break;
	}
}

/* mix() of n integers o[k] with f[k] of the range [lo, lo + span), int32 or uint8: their sum
 * wrapped into the range, as mix() does. Every element of a set is in its range (drawn there,
 * and a mix stays there), so one subtraction wraps it, and the loops vectorise. A histogram's
 * 16M bytes took 80 ms a set through mix() (a double and a division per element), more than
 * the calls they were made for. */
static void mix_u8(unsigned char *restrict o, const unsigned char *restrict f, uint64_t n, int lo, int span)
{
	for (uint64_t k = 0; k < n; k++) {
		int t = (o[k] - lo) + (f[k] - lo);
		t -= t >= span ? span : 0;
		o[k] = (unsigned char)(lo + t);
	}
}

static void mix_i32(int32_t *restrict o, const int32_t *restrict f, uint64_t n, int64_t lo, int64_t span)
{
	for (uint64_t k = 0; k < n; k++) {
		int64_t t = ((int64_t)o[k] - lo) + ((int64_t)f[k] - lo);
		t -= t >= span ? span : 0;
		o[k] = (int32_t)(lo + t);
	}
}

/* mix() of the n elements at o with the donor's n at f: floats in single precision, int32 and
 * uint8 in integers, any other type through mix(). */
static void mix_run(unsigned char *o, const unsigned char *f, uint64_t n, const struct derivation *v)
{
	switch (v->type) {
	case LEAP_T_FLOAT: /* buffers of floats (mappings, or the chunk buffer) */
		mix_floats((float *)(void *)o, (const float *)(const void *)f, n, v->dist, (float)v->c, (float)v->s);
		break;
	case LEAP_T_UINT8:
		mix_u8(o, f, n, (int)v->lo, (int)(v->hi - v->lo + 1));
		break;
	case LEAP_T_INT:
		mix_i32((int32_t *)(void *)o, (const int32_t *)(const void *)f, n, v->lo, v->hi - v->lo + 1);
		break;
	default:
		for (uint64_t k = 0; k < n; k++)
			put(v->type, o, (size_t)k, mix(v, get(v->type, o, (size_t)k), get(v->type, f, (size_t)k)));
		break;
	}
}

/* Elements [a, b) of a derived input, already rotated into `out` (element a first), mixed with
 * their donor's elements, a run of the donor at a time. */
static void mix_chunk(unsigned char *out, const struct derivation *v, uint64_t a, uint64_t b)
{
	uint64_t j = (a + v->rotd) % v->m;
	for (uint64_t x = 0; x < b - a;) {
		uint64_t run = v->m - j < b - a - x ? v->m - j : b - a - x;
		mix_run(out + v->es * x, v->fresh + v->es * j, run, v);
		x += run;
		j = j + run == v->m ? 0 : j + run;
	}
}

/* Elements [c0, c1) of a derived input (struct derivation) into `to` (the whole input), drawn
 * from the piece's stream `rng`: to[x] = mix(from[(x + rot) % n], fresh[(x + rotd) % m]), then
 * the fresh places, a walk with secret gaps of mean n / m that starts in the piece's first gap
 * and stops at its end; each takes the donor's element the stream picks. The walk goes in order, so that its writes stream through
 * the cache instead of missing it at random. With `buf` (DERIVE_CHUNK bytes) the elements are
 * made a chunk at a time in buf and streamed out (stream.h), so that no line of `to` is left in
 * a cache; the bytes are the same either way. */
static void derive_piece(unsigned char *to, const struct derivation *v, uint64_t c0, uint64_t c1, uint64_t rng,
			 unsigned char *buf)
{
	uint64_t n = v->n, es = v->es, m = v->m, rot = v->rot, cut = n - rot;
	if (buf && DERIVE_CHUNK % es)
		buf = NULL;
	uint64_t g = n / m, big = (m | g) >> 31;
	uint64_t i = c0 + leap_rng_scale(leap_rng_next(&rng), g), per = buf ? DERIVE_CHUNK / es : c1 - c0;
	for (uint64_t a = c0; a < c1; a += per) {
		uint64_t b = c1 - a < per ? c1 : a + per;
		unsigned char *out = buf ? buf : to + a * es;
		if (a < cut) /* to[x] = from[x + rot] below the cut, from[x - cut] above */
			memcpy(out, v->from + (a + rot) * es, (size_t)(((b < cut ? b : cut) - a) * es));
		if (b > cut) {
			uint64_t x = a > cut ? a : cut;
			memcpy(out + (x - a) * es, v->from + (x - cut) * es, (size_t)((b - x) * es));
		}
		mix_chunk(out, v, a, b);
		while (i < b) {
			/* one draw for two numbers where both fit 32 bits (every input under 2^36
			 * elements): its low half picks the donor's element, its high half the gap */
			uint64_t x = leap_rng_next(&rng);
			uint64_t j = big ? leap_rng_scale(x, m) : (x & 0xffffffffu) * m >> 32;
			copy_element(out + (i - a) * es, v->fresh + j * es, es);
			i += 1 + (big ? leap_rng_scale(leap_rng_next(&rng), 2 * g - 1) : (x >> 32) * (2 * g - 1) >> 32);
		}
		if (buf)
			leap_stream_copy(to + a * es, buf, (size_t)((b - a) * es));
	}
}

/* Pieces of an input of n elements. */
static uint64_t pieces(uint64_t n)
{
	return (n + DERIVE_PIECE - 1) / DERIVE_PIECE;
}

/* Piece k of a derived input into `to`. */
static void derive_input_piece(unsigned char *to, const struct derivation *v, size_t p, uint64_t seed, uint64_t k,
			       unsigned char *buf)
{
	uint64_t c0 = k * DERIVE_PIECE, c1 = v->n - c0 < DERIVE_PIECE ? v->n : c0 + DERIVE_PIECE;
	derive_piece(to, v, c0, c1, piece_stream(seed, p, k), buf);
}

/* 1 for the parameters a derived set makes (inputs, and inout parameters' inputs). */
static int derived(const struct leap_case_data *d, size_t p)
{
	uint32_t kind = d->rp[p].kind;
	return kind != LEAP_RUN_K_SCALAR && kind != LEAP_RUN_K_OUT && d->sizes[p] > 0;
}

void leap_case_derive(struct leap_case_data *d, uint32_t dst, uint32_t src, uint32_t donor, uint64_t seed,
		      uint32_t fresh_every)
{
	size_t np = d->t->nparams;
	for (size_t p = 0; p < np; p++) {
		if (!derived(d, p))
			continue;
		struct derivation v = derivation_of(d, p, src, donor, seed, fresh_every);
		for (uint64_t k = 0; k < pieces(v.n); k++)
			derive_input_piece(d->inputs[(size_t)dst * np + p], &v, p, seed, k, NULL);
	}
}

/* ---- a block's sets staged on threads (leap_case_stage) ---- */

/* The inputs of one set, made in pieces by threads: piece `piece` of parameter `p` at jobs[i]. */
struct stage_job {
	uint32_t p;
	uint64_t piece;
};

struct stage_work {
	unsigned char *arena;
	const uint64_t *in;          /* the set's slot's IN offsets, by parameter */
	const struct derivation *v;  /* by parameter */
	uint64_t seed;
	struct stage_job *jobs;
	size_t njobs;
	atomic_size_t next;
};

static void *stage_worker(void *arg)
{
	struct stage_work *w = arg;
	_Alignas(64) unsigned char buf[DERIVE_CHUNK];
	for (size_t i; (i = leap_par_next(&w->next, w->njobs)) < w->njobs;) {
		const struct stage_job *j = &w->jobs[i];
		derive_input_piece(w->arena + w->in[j->p], &w->v[j->p], j->p, w->seed, j->piece, buf);
	}
	leap_stream_fence(); /* this thread's streamed stores, before the join publishes them */
	return NULL;
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

void leap_case_stage(const struct leap_case_data *d, unsigned char *arena, const struct leap_case_recipe *r,
		     uint32_t n, uint32_t fresh_every, unsigned threads)
{
	size_t np = d->t->nparams, cap = 1;
	for (size_t p = 0; p < np; p++)
		cap += derived(d, p) ? pieces((uint64_t)d->sizes[p]) : 0;
	struct derivation *v = xcalloc(np + 1, sizeof *v);
	struct stage_job *jobs = xcalloc(cap, sizeof *jobs);
	for (uint32_t s = 0; s < n; s++) {
		const uint64_t *in = d->in + (size_t)r[s].slot * np;
		struct stage_work w = {.arena = arena, .in = in, .v = v, .seed = r[s].seed, .jobs = jobs};
		uint64_t bytes = 0;
		for (size_t p = 0; p < np; p++) {
			if (!derived(d, p))
				continue;
			v[p] = derivation_of(d, p, r[s].src, r[s].donor, r[s].seed, fresh_every);
			bytes += d->rp[p].bytes;
			for (uint64_t k = 0; k < pieces(v[p].n); k++)
				jobs[w.njobs++] = (struct stage_job){.p = (uint32_t)p, .piece = k};
		}
		atomic_init(&w.next, 0);
		leap_par_run(bytes < PAR_BYTES ? 1 : threads, stage_worker, &w);
		/* the outputs on this thread, after the set's inputs, as when one thread made each
		 * set: poisoned on two threads their lines were cached otherwise, and the self-test's
		 * interval covered 1 in 89% of 160 runs against 96% of 160 between them
		 * (bench/README.md section 6) */
		leap_case_poison(d, arena, r[s].slot);
	}
	free(jobs);
	free(v);
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

/* JSON for a value that may not be finite ("nan", "inf", "-inf" as strings). */
static json_t *num_json(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

/* Row/column of index i when the buffer's size expression is NAME*NAME (2-D). */
static int coords(const struct leap_case_data *d, size_t p, size_t i, int64_t *row, int64_t *col)
{
	const char *src = leap_expr_source(d->t->params[p].size);
	const char *star = strchr(src, '*');
	if (!star || strchr(star + 1, '*'))
		return -1;
	const char *name = star + 1;
	while (*name == ' ')
		name++;
	size_t len = strcspn(name, " ");
	if (!len || name[len] != 0)
		return -1;
	for (size_t j = 0; j < d->t->nparams; j++) {
		const struct leap_param *q = &d->t->params[j];
		if (q->role == LEAP_ROLE_SCALAR && strlen(q->name) == len && !memcmp(q->name, name, len) &&
		    !leap_type_is_float(q->type) && d->c->vals[j].i > 0) {
			*row = (int64_t)i / d->c->vals[j].i;
			*col = (int64_t)i % d->c->vals[j].i;
			return 0;
		}
	}
	return -1;
}

/* "c[17]" or "y[3][5]" into b. */
static void where(struct leap_buf *b, const struct leap_case_data *d, size_t p, size_t i, json_t *m)
{
	int64_t r, c;
	if (coords(d, p, i, &r, &c) == 0) {
		leap_buf_addf(b, "%s[%lld][%lld]", d->t->params[p].name, (long long)r, (long long)c);
		if (m)
			json_object_set_new(m, "coords", json_pack("[I,I]", (json_int_t)r, (json_int_t)c));
	} else {
		leap_buf_addf(b, "%s[%zu]", d->t->params[p].name, i);
	}
}

/* When the inputs of the case are few (every input buffer at most 16 elements, 32 in all),
 * appends all of them to the message (" Inputs: x = [0.5, -1.25]."), exactly as the
 * candidate received them, and adds them to the mismatch object as "inputs": {name: [...]},
 * so that the model can run the failing case by hand. Nothing for a larger case. */
int leap_case_quotes_inputs(const struct leap_case_data *d)
{
	size_t np = d->t->nparams, total = 0;
	for (size_t p = 0; p < np; p++) {
		enum leap_run_kind k = d->rp[p].kind;
		if (k != LEAP_RUN_K_IN && k != LEAP_RUN_K_INOUT)
			continue;
		if (d->sizes[p] > 16)
			return 0;
		total += (size_t)d->sizes[p];
	}
	return total > 0 && total <= 32;
}

static void add_inputs(struct leap_buf *b, const struct leap_case_data *d, uint32_t set, json_t *m)
{
	const struct leap_task *t = d->t;
	size_t np = t->nparams;
	if (!leap_case_quotes_inputs(d))
		return;
	json_t *in = json_object();
	leap_buf_adds(b, " Inputs:");
	int first = 1;
	for (size_t p = 0; p < np; p++) {
		enum leap_run_kind k = d->rp[p].kind;
		if (k != LEAP_RUN_K_IN && k != LEAP_RUN_K_INOUT)
			continue;
		const struct leap_param *par = &t->params[p];
		const unsigned char *v = d->inputs[(size_t)set * np + p];
		json_t *a = json_array();
		leap_buf_addf(b, "%s %s = [", first ? "" : ",", par->name);
		first = 0;
		for (int64_t i = 0; i < d->sizes[p]; i++) {
			double x = get(par->type, v, (size_t)i);
			leap_buf_addf(b, leap_type_is_float(par->type) ? "%s%.9g" : "%s%.0f", i ? ", " : "", x);
			json_array_append_new(a, num_json(x));
		}
		leap_buf_adds(b, "]");
		json_object_set_new(in, par->name, a);
	}
	leap_buf_adds(b, ".");
	json_object_set_new(m, "inputs", in);
}

/* The common case made fast: 1 when every float of got is written, finite and within
 * tolerance of want (updating *es), 0 when the careful loop must look. */
static int float_ok(const unsigned char *got, const unsigned char *want, size_t n, const uint8_t *poison, double atol,
		    double rtol, struct leap_errstats *es)
{
	uint32_t pz;
	memcpy(&pz, poison, 4);
	double max_abs = es->max_abs, max_rel = es->max_rel;
	for (size_t i = 0; i < n; i++) {
		uint32_t gb;
		float g, w;
		memcpy(&gb, got + 4 * i, 4);
		memcpy(&g, got + 4 * i, 4);
		memcpy(&w, want + 4 * i, 4);
		double diff = fabs((double)g - (double)w), aw = fabs((double)w);
		if (gb == pz || !isfinite(g) || !isfinite(w) || !(diff <= atol + rtol * aw))
			return 0;
		if (diff > max_abs)
			max_abs = diff;
		/* diff / aw > max_rel without a division per element (aw >= 0, max_rel >= 0): the
		 * division's latency was most of this loop */
		if (diff > max_rel * aw && aw > 0)
			max_rel = diff / aw;
	}
	es->max_abs = max_abs;
	es->max_rel = max_rel;
	return 1;
}

/* float_ok over pieces of an output shared by threads: each piece's outcome kept apart and
 * combined, so the verdict is float_ok's over the whole (the error statistics too, but for
 * the last bit of max_rel, which float_ok's running maximum rounds). */
struct float_work {
	const unsigned char *got, *want;
	size_t n, npieces;
	const uint8_t *poison;
	double atol, rtol;
	struct leap_errstats *es; /* [npieces] */
	int *ok;                  /* [npieces] */
	atomic_size_t next;
};

static void *float_worker(void *arg)
{
	struct float_work *w = arg;
	for (size_t k; (k = leap_par_next(&w->next, w->npieces)) < w->npieces;) {
		size_t c0 = k * DERIVE_PIECE, m = w->n - c0 < DERIVE_PIECE ? w->n - c0 : DERIVE_PIECE;
		w->ok[k] = float_ok(w->got + 4 * c0, w->want + 4 * c0, m, w->poison, w->atol, w->rtol, &w->es[k]);
	}
	return NULL;
}

static int float_ok_par(const unsigned char *got, const unsigned char *want, size_t n, const uint8_t *poison,
			double atol, double rtol, struct leap_errstats *es, unsigned threads)
{
	if (threads < 2 || 4 * (uint64_t)n < PAR_BYTES)
		return float_ok(got, want, n, poison, atol, rtol, es);
	struct float_work w = {.got = got, .want = want, .n = n, .npieces = pieces(n), .poison = poison,
			       .atol = atol, .rtol = rtol};
	w.es = xcalloc(w.npieces, sizeof *w.es);
	w.ok = xcalloc(w.npieces, sizeof *w.ok);
	atomic_init(&w.next, 0);
	leap_par_run(threads, float_worker, &w);
	int ok = 1;
	for (size_t k = 0; k < w.npieces; k++) {
		ok &= w.ok[k];
		es->max_abs = w.es[k].max_abs > es->max_abs ? w.es[k].max_abs : es->max_abs;
		es->max_rel = w.es[k].max_rel > es->max_rel ? w.es[k].max_rel : es->max_rel;
	}
	free(w.es);
	free(w.ok);
	return ok;
}

json_t *leap_case_check(const struct leap_case_data *d, uint32_t set, uint32_t slot, const unsigned char *arena,
			int check_inputs, struct leap_errstats *es, char **msg)
{
	return leap_case_check_against(d, set, slot, arena, NULL, 0, check_inputs, es, msg);
}

json_t *leap_case_check_against(const struct leap_case_data *d, uint32_t set, uint32_t slot,
				const unsigned char *arena, const unsigned char *wa, uint32_t wslot, int check_inputs,
				struct leap_errstats *es, char **msg)
{
	const struct leap_task *t = d->t;
	size_t np = t->nparams;
	double scale = d->tol_scale > 0 ? d->tol_scale : 1, atol, rtol;
	leap_task_tolerance(t, d->tol, &atol, &rtol);
	atol *= scale;
	rtol *= scale;
	for (size_t p = 0; p < np; p++) {
		const struct leap_run_param *r = &d->rp[p];
		const struct leap_param *par = &t->params[p];
		size_t k = (size_t)set * np + p, ka = (size_t)slot * np + p, n = (size_t)d->sizes[p];
		if (r->kind == LEAP_RUN_K_SCALAR)
			continue;
		if (r->kind == LEAP_RUN_K_IN) {
			if (!check_inputs)
				continue;
			const unsigned char *after = arena + d->after[ka], *orig = d->inputs[k];
			if (!memcmp(after, orig, r->bytes))
				continue;
			size_t first = n, count = 0;
			for (size_t i = 0; i < n; i++)
				if (memcmp(after + i * r->elsize, orig + i * r->elsize, r->elsize)) {
					if (first == n)
						first = i;
					count++;
				}
			json_t *m = json_pack("{s:I,s:o,s:I,s:s,s:s,s:I,s:o,s:o,s:I}", "case", (json_int_t)d->index, "values",
					      leap_case_json(t, d->c), "trial", (json_int_t)set, "kind", "input_modified",
					      "output", par->name, "index", (json_int_t)first, "got",
					      num_json(get(par->type, after, first)), "want", num_json(get(par->type, orig, first)),
					      "count", (json_int_t)count);
			if (d->drawn)
				json_object_set_new(m, "drawn", json_true());
			struct leap_buf b = {0};
			leap_buf_addf(&b, "The input %s was modified (case %zu, %s): ", par->name, d->index + 1, d->desc);
			where(&b, d, p, first, m);
			leap_buf_addf(&b, " changed from %.9g to %.9g; %zu of %zu elements changed. Inputs must be left unchanged.",
				      get(par->type, orig, first), get(par->type, after, first), count, n);
			*msg = leap_buf_detach(&b);
			return m;
		}
		const unsigned char *got = arena + d->out[ka];
		const unsigned char *want = wa ? wa + d->out[(size_t)wslot * np + p] : d->want[k];
		if (par->type == LEAP_T_FLOAT && float_ok_par(got, want, n, r->poison, atol, rtol, es, d->threads))
			continue;
		int is_float = leap_type_is_float(par->type);
		size_t first = n, unwritten = 0, bad = 0;
		const char *kind = NULL;
		double gv = 0, wv = 0, tol = 0;
		for (size_t i = 0; i < n; i++) {
			const unsigned char *g = got + i * r->elsize;
			double x = get(par->type, got, i), w = get(par->type, want, i);
			int poisoned = !memcmp(g, r->poison, r->elsize) && (is_float || x != w);
			const char *why = NULL;
			if (poisoned) {
				unwritten++;
				why = "unwritten";
			} else if (is_float && !isfinite(x)) {
				why = "not_finite";
			} else if (is_float) {
				double diff = fabs(x - w), allowed = atol + rtol * fabs(w);
				if (isfinite(w)) {
					if (diff > es->max_abs)
						es->max_abs = diff;
					if (w != 0 && diff / fabs(w) > es->max_rel)
						es->max_rel = diff / fabs(w);
				}
				if (!(diff <= allowed) && !(x == w))
					why = "value";
			} else if (x != w) {
				why = "value";
			}
			if (!why)
				continue;
			bad++;
			if (first == n) {
				first = i;
				kind = why;
				gv = x;
				wv = w;
				tol = atol + rtol * fabs(w);
			}
		}
		if (first == n)
			continue;
		json_t *m = json_pack("{s:I,s:o,s:I,s:s,s:s,s:I,s:o,s:o,s:I}", "case", (json_int_t)d->index, "values",
				      leap_case_json(t, d->c), "trial", (json_int_t)set, "kind", kind, "output", par->name,
				      "index", (json_int_t)first, "got",
				      strcmp(kind, "unwritten") ? num_json(gv) : json_string("unwritten"), "want", num_json(wv),
				      "count", (json_int_t)bad);
		if (d->drawn)
			json_object_set_new(m, "drawn", json_true());
		struct leap_buf b = {0};
		leap_buf_addf(&b, "Wrong output in case %zu (%s): ", d->index + 1, d->desc);
		if (!strcmp(kind, "unwritten")) {
			where(&b, d, p, first, m);
			leap_buf_addf(&b, " was never written (expected %.9g); %zu of %zu elements of %s were not written.", wv,
				      unwritten, n, par->name);
		} else if (!strcmp(kind, "not_finite")) {
			where(&b, d, p, first, m);
			leap_buf_addf(&b, " is %s but expected %.9g; %zu of %zu elements are wrong.",
				      isnan(gv) ? "NaN" : gv > 0 ? "+inf" : "-inf", wv, bad, n);
		} else {
			where(&b, d, p, first, m);
			if (is_float) {
				leap_buf_addf(&b, " = %.9g but expected %.9g (error %.3g, allowed %.3g); %zu of %zu elements are wrong.",
					      gv, wv, fabs(gv - wv), tol, bad, n);
				json_object_set_new(m, "tolerance", json_real(tol));
			} else {
				leap_buf_addf(&b, " = %.0f but expected %.0f; %zu of %zu elements are wrong.", gv, wv, bad, n);
			}
		}
		add_inputs(&b, d, set, m);
		*msg = leap_buf_detach(&b);
		return m;
	}
	return NULL;
}
