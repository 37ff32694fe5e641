/* ranges.c - drawn cases: the sizes a task may take besides the listed ones, and drawing them.
 *
 * A kernel can be right at exactly the sizes a prompt lists and wrong elsewhere: an unrolled
 * loop whose remainder is right only when n % 8 <= 1, or a table of the listed sizes. So
 * leap-verify adds cases whose sizes it draws from the run's seed. A task declares per integer
 * scalar the range it may take ("ranges"), or leap derives [min, max] over its listed cases,
 * which keeps every property the author gave those cases (labels < classes, len >= k).
 *
 * Why each rule:
 *  - Bounds are expressions over other scalars (len from k to 200) and a range may ask for a
 *    multiple (dim of heads): constraints a task needs that buffer sizes do not show. Ranges
 *    are drawn in dependency order, and a cycle is an error.
 *  - A drawn case costs no more than the dearest listed case (buffer bytes and flops): the
 *    cost of verification stays what the task's author chose. A draw over budget, or whose
 *    buffers are invalid (len < k), is drawn again with shrinking upper bounds; the smallest
 *    case is checked at load to be valid and within budget, so drawing always ends.
 *  - Values are log-uniform: every octave is as likely, as thresholds in kernels (tiles,
 *    blocks, chunks) are powers of two, and the largest octave, which the listed cases
 *    already reach, does not dominate the cost (uniform draws cost twice as much). They
 *    avoid the values listed cases already use.
 *  - The k-th drawn case of a run takes, for each scalar, a value k more than the 0-th's
 *    modulo 32 (or the largest power of 2 the range has room for): K drawn cases are K
 *    distinct remainders modulo any power of 2 M >= K up to 32, so a kernel right at fewer
 *    than K of them fails whatever the seed (n % 8 <= 1 is 2 of 8: three cases catch it).
 *  - Case k depends only on (seed, task id, k): a verdict replays with --seed, and more cases
 *    keep the first ones.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * Drawn sizes:
 *
 * Sizes come from the seed too: besides the cases the task lists (which the prompt shows, so a
 * candidate can special-case them), `--drawn-cases` (3) cases of sizes drawn within the task's
 * ranges (`leap_task_draw_case()` in `lib/task/ranges.c`) are checked the same way; the k-th drawn
 * case moves every size one remainder on (modulo up to 32), so a kernel right at fewer than 3
 * remainders of an unrolled loop fails on every seed. Tests: leap-verify.bats "a kernel right
 * only at the listed sizes passes them and fails a drawn case, on every seed"
 * (vector_add_unroll8.c, right only when n % 8 <= 1; softmax_listed_only.c, exact only at the
 * listed sizes), tasks.bats "tasks: every task is fair, at its listed sizes and at sizes drawn
 * from its ranges: the fixture solution passes, zeros, constants and another seed's output
 * fail". Does not stop: a kernel wrong only outside the ranges (sizes larger than any listed
 * case: the ranges and the budget of a drawn case keep to the listed cases' cost), or right at
 * most remainders of a size (3 drawn cases catch a kernel wrong at 1 remainder of 8 with
 * probability 3/8 per run).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/rng.h"
#include "task.h"
#include "core/util.h"
#include "core/banned.h"

#define DRAW_TRIES 64   /* attempts before the smallest case */
#define FULL_TRIES 16   /* attempts over the whole range, before upper bounds shrink */
#define AVOID_TRIES 8   /* redraws of one value that a listed case already uses */
#define RESIDUE_MOD 32

/* A stream for (seed, task id, salt, n). */
static uint64_t stream(const struct leap_task *t, uint64_t seed, uint64_t salt, uint64_t n)
{
	/* FNV-1a of the id: each task its own sizes */
	uint64_t h = t->id ? leap_fnv1a(LEAP_FNV1A_BASIS, t->id, strlen(t->id)) : LEAP_FNV1A_BASIS;
	uint64_t s = seed ^ h ^ (salt * 0xC2B2AE3D27D4EB4Full) ^ ((n + 1) * 0x165667B19E3779F9ull);
	leap_rng_next(&s);
	return s;
}

static int eval(const struct leap_expr *e, const int64_t *vars, int64_t *out)
{
	char *err = NULL;
	int rc = leap_expr_eval(e, vars, out, &err);
	free(err);
	return rc;
}

static int64_t floor_div(int64_t a, int64_t b) /* b > 0 */
{
	int64_t q = a / b;
	return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b) /* b > 0 */
{
	int64_t q = a / b;
	return (a % b != 0 && a > 0) ? q + 1 : q;
}

/* The values range r allows given the scalars in vars: v = q * *m for q in [*qlo, *qhi].
 * Returns 0, or -1 when a bound fails to evaluate or nothing is allowed. */
static int allowed(const struct leap_task *t, const struct leap_range *r, const int64_t *vars, int64_t *qlo,
		   int64_t *qhi, int64_t *m)
{
	int64_t lo, hi;
	*m = 1;
	if (eval(r->lo, vars, &lo) || eval(r->hi, vars, &hi))
		return -1;
	if (r->multiple_of && (eval(r->multiple_of, vars, m) || *m < 1))
		return -1;
	if (t->params[r->param].type == LEAP_T_INT) {
		lo = lo < INT32_MIN ? INT32_MIN : lo;
		hi = hi > INT32_MAX ? INT32_MAX : hi;
	}
	*qlo = ceil_div(lo, *m);
	*qhi = floor_div(hi, *m);
	return *qlo <= *qhi ? 0 : -1;
}

/* The scalars of case c as the int64 array expressions read (floats left 0). */
static void load_vars(const struct leap_task *t, const struct leap_case *c, int64_t *vars)
{
	for (size_t i = 0; i < t->nparams; i++)
		vars[i] = t->params[i].role == LEAP_ROLE_SCALAR && !leap_type_is_float(t->params[i].type) ? c->vals[i].i : 0;
}

/* Buffer bytes of case c, or -1 when a size is invalid. */
static int64_t case_bytes(const struct leap_task *t, const struct leap_case *c)
{
	int64_t *sizes = xcalloc(t->nparams ? t->nparams : 1, sizeof *sizes);
	char *err = NULL;
	int64_t total = 0;
	if (leap_task_sizes(t, c, sizes, &err)) {
		total = -1;
	} else {
		for (size_t i = 0; i < t->nparams && total >= 0; i++)
			if (__builtin_add_overflow(total, sizes[i] * (int64_t)leap_type_size(t->params[i].type), &total))
				total = -1;
	}
	free(err);
	free(sizes);
	return total;
}

/* 1 when case c is valid and within the budget. */
static int fits(const struct leap_task *t, const struct leap_case *c)
{
	int64_t bytes = case_bytes(t, c), flops;
	if (bytes < 0 || bytes > t->draw_max_bytes)
		return 0;
	if (t->draw_max_flops >= 0 && (leap_task_eval(t, t->flops, c, &flops) || flops > t->draw_max_flops))
		return 0;
	return 1;
}

/* 1 when a listed case gives parameter p the value v. */
static int listed(const struct leap_task *t, size_t p, int64_t v)
{
	for (size_t i = 0; i < t->ncases; i++)
		if (t->cases[i].vals[p].i == v)
			return 1;
	return 0;
}

/* leap_task_smallest_case into out->vals, with vars[] holding its scalars as expressions read
 * them. */
static int smallest_vars(const struct leap_task *t, size_t base, struct leap_case *out, int64_t *vars)
{
	memcpy(out->vals, t->cases[base].vals, t->nparams * sizeof *out->vals);
	load_vars(t, out, vars);
	for (size_t i = 0; i < t->nranges; i++) {
		int64_t qlo, qhi, m;
		if (allowed(t, &t->ranges[i], vars, &qlo, &qhi, &m))
			return -1;
		vars[t->ranges[i].param] = out->vals[t->ranges[i].param].i = qlo * m;
	}
	return 0;
}

int leap_task_smallest_case(const struct leap_task *t, size_t base, struct leap_case *out)
{
	if (!t->nranges || base >= t->ncases)
		return -1;
	out->vals = xcalloc(t->nparams, sizeof *out->vals);
	int64_t *vars = xcalloc(t->nparams, sizeof *vars);
	int rc = smallest_vars(t, base, out, vars);
	free(vars);
	if (rc) {
		free(out->vals);
		out->vals = NULL;
	}
	return rc;
}

/* One value of range number ri in [qlo, qhi] * m: log-uniform over a span shrunk to the
 * power `f`, moved to the residue `target`, redrawn (a few times) while a listed case uses
 * it. */
static int64_t draw_value(const struct leap_task *t, size_t ri, int64_t qlo, int64_t qhi, int64_t m, double f,
			  int64_t target, uint64_t *rng)
{
	uint64_t span = (uint64_t)qhi - (uint64_t)qlo;
	int64_t v = qlo * m, mod = RESIDUE_MOD;
	while (mod > 1 && span < (uint64_t)mod - 1)
		mod >>= 1; /* a narrow range still steps through the residues of a smaller power of 2 */
	target %= mod;
	for (int a = 0; a < AVOID_TRIES; a++) {
		double d = exp(leap_rng_unit(rng) * f * log1p((double)span)) - 1;
		uint64_t x = d >= (double)span ? span : d > 0 ? (uint64_t)d : 0;
		int64_t q = (int64_t)((uint64_t)qlo + x), moved;
		/* the largest value <= q of the residue, else the next one up (arithmetic modulo
		 * 2^64 keeps residues modulo a power of 2) */
		int64_t r = (int64_t)(((uint64_t)q - (uint64_t)target) % (uint64_t)mod);
		if (!__builtin_sub_overflow(q, r, &moved)) {
			if (moved < qlo && __builtin_add_overflow(moved, mod, &moved))
				moved = q;
			if (moved >= qlo && moved <= qhi)
				q = moved;
		}
		v = q * m;
		if (!listed(t, t->ranges[ri].param, v))
			break;
	}
	return v;
}

int leap_task_draw_case(const struct leap_task *t, uint64_t seed, size_t k, struct leap_case *out)
{
	if (!t->nranges || !t->ncases)
		return -1;
	out->vals = xcalloc(t->nparams, sizeof *out->vals);
	int64_t *vars = xcalloc(t->nparams, sizeof *vars);
	uint64_t rng = stream(t, seed, 1, k);
	size_t base = (size_t)(leap_rng_next(&rng) % t->ncases);
	for (int a = 0; a < DRAW_TRIES; a++) {
		/* the span's exponent: whole for FULL_TRIES attempts, then halved every 8 */
		double f = a < FULL_TRIES ? 1.0 : ldexp(1.0, -1 - (a - FULL_TRIES) / 8);
		memcpy(out->vals, t->cases[base].vals, t->nparams * sizeof *out->vals);
		load_vars(t, out, vars);
		int ok = 1;
		for (size_t i = 0; i < t->nranges && ok; i++) {
			const struct leap_range *r = &t->ranges[i];
			int64_t qlo, qhi, m;
			if (allowed(t, r, vars, &qlo, &qhi, &m)) {
				ok = 0;
				continue;
			}
			uint64_t rs = stream(t, seed, 2, r->param); /* the residue of case 0, per scalar */
			int64_t target = (int64_t)((leap_rng_next(&rs) + k) % RESIDUE_MOD);
			vars[r->param] = out->vals[r->param].i = draw_value(t, i, qlo, qhi, m, f, target, &rng);
		}
		if (ok && fits(t, out)) {
			free(vars);
			return 0;
		}
	}
	/* the smallest case was checked at load; the listed case itself is the last resort */
	if (smallest_vars(t, base, out, vars) || !fits(t, out))
		memcpy(out->vals, t->cases[base].vals, t->nparams * sizeof *out->vals);
	free(vars);
	return 0;
}

/* ---- loading ---- */

static int lookup(const char *name, size_t n, void *arg)
{
	return leap_task_scalar_index(arg, name, n);
}

/* Compiles one bound of ranges.NAME: an integer (fitting the parameter's type) or an
 * expression over the integer scalars. */
static struct leap_expr *bound(struct leap_task *t, size_t p, json_t *v, const char *what, const char *where, char **err)
{
	const char *name = t->params[p].name;
	char *src = NULL, *e2 = NULL;
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (t->params[p].type == LEAP_T_INT && (x < INT32_MIN || x > INT32_MAX)) {
			*err = xasprintf("%s: ranges: %s: %s %lld does not fit an int", where, name, what, (long long)x);
			return NULL;
		}
		src = xasprintf("%lld", (long long)x); /* INT64_MIN does not compile: "bad number" */
	} else if (json_is_string(v)) {
		src = xstrdup(json_string_value(v));
	} else {
		*err = xasprintf("%s: ranges: %s: %s must be an integer or an expression string", where, name, what);
		return NULL;
	}
	struct leap_expr *e = leap_expr_compile(src, lookup, t, &e2);
	if (!e) {
		*err = xasprintf("%s: ranges: %s: %s: %s", where, name, what, e2);
		free(e2);
	}
	free(src);
	return e;
}

/* Reads ranges.NAME = [lo, hi] or {"range": [lo, hi], "multiple_of": m} into *r. */
static int parse_range(struct leap_task *t, const char *name, json_t *v, struct leap_range *r, const char *where,
		       char **err)
{
	int p = leap_task_scalar_index(t, name, strlen(name));
	if (p < 0) {
		*err = xasprintf("%s: ranges: '%s' is not an int or int64 scalar parameter", where, name);
		return -1;
	}
	r->param = (size_t)p;
	json_t *pair = v, *mult = NULL;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			if (strcmp(k, "range") && strcmp(k, "multiple_of")) {
				*err = xasprintf("%s: ranges: %s: unknown field '%s' (range, multiple_of)", where, name, k);
				return -1;
			}
		}
		pair = json_object_get(v, "range");
		mult = json_object_get(v, "multiple_of");
	}
	if (!json_is_array(pair) || json_array_size(pair) != 2) {
		*err = xasprintf("%s: ranges: %s: must be [lo, hi] or {\"range\": [lo, hi], \"multiple_of\": m}", where, name);
		return -1;
	}
	if (!(r->lo = bound(t, r->param, json_array_get(pair, 0), "lo", where, err)) ||
	    !(r->hi = bound(t, r->param, json_array_get(pair, 1), "hi", where, err)) ||
	    (mult && !(r->multiple_of = bound(t, r->param, mult, "multiple_of", where, err))))
		return -1;
	json_t *lo = json_array_get(pair, 0), *hi = json_array_get(pair, 1);
	if (json_is_integer(lo) && json_is_integer(hi) && json_integer_value(lo) > json_integer_value(hi)) {
		*err = xasprintf("%s: ranges: %s: [%lld, %lld] is empty", where, name, (long long)json_integer_value(lo),
				 (long long)json_integer_value(hi));
		return -1;
	}
	return 0;
}

struct deps {
	char *uses; /* [nparams]: 1 for each scalar a range names */
};

static void mark(int idx, void *arg)
{
	((struct deps *)arg)->uses[idx] = 1;
}

/* Puts t->ranges in drawing order: a range after the ranges its bounds name, ties in
 * parameter order. Returns 0, or -1 on a cycle. */
static int order(struct leap_task *t, const char *where, char **err)
{
	size_t n = t->nranges, np = t->nparams;
	struct leap_range *sorted = xcalloc(n ? n : 1, sizeof *sorted);
	char *placed = xcalloc(n ? n : 1, 1), *ranged = xcalloc(np, 1), *done = xcalloc(np, 1), *uses = xcalloc(np, 1);
	for (size_t i = 0; i < n; i++)
		ranged[t->ranges[i].param] = 1;
	size_t m = 0;
	while (m < n) {
		size_t pick = n; /* the ready range of the lowest parameter index */
		for (size_t i = 0; i < n; i++) {
			if (placed[i] || (pick < n && t->ranges[pick].param < t->ranges[i].param))
				continue;
			struct deps d = {uses};
			memset(uses, 0, np);
			leap_expr_vars(t->ranges[i].lo, mark, &d);
			leap_expr_vars(t->ranges[i].hi, mark, &d);
			if (t->ranges[i].multiple_of)
				leap_expr_vars(t->ranges[i].multiple_of, mark, &d);
			int ready = 1;
			for (size_t q = 0; q < np; q++)
				ready &= !(uses[q] && ranged[q] && !done[q]);
			if (ready)
				pick = i;
		}
		if (pick == n)
			break;
		placed[pick] = 1;
		done[t->ranges[pick].param] = 1;
		sorted[m++] = t->ranges[pick];
	}
	int rc = 0;
	if (m < n) {
		size_t i = 0;
		while (placed[i])
			i++;
		*err = xasprintf("%s: ranges: %s: its bounds depend on its own value (directly or through other ranges)", where,
				 t->params[t->ranges[i].param].name);
		for (size_t j = 0; j < n; j++)
			if (!placed[j])
				sorted[m++] = t->ranges[j]; /* owned by t either way */
		rc = -1;
	}
	memcpy(t->ranges, sorted, n * sizeof *sorted);
	free(sorted);
	free(placed);
	free(ranged);
	free(done);
	free(uses);
	return rc;
}

/* No "ranges": each integer scalar from its least to its greatest value in the listed cases. */
static void derive(struct leap_task *t)
{
	t->ranges = xcalloc(t->nparams, sizeof *t->ranges);
	t->ranges_derived = 1;
	for (size_t p = 0; p < t->nparams; p++) {
		if (leap_task_scalar_index(t, t->params[p].name, strlen(t->params[p].name)) != (int)p)
			continue;
		int64_t lo = t->cases[0].vals[p].i, hi = lo;
		for (size_t c = 1; c < t->ncases; c++) {
			int64_t v = t->cases[c].vals[p].i;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		char *a = xasprintf("%lld", (long long)lo), *b = xasprintf("%lld", (long long)hi), *e = NULL;
		struct leap_range *r = &t->ranges[t->nranges++];
		r->param = p;
		r->lo = leap_expr_compile(a, NULL, NULL, &e);
		r->hi = leap_expr_compile(b, NULL, NULL, &e);
		free(a);
		free(b);
	}
}

/* The budget of a drawn case: the most bytes and flops of a listed case. */
static void budget(struct leap_task *t)
{
	t->draw_max_bytes = 0;
	t->draw_max_flops = t->flops ? 0 : -1;
	for (size_t c = 0; c < t->ncases; c++) {
		int64_t b = case_bytes(t, &t->cases[c]), f;
		if (b > t->draw_max_bytes)
			t->draw_max_bytes = b;
		if (t->draw_max_flops >= 0)
			t->draw_max_flops = leap_task_eval(t, t->flops, &t->cases[c], &f) ? -1 : f > t->draw_max_flops ? f : t->draw_max_flops;
	}
}

/* "[lo, hi]" or "[lo, hi], a multiple of m" of range r, as declared. */
static void add_range(struct leap_buf *b, const struct leap_range *r)
{
	leap_buf_addf(b, "[%s, %s]", leap_expr_source(r->lo), leap_expr_source(r->hi));
	if (r->multiple_of)
		leap_buf_addf(b, ", a multiple of %s", leap_expr_source(r->multiple_of));
}

/* Every listed case lies within the declared ranges. */
static int check_listed(const struct leap_task *t, const char *where, char **err)
{
	int64_t *vars = xcalloc(t->nparams, sizeof *vars);
	int rc = 0;
	for (size_t c = 0; c < t->ncases && !rc; c++) {
		load_vars(t, &t->cases[c], vars);
		for (size_t i = 0; i < t->nranges && !rc; i++) {
			const struct leap_range *r = &t->ranges[i];
			int64_t qlo, qhi, m, v = vars[r->param];
			if (!allowed(t, r, vars, &qlo, &qhi, &m) && v % m == 0 && v / m >= qlo && v / m <= qhi)
				continue;
			struct leap_buf b = {0};
			add_range(&b, r);
			*err = xasprintf("%s: ranges: %s: cases[%zu] has %s=%lld, outside %s", where, t->params[r->param].name, c,
					 t->params[r->param].name, (long long)v, b.s);
			leap_buf_free(&b);
			rc = -1;
		}
	}
	free(vars);
	return rc;
}

/* The smallest case on top of every listed case is valid and within the budget. */
static int check_smallest(const struct leap_task *t, const char *where, char **err)
{
	struct leap_case s = {xcalloc(t->nparams, sizeof(union leap_scalar))};
	int64_t *vars = xcalloc(t->nparams, sizeof *vars);
	int rc = 0;
	for (size_t c = 0; c < t->ncases && !rc; c++) {
		if (smallest_vars(t, c, &s, vars)) {
			*err = xasprintf("%s: ranges: with the other scalars of cases[%zu], some range allows no value", where, c);
			rc = -1;
		} else if (!fits(t, &s)) {
			json_t *vj = leap_case_json(t, &s);
			char *vs = json_dumps(vj, JSON_COMPACT);
			char *why = NULL;
			int64_t *sizes = xcalloc(t->nparams, sizeof *sizes);
			if (leap_task_sizes(t, &s, sizes, &why) == 0)
				why = xstrdup("it needs more buffer bytes or flops than any listed case");
			*err = xasprintf("%s: ranges: the smallest case %s cannot be used: %s (make a bound an expression, e.g. "
					 "[\"k\", 100])", where, vs ? vs : "?", why);
			free(why);
			free(sizes);
			free(vs);
			json_decref(vj);
			rc = -1;
		}
	}
	free(vars);
	free(s.vals);
	return rc;
}

int leap_task_load_ranges(struct leap_task *t, json_t *rj, const char *where, char **err)
{
	budget(t);
	if (!rj) {
		derive(t);
		return order(t, where, err);
	}
	if (!json_is_object(rj)) {
		*err = xasprintf("%s: ranges: must be an object: {\"name\": [lo, hi], ...}", where);
		return -1;
	}
	t->ranges = xcalloc(json_object_size(rj) ? json_object_size(rj) : 1, sizeof *t->ranges);
	const char *name;
	json_t *v;
	json_object_foreach(rj, name, v) {
		if (parse_range(t, name, v, &t->ranges[t->nranges++], where, err))
			return -1;
	}
	if (order(t, where, err) || check_listed(t, where, err) || check_smallest(t, where, err))
		return -1;
	return 0;
}

/* ---- describing ---- */

/* 1 when e is a plain integer (its value in *v). */
static int constant(const struct leap_expr *e, int64_t *v)
{
	return leap_parse_i64(leap_expr_source(e), INT64_MIN, INT64_MAX, v) == 0;
}

static json_t *bound_json(const struct leap_expr *e)
{
	int64_t v;
	return constant(e, &v) ? json_integer(v) : json_string(leap_expr_source(e));
}

json_t *leap_task_ranges_json(const struct leap_task *t)
{
	json_t *o = json_object();
	for (size_t i = 0; i < t->nranges; i++) {
		const struct leap_range *r = &t->ranges[i];
		json_t *pair = json_pack("[o,o]", bound_json(r->lo), bound_json(r->hi));
		if (r->multiple_of)
			json_object_set_new(o, t->params[r->param].name,
					    json_pack("{s:o,s:o}", "range", pair, "multiple_of", bound_json(r->multiple_of)));
		else
			json_object_set_new(o, t->params[r->param].name, pair);
	}
	return o;
}

char *leap_task_ranges_text(const struct leap_task *t)
{
	struct leap_buf b = {0};
	leap_buf_adds(&b, "");
	for (size_t i = 0; i < t->nranges; i++) {
		const struct leap_range *r = &t->ranges[i];
		leap_buf_addf(&b, "%s%s from %s to %s", i ? ", " : "", t->params[r->param].name, leap_expr_source(r->lo),
			      leap_expr_source(r->hi));
		if (r->multiple_of)
			leap_buf_addf(&b, " (a multiple of %s)", leap_expr_source(r->multiple_of));
	}
	return leap_buf_detach(&b);
}
