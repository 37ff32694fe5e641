/* case_check.c - the comparison of verification: outputs against the reference, and the mismatch. */
/*
 * Every output element is compared with the reference's: one still holding the poison was never
 * written, one not finite is wrong, and a floating-point one must be within atol + rtol*|want|
 * of the task's tolerance; an input the candidate changed is caught when asked. The mismatch
 * is written for the model that made the kernel: the first wrong element in its own terms
 * (y[3][5] when the size is NAME*NAME), how many are wrong, and the inputs when they are few.
 * A large single-precision output is compared in pieces on threads whose outcomes combine to
 * the one-thread verdict.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonl.h"
#include "par.h"
#include "core/util.h"
#include "case.h"
#include "case_int.h"
#include "core/banned.h"

/* JSON for a value that may not be finite ("nan", "inf", "-inf" as strings). */
static json_t *num_json(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

/* The most dimensions a buffer's coordinates are named in. */
#define MAX_DIMS 8

static int scalar_of(const char *name, size_t n, void *arg)
{
	return leap_task_scalar_index(arg, name, n);
}

/* The extents of buffer p in case d when its size expression is a product of factors at the
 * top level ("rows*cols", "batch*cout*(height-k+1)*(width-k+1)", KernelBench's
 * "batch_size*out_channels*3*3*3"): the buffer is that shape, row-major, as every task that
 * states a shape says (a torch-defined task always does). Returns the number of factors (2 or
 * more), or -1 for any other size ("n", "(n+1)/2", "rows*d+1"). */
static int extents(const struct leap_case_data *d, size_t p, int64_t *ext)
{
	const char *src = leap_expr_source(d->t->params[p].size), *start = src;
	int nd = 0, depth = 0;
	for (const char *q = src;; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')')
			depth--;
		else if (depth == 0 && *q && strchr("+-/%,", *q))
			return -1; /* not a product at the top level */
		if (*q && (*q != '*' || depth))
			continue;
		if (nd == MAX_DIMS)
			return -1;
		char *f = xstrndup(start, (size_t)(q - start)), *err = NULL;
		struct leap_expr *e = leap_expr_compile(f, scalar_of, (void *)d->t, &err);
		int bad = !e || leap_task_eval(d->t, e, d->c, &ext[nd]) || ext[nd] < 1;
		leap_expr_free(e);
		free(err);
		free(f);
		if (bad)
			return -1;
		nd++;
		if (!*q)
			break;
		start = q + 1;
	}
	return nd >= 2 ? nd : -1;
}

/* "c[17]", "y[3][5]" or "y[0][2][7][1][4]" into b: each coordinate of index i where the
 * buffer's shape is known (extents()), with "coords" in the mismatch object m. */
static void where(struct leap_buf *b, const struct leap_case_data *d, size_t p, size_t i, json_t *m)
{
	int64_t ext[MAX_DIMS], at[MAX_DIMS];
	int nd = extents(d, p, ext);
	leap_buf_adds(b, d->t->params[p].name);
	if (nd < 0) {
		leap_buf_addf(b, "[%zu]", i);
		return;
	}
	int64_t rest = (int64_t)i;
	for (int k = nd - 1; k >= 0; k--) {
		at[k] = rest % ext[k];
		rest /= ext[k];
	}
	json_t *c = m ? json_array() : NULL;
	for (int k = 0; k < nd; k++) {
		leap_buf_addf(b, "[%lld]", (long long)at[k]);
		if (c)
			json_array_append_new(c, json_integer((json_int_t)at[k]));
	}
	if (m)
		json_object_set_new(m, "coords", c);
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
