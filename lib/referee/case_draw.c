/* case_draw.c - the inputs of verification: drawn from the seed, donors, derived sets, staging. */
/*
 * Each input set is drawn from the run's seed mixed with the case, the set and the parameter,
 * so the same seed gives the same inputs and a verdict can be re-run; no buffer is all zeros,
 * and a floating-point one follows one of the patterns its parameter allows. leap-bench times
 * more sets than it can afford to draw: it derives fresh ones from a few drawn base sets and a
 * secret donor (leap_case_derive; case.h says why a derived set is no permutation of one seen
 * before), and stages a block's sets straight into the arena on threads with streaming stores
 * past the caches (leap_case_stage), while nothing is timed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "core/rng.h"
#include "stream.h"
#include "core/util.h"
#include "case.h"
#include "case_int.h"
#include "core/banned.h"

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
		if (p->role != LEAP_ROLE_SCALAR && p->role != LEAP_ROLE_OUT && leap_type_is_float(p->type) && !p->init)
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

/* Fills n elements of a module parameter's buffer (p->init) from *rng: each run uniform in its
 * center +- spread / sqrt(fan) at case c's sizes. Drawing a network's weights from the input
 * patterns ("large": N(0, 1e6) for every layer at once) makes a layer's float output cancel in
 * the next, past any tolerance an honest float kernel meets; at the initialisation's own scale,
 * which shrinks as the layer widens, it does not, and each set's values are still fresh. A
 * causal mask's run (tril) and a run of values are no draw: the same in every set, as the
 * module makes them (leap_task_sizes has checked that the values fill their run). */
static void fill_init(const struct leap_task *t, const struct leap_case *c, const struct leap_param *p,
		      unsigned char *b, size_t n, uint64_t *rng)
{
	size_t at = 0;
	for (size_t k = 0; k < p->ninit && at < n; k++) {
		const struct leap_init *r = &p->init[k];
		int64_t len = (int64_t)(n - at), fan = 1;
		if (r->size && (leap_task_eval(t, r->size, c, &len) || len < 0))
			len = 0;
		if (r->fan && (leap_task_eval(t, r->fan, c, &fan) || fan < 1))
			fan = 1;
		size_t end = (uint64_t)len < n - at ? at + (size_t)len : n;
		if (r->values) {
			for (size_t i = 0; at < end; at++, i++)
				put(p->type, b, at, i < r->nvalues ? r->values[i] : 0.0);
			continue;
		}
		if (r->tril) {
			int64_t side = 1;
			if (leap_task_eval(t, r->tril, c, &side) || side < 1)
				side = 1;
			for (size_t i = 0, s = (size_t)side; at < end; at++, i++)
				put(p->type, b, at, i % s <= i / s % s ? 1.0 : 0.0);
			continue;
		}
		double w = r->spread / sqrt((double)fan);
		for (; at < end; at++)
			put(p->type, b, at, r->center + w * (2.0 * leap_rng_unit(rng) - 1.0));
	}
}

/* Whether a module parameter has a run of its own structure (a causal mask, values): derived
 * sets leave it in place. */
static int has_fixed(const struct leap_param *p)
{
	for (size_t k = 0; k < p->ninit; k++)
		if (p->init[k].tril || p->init[k].values)
			return 1;
	return 0;
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
		const struct leap_param *p = &d->t->params[i];
		if (p->init) /* a donor's state of several runs, or a fixed one, is drawn whole: derive_piece */
			fill_init(d->t, d->c, p, d->inputs[k],
				  (size_t)(part && p->ninit == 1 && !has_fixed(p) ? donor_elements(n, part) : n), &rng);
		else
			fill(p, d->inputs[k], (size_t)(part ? donor_elements(n, part) : n), &rng, pattern);
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
	int init;  /* a module parameter: given fresh places, never mixed */
	int runs;  /* a module parameter of several runs or a fixed one: never rotated either, and
		    * each fresh place takes the donor's element at the same place (same run, same
		    * scale; a fixed place its own value) */
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
			       .hi = par->hi,
			       .init = par->init != NULL};
	v.rot = n ? leap_rng_next(&rng) % n : 0;
	v.rotd = v.m ? leap_rng_next(&rng) % v.m : 0;
	if (par->init && (par->ninit > 1 || has_fixed(par))) {
		v.runs = 1;
		v.rot = 0;
	}
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
	/* a parameter's runs each have a scale of their own (a packed state's convolution weights,
	 * then a BatchNorm's variances), and after the rotation an element sits in another run: a
	 * mix in either's terms fits neither. With fresh places (and, a single run, rotated) it is
	 * still a new set, and the inputs beside it are mixed. A state of several runs is not
	 * rotated and takes its fresh places from the donor's same places (struct derivation):
	 * rotated, a packed network's layers would trade scales, and every timed call is checked
	 * against the baseline's outputs at a tolerance measured at the runs' own scales */
	if (v->init)
		return;
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
			copy_element(out + (i - a) * es, v->fresh + (v->runs ? i : j) * es, es);
			i += 1 + (big ? leap_rng_scale(leap_rng_next(&rng), 2 * g - 1) : (x >> 32) * (2 * g - 1) >> 32);
		}
		if (buf)
			leap_stream_copy(to + a * es, buf, (size_t)((b - a) * es));
	}
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
