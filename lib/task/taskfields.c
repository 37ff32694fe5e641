/* taskfields.c - task.json's fields: the one table of them, their parsers, loading a task. */
/*
 * A field of task.json used to be written twice: in a list of known names and again in the
 * parser that read it, with nothing tying the two. Now one table (fields[] below, in the
 * order the fields are read) names each field with its JSON type, whether it is required and
 * the parser that reads it, and drives both the unknown-field check and the parsing; the
 * parameters' fields have a table of their own (param_fields[]), which names and documents
 * them while parse_param reads them in two passes (a size may name a later scalar).
 * tests/docs.bats prints both tables (through leap_task_fields and leap_param_fields) and
 * checks leap-task(5)'s FIELDS against them, so a new field is a row, the member of struct
 * leap_task it fills, and the code that uses it.
 *
 * The task is checked whole here and nothing downstream checks it again: an unknown field, a
 * duplicate key, a bad id or entry point, a malformed parameter or case is an error naming the
 * file and the field (the first one found: struct leap_task_loader), never a default. A parser
 * shared by several fields (parse_string, parse_tol, parse_libs, parse_expr) fills the member
 * its row names by offset; the others name theirs.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "task.h"
#include "core/util.h"
#include "core/banned.h"

/* Loader state: the file name for messages and the first error. */
struct leap_task_loader {
	const char *where;
	char *err;
	struct leap_task *t;
};

static int bad(struct leap_task_loader *l, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(struct leap_task_loader *l, const char *name, const char *fmt, ...)
{
	if (l->err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	l->err = name ? xasprintf("%s: %s: %s", l->where, name, msg) : xasprintf("%s: %s", l->where, msg);
	free(msg);
	return -1;
}

/* The member of the task that row f fills. */
static void *slot(struct leap_task_loader *l, const struct leap_task_field *f)
{
	return (char *)l->t + f->slot;
}

static int c_ident(const char *s)
{
	static const char *const reserved[] = {
		"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
		"enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return",
		"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
		"unsigned", "void", "volatile", "while", "inline", "restrict", "bool", "true", "false",
		"class", "new", "delete", "this", "template", "namespace", "main", "min", "max", "cdiv"};
	if (!*s || strlen(s) > 64 || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	if (!strncmp(s, "leap_", 5) || !strncmp(s, "__", 2))
		return 0;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(s, reserved[i]))
			return 0;
	return 1;
}

/* The row of table t named `name`, or NULL. */
static const struct leap_task_field *find_field(const struct leap_task_field *t, const char *name)
{
	for (; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* ---- the parameters ---- */

static int find_param(const char *name, size_t n, void *arg)
{
	return leap_task_scalar_index(arg, name, n);
}

/* The fields of one parameter. The table names and documents them and serves the
 * unknown-field check; parse_param and parse_buffer read them, in two passes (a size may name
 * a later scalar) with messages of their own, so no row has a parser. size is required of a
 * buffer and refused of a scalar. */
static const struct leap_task_field param_fields[] = {
	{"name", "string", "a string", NULL, LEAP_NO_SLOT, "a C identifier"},
	{"type", "string", "a string", NULL, LEAP_NO_SLOT, "float, double, int, int64, half, bf16 or uint8"},
	{"role", "string", NULL, NULL, LEAP_NO_SLOT, "in, out or inout for a buffer; absent for a scalar"},
	{"size", "string", NULL, NULL, LEAP_NO_SLOT, "a buffer's element count, an expression over the scalars"},
	{"dist", "string or array", NULL, NULL, LEAP_NO_SLOT, "a float input buffer's input patterns"},
	{"range", "array", NULL, NULL, LEAP_NO_SLOT, "an integer buffer's values, [lo, hi]"},
	{"init", "array", NULL, NULL, LEAP_NO_SLOT, "a module parameter's runs at its initialisation's scale"},
	{"doc", "string", NULL, NULL, LEAP_NO_SLOT, "free text"},
	{NULL},
};

/* First pass over a parameter: its known fields, name, type and role. */
static int parse_param(struct leap_task_loader *l, json_t *pj, size_t i)
{
	struct leap_param *p = &l->t->params[i];
	char name[64];
	snprintf(name, sizeof(name), "params[%zu]", i);
	if (!json_is_object(pj))
		return bad(l, name, "must be an object");
	const char *k;
	json_t *v;
	json_object_foreach(pj, k, v) {
		if (!find_field(param_fields, k))
			return bad(l, name, "unknown field '%s'", k);
	}
	json_t *pname = json_object_get(pj, "name");
	if (!json_is_string(pname))
		return bad(l, name, "name: missing or not a string");
	if (!c_ident(json_string_value(pname)))
		return bad(l, name, "name: '%s' is not a usable C identifier", json_string_value(pname));
	for (size_t j = 0; j < i; j++)
		if (!strcmp(l->t->params[j].name, json_string_value(pname)))
			return bad(l, name, "name: '%s' used twice", json_string_value(pname));
	p->name = xstrdup(json_string_value(pname));
	snprintf(name, sizeof(name), "params[%zu] (%s)", i, p->name);

	json_t *type = json_object_get(pj, "type");
	if (!json_is_string(type))
		return bad(l, name, "type: missing or not a string");
	if (leap_type_parse(json_string_value(type), &p->type))
		return bad(l, name, "type: unknown type '%s' (float, double, int, int64, half, bf16, uint8)",
			   json_string_value(type));

	json_t *role = json_object_get(pj, "role");
	const char *rs = json_is_string(role) ? json_string_value(role) : role ? NULL : "scalar";
	if (!rs)
		return bad(l, name, "role: must be a string");
	if (leap_role_parse(rs, &p->role))
		return bad(l, name, "role: unknown role '%s' (scalar, in, out, inout)", rs);

	json_t *size = json_object_get(pj, "size");
	if (p->role == LEAP_ROLE_SCALAR) {
		if (size)
			return bad(l, name, "size: a scalar has no size (give a role: in, out or inout)");
		if (!leap_type_scalar_ok(p->type))
			return bad(l, name, "type: '%s' cannot be a scalar", leap_type_name(p->type));
		if (json_object_get(pj, "dist") || json_object_get(pj, "range") || json_object_get(pj, "init"))
			return bad(l, name, "dist/range/init apply to buffers only");
		return 0;
	}
	if (!json_is_string(size))
		return bad(l, name, "size: missing or not a string (an expression such as \"rows*cols\")");
	return 0;
}

/* A floating-point buffer's "dist": one pattern name or a non-empty array of them. */
static int parse_dist(struct leap_task_loader *l, json_t *dist, struct leap_param *p, const char *name)
{
	p->dists = LEAP_DIST_ALL_DEFAULT;
	if (!dist)
		return 0;
	json_t *list = json_is_string(dist) ? json_pack("[O]", dist) : json_incref(dist);
	if (!json_is_array(list) || !json_array_size(list)) {
		json_decref(list);
		return bad(l, name, "dist: must be a pattern name or a non-empty array of them");
	}
	p->dists = 0;
	size_t k;
	json_t *d;
	json_array_foreach(list, k, d) {
		unsigned bit = 1;
		while (bit <= LEAP_DIST_LAST && !(json_is_string(d) && !strcmp(leap_dist_name(bit), json_string_value(d))))
			bit <<= 1;
		if (bit > LEAP_DIST_LAST) {
			json_decref(list);
			return bad(l, name, "dist[%zu]: unknown pattern (normal, uniform, small, large, sparse, positive, logits, near_one, ties, large_int)", k);
		}
		p->dists |= bit;
	}
	json_decref(list);
	return 0;
}

/* An integer buffer's "range": [lo, hi] within its type (default [-1000, 1000], uint8 all). */
static int parse_int_range(struct leap_task_loader *l, json_t *range, struct leap_param *p, const char *name)
{
	int64_t lim = p->type == LEAP_T_UINT8 ? 255 : p->type == LEAP_T_INT ? INT32_MAX : INT64_MAX;
	p->lo = p->type == LEAP_T_UINT8 ? 0 : -1000;
	p->hi = p->type == LEAP_T_UINT8 ? 255 : 1000;
	if (!range)
		return 0;
	if (!json_is_array(range) || json_array_size(range) != 2 || !json_is_integer(json_array_get(range, 0)) ||
	    !json_is_integer(json_array_get(range, 1)))
		return bad(l, name, "range: must be [lo, hi] with integers");
	p->lo = json_integer_value(json_array_get(range, 0));
	p->hi = json_integer_value(json_array_get(range, 1));
	int64_t low = p->type == LEAP_T_UINT8 ? 0 : -lim;
	if (p->lo > p->hi || p->lo < low || p->hi > lim)
		return bad(l, name, "range: [%lld, %lld] is empty or outside the type", (long long)p->lo, (long long)p->hi);
	if (p->lo == p->hi)
		return bad(l, name, "range: a single value makes every input alike");
	return 0;
}

/* An expression of init's segment k, or NULL when absent (*bad set where it does not compile). */
static struct leap_expr *init_expr(struct leap_task_loader *l, json_t *seg, const char *key, const char *name,
				   size_t k, int *failed)
{
	json_t *v = json_object_get(seg, key);
	if (!v)
		return NULL;
	char *e = NULL;
	struct leap_expr *x = json_is_string(v) ? leap_expr_compile(json_string_value(v), find_param, l->t, &e) : NULL;
	if (!x) {
		bad(l, name, "init[%zu].%s: %s", k, key, e ? e : "must be a string expression");
		*failed = 1;
	}
	free(e);
	return x;
}

/* A values run's elements (k its index): numbers, integers within p's type where it is one. */
static int parse_values(struct leap_task_loader *l, json_t *vals, struct leap_param *p, struct leap_init *r,
			const char *name, size_t k)
{
	size_t n = json_is_array(vals) ? json_array_size(vals) : 0;
	if (!n)
		return bad(l, name, "init[%zu].values: must be a non-empty array of numbers", k);
	double lim = p->type == LEAP_T_UINT8 ? 255 : p->type == LEAP_T_INT ? INT32_MAX : 9007199254740992.0;
	double low = p->type == LEAP_T_UINT8 ? 0 : -lim;
	r->values = xcalloc(n, sizeof *r->values);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(vals, i);
		double v = json_is_number(x) ? json_number_value(x) : NAN;
		if (!isfinite(v) || (!leap_type_is_float(p->type) && (v != floor(v) || v < low || v > lim)))
			return bad(l, name, "init[%zu].values[%zu]: must be a finite number%s", k, i,
				   leap_type_is_float(p->type) ? "" : ", an integer within the buffer's type");
		r->values[i] = v;
	}
	r->nvalues = n;
	return 0;
}

/* Run k of init, of the kind its fields say: uniform (center, spread, fan), a causal mask
 * (tril) or the module's own values; each with a size, but the last. */
static int parse_run(struct leap_task_loader *l, json_t *seg, struct leap_param *p, const char *name, size_t k,
		     size_t n)
{
	const char *key;
	json_t *v;
	if (!json_is_object(seg))
		return bad(l, name, "init[%zu]: must be an object", k);
	int tril = json_object_get(seg, "tril") != NULL, vals = json_object_get(seg, "values") != NULL;
	if (tril && vals)
		return bad(l, name, "init[%zu]: a run is tril or values, not both", k);
	json_object_foreach(seg, key, v)
		if (strcmp(key, "size") && (tril || vals ? strcmp(key, tril ? "tril" : "values")
						   : strcmp(key, "center") && strcmp(key, "spread") && strcmp(key, "fan")))
			return bad(l, name, tril || vals ? "init[%zu]: a run of %s takes size alone beside it, not '%s'"
							 : "init[%zu]: unknown field '%s' (center, spread, fan, size; or "
							   "tril, size; or values, size)",
				   k, tril || vals ? (tril ? "tril" : "values") : key, key);
	if (!vals && !leap_type_is_float(p->type))
		return bad(l, name, "init[%zu]: an integer buffer's runs are values", k);
	json_t *c = json_object_get(seg, "center"), *sp = json_object_get(seg, "spread");
	if (!tril && !vals &&
	    (!json_is_number(c) || !json_is_number(sp) || !isfinite(json_number_value(c)) ||
	     !(json_number_value(sp) > 0) || !isfinite(json_number_value(sp))))
		return bad(l, name, "init[%zu]: center must be a number and spread one > 0", k);
	if ((k + 1 < n) != (json_object_get(seg, "size") != NULL))
		return bad(l, name, "init[%zu]: every run but the last has a size, the last takes the rest", k);
	int failed = 0;
	struct leap_init *r = &p->init[p->ninit++];
	r->center = tril || vals ? 0.0 : json_number_value(c);
	r->spread = tril || vals ? 0.0 : json_number_value(sp);
	r->size = init_expr(l, seg, "size", name, k, &failed);
	r->fan = init_expr(l, seg, "fan", name, k, &failed);
	r->tril = init_expr(l, seg, "tril", name, k, &failed);
	if (failed)
		return -1;
	return vals ? parse_values(l, json_object_get(seg, "values"), p, r, name, k) : 0;
}

/* An input buffer's "init": the runs of a module's parameter (one, or one per state_dict
 * entry of a packed state), in place of the input patterns or range (struct leap_init). */
static int parse_init(struct leap_task_loader *l, json_t *init, struct leap_param *p, const char *name)
{
	if (p->role != LEAP_ROLE_IN)
		return bad(l, name, "init: applies to input buffers (role in)");
	size_t n = json_is_array(init) ? json_array_size(init) : 0;
	if (!n)
		return bad(l, name, "init: must be a non-empty array of runs {\"center\", \"spread\", \"fan\", \"size\"}, "
			   "{\"tril\", \"size\"} or {\"values\", \"size\"}");
	p->init = xcalloc(n, sizeof *p->init);
	for (size_t k = 0; k < n; k++)
		if (parse_run(l, json_array_get(init, k), p, name, k, n))
			return -1;
	p->dists = 0; /* no pattern: init's runs say how it is drawn */
	return 0;
}

/* Second pass over buffers: size expressions may name any scalar, also later ones. */
static int parse_buffer(struct leap_task_loader *l, json_t *pj, size_t i)
{
	struct leap_param *p = &l->t->params[i];
	char name[96];
	snprintf(name, sizeof(name), "params[%zu] (%s)", i, p->name);
	char *e = NULL;
	p->size = leap_expr_compile(json_string_value(json_object_get(pj, "size")), find_param, l->t, &e);
	if (!p->size) {
		bad(l, name, "size: %s", e);
		free(e);
		return -1;
	}
	json_t *dist = json_object_get(pj, "dist");
	json_t *range = json_object_get(pj, "range");
	json_t *init = json_object_get(pj, "init");
	if (leap_type_is_float(p->type)) {
		if (range)
			return bad(l, name, "range: applies to integer buffers (use dist)");
		if (init && dist)
			return bad(l, name, "init: a parameter drawn at its initialisation takes no dist");
		return init ? parse_init(l, init, p, name) : parse_dist(l, dist, p, name);
	}
	if (dist)
		return bad(l, name, "dist: applies to floating-point buffers (use range)");
	if (init && range)
		return bad(l, name, "init: a buffer of the module's own values takes no range");
	return init ? parse_init(l, init, p, name) : parse_int_range(l, range, p, name);
}

/* "params": at least one output, no parameter named as the entry point; the buffers' sizes
 * are parsed once every name is known (a size may name any scalar). */
static int parse_params(struct leap_task_loader *l, json_t *params, const struct leap_task_field *f)
{
	struct leap_task *t = l->t;
	if (!json_is_array(params) || !json_array_size(params))
		return bad(l, f->name, "must be a non-empty array");
	t->params = xcalloc(json_array_size(params), sizeof(struct leap_param));
	size_t i;
	json_t *pj;
	int nout = 0;
	json_array_foreach(params, i, pj) {
		t->nparams = i + 1;
		if (parse_param(l, pj, i))
			return -1;
		if (t->params[i].role == LEAP_ROLE_OUT || t->params[i].role == LEAP_ROLE_INOUT)
			nout++;
		if (t->params[i].name && !strcmp(t->params[i].name, t->entry))
			return bad(l, f->name, "'%s' is also the entry point's name", t->entry);
	}
	if (!nout)
		return bad(l, f->name, "no out or inout buffer: there would be nothing to check");
	json_array_foreach(params, i, pj) {
		if (t->params[i].role != LEAP_ROLE_SCALAR && parse_buffer(l, pj, i))
			return -1;
	}
	return 0;
}

/* ---- the cases ---- */

static int parse_case(struct leap_task_loader *l, json_t *cj, struct leap_case *c, const char *name)
{
	const struct leap_task *t = l->t;
	if (!json_is_object(cj))
		return bad(l, name, "must be an object of scalar values");
	c->vals = xcalloc(t->nparams, sizeof(union leap_scalar));
	const char *k;
	json_t *v;
	json_object_foreach(cj, k, v) {
		size_t i = 0;
		while (i < t->nparams && strcmp(t->params[i].name, k))
			i++;
		if (i == t->nparams || t->params[i].role != LEAP_ROLE_SCALAR)
			return bad(l, name, "'%s' is not a scalar parameter", k);
	}
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR)
			continue;
		json_t *val = json_object_get(cj, p->name);
		if (!val)
			return bad(l, name, "no value for '%s'", p->name);
		if (p->type == LEAP_T_INT || p->type == LEAP_T_INT64) {
			if (!json_is_integer(val))
				return bad(l, name, "'%s' must be an integer", p->name);
			json_int_t x = json_integer_value(val);
			if (p->type == LEAP_T_INT && (x < INT32_MIN || x > INT32_MAX))
				return bad(l, name, "'%s' = %lld does not fit an int", p->name, (long long)x);
			c->vals[i].i = x;
		} else {
			if (!json_is_number(val))
				return bad(l, name, "'%s' must be a number", p->name);
			c->vals[i].f = json_number_value(val);
		}
	}
	int64_t *sizes = xcalloc(t->nparams, sizeof(int64_t));
	char *e = NULL;
	int rc = leap_task_sizes(t, c, sizes, &e);
	free(sizes);
	if (rc) {
		bad(l, name, "%s", e);
		free(e);
		return -1;
	}
	return 0;
}

static int parse_cases(struct leap_task_loader *l, json_t *cases, const struct leap_task_field *f)
{
	struct leap_task *t = l->t;
	if (!json_is_array(cases) || !json_array_size(cases))
		return bad(l, f->name, "must be a non-empty array");
	t->cases = xcalloc(json_array_size(cases), sizeof(struct leap_case));
	size_t i;
	json_t *cj;
	json_array_foreach(cases, i, cj) {
		char name[32];
		snprintf(name, sizeof(name), "cases[%zu]", i);
		t->ncases = i + 1;
		if (parse_case(l, cj, &t->cases[i], name))
			return -1;
	}
	return 0;
}

/* "bench": one case. */
static int parse_bench(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	return parse_case(l, v, slot(l, f), f->name);
}

/* "bench_cpu": the cpu backend's benchmark case, "bench"'s values when absent. */
static int parse_bench_cpu(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	struct leap_case *c = slot(l, f);
	if (v)
		return parse_case(l, v, c, f->name);
	c->vals = xcalloc(l->t->nparams, sizeof(union leap_scalar));
	memcpy(c->vals, l->t->bench.vals, l->t->nparams * sizeof(union leap_scalar));
	return 0;
}

/* ---- the other fields ---- */

/* A required non-empty string, into the char * member of the row. */
static int parse_string(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (!json_is_string(v) || !json_string_length(v))
		return bad(l, f->name, "must be a non-empty string");
	*(char **)slot(l, f) = xstrdup(json_string_value(v));
	return 0;
}

static int parse_id(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (parse_string(l, v, f))
		return -1;
	if (!leap_task_id_valid(l->t->id))
		return bad(l, f->name, "'%s' is not a valid id ([A-Za-z0-9_.-], not starting with '.')", l->t->id);
	return 0;
}

static int parse_entry(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (parse_string(l, v, f))
		return -1;
	if (!c_ident(l->t->entry))
		return bad(l, f->name, "'%s' is not a usable C identifier", l->t->entry);
	return 0;
}

static int parse_level(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 9)
		return bad(l, f->name, "must be an integer from 1 to 9");
	*(int *)slot(l, f) = (int)json_integer_value(v);
	return 0;
}

/* "title": the id when absent. */
static int parse_title(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (v && !json_is_string(v))
		return bad(l, f->name, "must be a string");
	*(char **)slot(l, f) = xstrdup(v ? json_string_value(v) : l->t->id);
	return 0;
}

/* "module": a file name in the task folder (no path: the folder is the task), its reference. */
static int parse_module(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (!v)
		return 0;
	if (parse_string(l, v, f))
		return -1;
	const char *m = l->t->module;
	if (strchr(m, '/') || m[0] == '.')
		return bad(l, f->name, "'%s' must be a file name in the task folder", m);
	return 0;
}

/* "reference_precision": only checked; the prompt states it (prompt.c reads it from t->json). */
static int parse_reference_precision(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "double") && strcmp(json_string_value(v), "float"))))
		return bad(l, f->name, "must be \"double\" or \"float\"");
	return 0;
}

/* A tolerance: a finite number >= 0, into the double member of the row. */
static int parse_tol(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v)))
		return bad(l, f->name, "must be a finite number >= 0");
	*(double *)slot(l, f) = json_number_value(v);
	return 0;
}

static int parse_precision(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (v && !(json_is_string(v) && (!strcmp(json_string_value(v), "fp32") || !strcmp(json_string_value(v), "tf32"))))
		return bad(l, f->name, "must be \"fp32\" or \"tf32\"");
	*(enum leap_precision *)slot(l, f) = v && !strcmp(json_string_value(v), "tf32") ? LEAP_PREC_TF32 : LEAP_PREC_FP32;
	return 0;
}

/* An optional array of library names into the bit set (LEAP_LIB_*) of the row. */
static int parse_libs(struct leap_task_loader *l, json_t *a, const struct leap_task_field *f)
{
	unsigned *out = slot(l, f);
	json_t *v;
	size_t i;
	*out = 0;
	if (!a)
		return 0;
	if (!json_is_array(a))
		return bad(l, f->name, "must be an array of library names (cublas, cublasLt, cudnn, cufft, curand, "
				       "cusparse, cusolver)");
	json_array_foreach(a, i, v) {
		unsigned k = 0;
		while (k < LEAP_LIB_COUNT && !(json_is_string(v) && !strcmp(json_string_value(v), leap_library_name(1u << k))))
			k++;
		if (k == LEAP_LIB_COUNT)
			return bad(l, f->name, "item %zu is not a known library (cublas, cublasLt, cudnn, cufft, curand, "
					       "cusparse, cusolver)", i);
		*out |= 1u << k;
	}
	return 0;
}

/* "baseline_kind", read after "baseline_libraries": a vendor baseline is a library call, and
 * says which. */
static int parse_baseline_kind(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	const char *k = json_string_value(v);
	if (k && (!strcmp(k, "torch-eager") || !strcmp(k, "torch-compile"))) {
		/* a module task's baseline is torch (lib/referee/torchbase.c): which way it runs */
		if (!json_object_get(l->t->json, "module"))
			return bad(l, f->name, "\"%s\" is a module task's baseline (a task with \"module\")", k);
		l->t->baseline_torch = !strcmp(k, "torch-compile") ? 2 : 1;
		return 0;
	}
	if (v && !(k && (!strcmp(k, "vendor") || !strcmp(k, "kernel"))))
		return bad(l, f->name, "must be \"vendor\", \"kernel\", \"torch-eager\" or \"torch-compile\"");
	int vendor = v && !strcmp(json_string_value(v), "vendor");
	*(int *)slot(l, f) = vendor;
	if (vendor != (l->t->baseline_libraries != 0))
		return bad(l, f->name, "%s", vendor ? "\"vendor\" needs baseline_libraries"
						    : "\"kernel\" (the default) links no baseline_libraries");
	return 0;
}

/* An optional size expression into the struct leap_expr * member of the row. */
static int parse_expr(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	if (!v)
		return 0;
	if (!json_is_string(v))
		return bad(l, f->name, "must be a string expression");
	char *e = NULL;
	struct leap_expr **out = slot(l, f);
	*out = leap_expr_compile(json_string_value(v), find_param, l->t, &e);
	if (!*out) {
		bad(l, f->name, "%s", e);
		free(e);
		return -1;
	}
	return 0;
}

/* "ranges", read last: it checks the listed cases and the budget of bytes and flops. */
static int parse_ranges(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	(void)f;
	return leap_task_load_ranges(l->t, v, l->where, &l->err);
}

/* "residues": {"n": M}, M a power of 2 up to 64: a run checks a case of every remainder of n
 * modulo M (leap_task_residue_case), so that a kernel wrong at one remainder a vector width
 * could leave fails whatever the seed. Every remainder must have a case within the ranges and
 * the budget. */
static int parse_residues(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	struct leap_task *t = l->t;
	t->residue_mod = 0;
	if (!v || (!t->nranges && json_is_object(v))) /* "ranges": {} checks the listed cases only */
		return 0;
	if (!json_is_object(v) || json_object_size(v) != 1)
		return bad(l, f->name, "must be an object of one scalar and its modulus, such as {\"n\": 64}");
	const char *name;
	json_t *m;
	json_object_foreach(v, name, m) { /* one entry */
		size_t i = 0;
		while (i < t->nranges && strcmp(t->params[t->ranges[i].param].name, name))
			i++;
		if (i == t->nranges)
			return bad(l, f->name, "'%s' is not a scalar with a range", name);
		json_int_t mod = json_is_integer(m) ? json_integer_value(m) : 0;
		if (mod < 2 || mod > 64 || (mod & (mod - 1)))
			return bad(l, f->name, "%s: the modulus must be 2, 4, 8, 16, 32 or 64", name);
		t->residue_param = t->ranges[i].param;
		t->residue_mod = mod;
	}
	for (int64_t k = 0; k < t->residue_mod; k++) {
		struct leap_case c;
		if (leap_task_residue_case(t, (size_t)k, &c))
			return bad(l, f->name, "%s: no case within the ranges and the budget is %lld modulo %lld",
				   t->params[t->residue_param].name, (long long)k, (long long)t->residue_mod);
		free(c.vals);
	}
	return 0;
}

#define SLOT(member) offsetof(struct leap_task, member)

/* 1 if some input buffer of t may be drawn in a pattern of family f's hard region. */
static int family_covered(const struct leap_task *t, const struct leap_family *f)
{
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_IN && p->role != LEAP_ROLE_INOUT)
			continue;
		if (leap_type_is_float(p->type) ? (p->dists & f->need) != 0
						: (f->need & LEAP_DIST_TIES) && p->hi - p->lo < LEAP_TIE_SPAN)
			return 1;
	}
	return 0;
}

/* "families": operator families (task.c's table), each of whose hard region some input must
 * reach: a task that names softmax but draws no large input is refused here, not found out by a
 * wrong kernel's ok. */
static int parse_families(struct leap_task_loader *l, json_t *v, const struct leap_task_field *f)
{
	l->t->families = 0;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return bad(l, f->name, "must be an array of family names");
	size_t k;
	json_t *e;
	json_array_foreach(v, k, e) {
		const struct leap_family *fam = json_is_string(e) ? leap_family_find(json_string_value(e)) : NULL;
		if (!fam) {
			char names[128] = "";
			for (size_t i = 0; leap_family_at(i); i++)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
					 leap_family_at(i)->name);
			return bad(l, f->name, "[%zu]: unknown family (%s)", k, names);
		}
		if (!family_covered(l->t, fam))
			return bad(l, f->name, "%s: no input may be drawn in its hard region: %s", fam->name, fam->why);
		for (size_t i = 0; leap_family_at(i); i++)
			if (leap_family_at(i) == fam)
				l->t->families |= 1u << i;
	}
	return 0;
}

/* task.json's fields in the order they are read: a field's parser may use what the rows
 * above it filled (params the entry point, baseline_kind baseline_libraries, ranges all). */
static const struct leap_task_field fields[] = {
	{"id", "string", "a string is required", parse_id, SLOT(id), "the task id, equal to the folder name"},
	{"level", "integer", "an integer from 1 to 9", parse_level, SLOT(level), "1 operators, 2 fusions, 3 blocks"},
	{"prompt", "string", "a string is required", parse_string, SLOT(prompt), "the task statement for the model"},
	{"title", "string", NULL, parse_title, SLOT(title), "a short name (default: the id)"},
	{"module", "string", NULL, parse_module, SLOT(module),
	 "a PyTorch module file in the folder: the reference, run by torch (no reference.c)"},
	{"reference_precision", "string", NULL, parse_reference_precision, LEAP_NO_SLOT,
	 "\"double\" or \"float\": what reference.c computes in"},
	{"entry", "string", "a string is required", parse_entry, SLOT(entry), "the entry point, a C identifier"},
	{"params", "array", "an array of parameters", parse_params, LEAP_NO_SLOT, "the entry point's parameters"},
	{"families", "array", NULL, parse_families, LEAP_NO_SLOT, "operator families whose hard regions inputs reach"},
	{"cases", "array", "an array of verification cases", parse_cases, LEAP_NO_SLOT, "the verification cases"},
	{"bench", "object", "the benchmark case, an object of scalar values", parse_bench, SLOT(bench),
	 "the benchmark case on the GPU"},
	{"bench_cpu", "object", NULL, parse_bench_cpu, SLOT(bench_cpu), "the cpu's benchmark case (default: bench)"},
	{"atol", "number", "a number >= 0 is required", parse_tol, SLOT(atol), "the absolute tolerance"},
	{"rtol", "number", "a number >= 0 is required", parse_tol, SLOT(rtol), "the relative tolerance"},
	{"precision", "string", NULL, parse_precision, SLOT(precision), "\"fp32\" or \"tf32\": what the tolerance admits"},
	{"libraries", "array", NULL, parse_libs, SLOT(libraries), "the vendor libraries a candidate may use"},
	{"baseline_libraries", "array", NULL, parse_libs, SLOT(baseline_libraries), "the libraries baseline.cu links"},
	{"baseline_kind", "string", NULL, parse_baseline_kind, SLOT(baseline_vendor), "\"vendor\", \"kernel\" or (module tasks) \"torch-eager\", \"torch-compile\""},
	{"bytes", "string", NULL, parse_expr, SLOT(bytes), "the least memory traffic of a call, an expression"},
	{"flops", "string", NULL, parse_expr, SLOT(flops), "the arithmetic of a call, an expression"},
	{"ranges", "object", NULL, parse_ranges, LEAP_NO_SLOT, "the values of the scalars in drawn cases"},
	{"residues", "object", NULL, parse_residues, LEAP_NO_SLOT, "a scalar whose every remainder a run checks"},
	{"tags", "any", NULL, NULL, LEAP_NO_SLOT, "free form"},
	{"notes", "any", NULL, NULL, LEAP_NO_SLOT, "free form"},
	{NULL},
};

const struct leap_task_field *leap_task_fields(void)
{
	return fields;
}

const struct leap_task_field *leap_param_fields(void)
{
	return param_fields;
}

/* Every field of j by the table: none but the known ones (a misspelt "rtol" must not leave a
 * default in force), each required one present, each read by its parser. */
static int parse_fields(struct leap_task_loader *l, json_t *j)
{
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v) {
		if (!find_field(fields, k))
			return bad(l, k, "unknown field");
	}
	for (const struct leap_task_field *f = fields; f->name; f++) {
		v = json_object_get(j, f->name);
		if (!v && f->need)
			return bad(l, f->name, "missing (%s)", f->need);
		if (f->parse && f->parse(l, v, f))
			return -1;
	}
	return 0;
}

struct leap_task *leap_task_from_json(json_t *j, const char *dir, const char *where, char **err)
{
	struct leap_task *t = xcalloc(1, sizeof(*t));
	struct leap_task_loader l = {.where = where, .t = t};
	t->dir = xstrdup(dir ? dir : ".");
	t->json = json_incref(j);
	if (!json_is_object(j))
		bad(&l, NULL, "must hold a JSON object");
	else if (!parse_fields(&l, j))
		return t;
	*err = l.err ? l.err : xasprintf("%s: invalid task", where);
	leap_task_free(t);
	return NULL;
}

struct leap_task *leap_task_load(const char *dir_arg, char **err)
{
	/* "tasks/x/" and "tasks/x" name the same folder */
	size_t dn = strlen(dir_arg);
	while (dn > 1 && dir_arg[dn - 1] == '/')
		dn--;
	autofree char *dir = xstrndup(dir_arg, dn);
	char *path = xasprintf("%s/task.json", dir);
	json_error_t je;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		if (je.line <= 0)
			*err = xasprintf("%s: %s", path, je.text);
		else
			*err = xasprintf("%s:%d:%d: %s", path, je.line, je.column, je.text);
		free(path);
		return NULL;
	}
	struct leap_task *t = leap_task_from_json(j, dir, path, err);
	json_decref(j);
	if (t) {
		const char *base = strrchr(dir, '/');
		base = base ? base + 1 : dir;
		/* a module task's reference is its module file, run by torch (lib/torchref.c) */
		char *ref = xasprintf("%s/%s", dir, t->module ? t->module : "reference.c");
		if (strcmp(base, t->id) && strcmp(base, ".") && strcmp(base, "..")) {
			*err = xasprintf("%s: id: '%s' differs from the folder name '%s'", path, t->id, base);
			leap_task_free(t);
			t = NULL;
		} else if (access(ref, R_OK)) {
			*err = xasprintf("%s: %s", ref, strerror(errno));
			leap_task_free(t);
			t = NULL;
		}
		free(ref);
	}
	free(path);
	return t;
}
