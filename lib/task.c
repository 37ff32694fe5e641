/* task.c - the task format (task.json + reference.c + baseline.cu): loading, validation, prototypes. */
/*
 * A task is the contract every program judges a kernel by, so it is checked whole when it is
 * loaded and nothing downstream checks it again: an unknown field, a duplicate key, a bad id or
 * entry point, a malformed parameter or case is an error naming the file and the field (the
 * first one found, struct ld), never a default. Sizes, bytes and flops are expressions (expr.c)
 * evaluated per case, so that one task serves every size it lists or draws (ranges.c). Tasks
 * are loaded by id on first use (leap_suite_get), from the suite's own folder or a named
 * sub-suite, and kept for the process: a stream of records names a few tasks many times.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "util.h"
#include "banned.h"

/* Largest buffer a task may declare, in elements (2^34: 64 GiB of float). */
#define MAX_ELEMS ((int64_t)1 << 34)

const char *leap_backend_name(enum leap_backend b)
{
	return b == LEAP_BACKEND_CPU ? "cpu" : "cuda";
}

int leap_backend_parse(const char *s, enum leap_backend *b)
{
	if (!s)
		return -1;
	if (!strcmp(s, "cuda"))
		*b = LEAP_BACKEND_CUDA;
	else if (!strcmp(s, "cpu"))
		*b = LEAP_BACKEND_CPU;
	else
		return -1;
	return 0;
}

static const struct {
	const char *name;
	size_t size;
	int is_float, scalar_ok;
	const char *c;
} types[] = {
	[LEAP_T_FLOAT] = {"float", 4, 1, 1, "float"},
	[LEAP_T_DOUBLE] = {"double", 8, 1, 1, "double"},
	[LEAP_T_INT] = {"int", 4, 0, 1, "int"},
	[LEAP_T_INT64] = {"int64", 8, 0, 1, "int64_t"},
	[LEAP_T_HALF] = {"half", 2, 1, 0, "uint16_t"},
	[LEAP_T_BF16] = {"bf16", 2, 1, 0, "uint16_t"},
	[LEAP_T_UINT8] = {"uint8", 1, 0, 0, "uint8_t"},
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

const char *leap_type_name(enum leap_type t)
{
	return types[t].name;
}

size_t leap_type_size(enum leap_type t)
{
	return types[t].size;
}

int leap_type_is_float(enum leap_type t)
{
	return types[t].is_float;
}

static const char *const roles[] = {"scalar", "in", "out", "inout"};

const char *leap_role_name(enum leap_role r)
{
	return roles[r];
}

static const char *const dists[] = {"normal", "uniform", "small", "large", "sparse", "positive", "logits", "near_one"};
#define NDISTS (sizeof(dists) / sizeof(dists[0]))

const char *leap_dist_name(unsigned bit)
{
	for (size_t i = 0; i < NDISTS; i++)
		if (bit == 1u << i)
			return dists[i];
	return NULL;
}

int leap_task_id_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 128 || id[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/* Loader state: the file name for messages and the first error. */
struct ld {
	const char *where;
	char *err;
	struct leap_task *t;
};

static int bad(struct ld *l, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(struct ld *l, const char *field, const char *fmt, ...)
{
	if (l->err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	l->err = field ? xasprintf("%s: %s: %s", l->where, field, msg) : xasprintf("%s: %s", l->where, msg);
	free(msg);
	return -1;
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

static const char *req_str(struct ld *l, json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (!v) {
		bad(l, key, "missing (a string is required)");
		return NULL;
	}
	if (!json_is_string(v) || !json_string_length(v)) {
		bad(l, key, "must be a non-empty string");
		return NULL;
	}
	return json_string_value(v);
}

int leap_task_scalar_index(const struct leap_task *t, const char *name, size_t n)
{
	for (size_t i = 0; i < t->nparams; i++)
		if (t->params[i].name && strlen(t->params[i].name) == n && !memcmp(t->params[i].name, name, n))
			return t->params[i].role == LEAP_ROLE_SCALAR &&
					       (t->params[i].type == LEAP_T_INT || t->params[i].type == LEAP_T_INT64)
				       ? (int)i
				       : -1;
	return -1;
}

static int find_param(const char *name, size_t n, void *arg)
{
	return leap_task_scalar_index(arg, name, n);
}

static int parse_param(struct ld *l, json_t *pj, size_t i)
{
	struct leap_param *p = &l->t->params[i];
	char field[64];
	snprintf(field, sizeof(field), "params[%zu]", i);
	if (!json_is_object(pj))
		return bad(l, field, "must be an object");
	const char *allowed[] = {"name", "type", "role", "size", "dist", "range", "doc"};
	const char *k;
	json_t *v;
	json_object_foreach(pj, k, v) {
		size_t a = 0;
		while (a < sizeof(allowed) / sizeof(allowed[0]) && strcmp(k, allowed[a]))
			a++;
		if (a == sizeof(allowed) / sizeof(allowed[0]))
			return bad(l, field, "unknown field '%s'", k);
	}
	json_t *name = json_object_get(pj, "name");
	if (!json_is_string(name))
		return bad(l, field, "name: missing or not a string");
	if (!c_ident(json_string_value(name)))
		return bad(l, field, "name: '%s' is not a usable C identifier", json_string_value(name));
	for (size_t j = 0; j < i; j++)
		if (!strcmp(l->t->params[j].name, json_string_value(name)))
			return bad(l, field, "name: '%s' used twice", json_string_value(name));
	p->name = xstrdup(json_string_value(name));
	snprintf(field, sizeof(field), "params[%zu] (%s)", i, p->name);

	json_t *type = json_object_get(pj, "type");
	if (!json_is_string(type))
		return bad(l, field, "type: missing or not a string");
	size_t ti = 0;
	while (ti < NTYPES && strcmp(types[ti].name, json_string_value(type)))
		ti++;
	if (ti == NTYPES)
		return bad(l, field, "type: unknown type '%s' (float, double, int, int64, half, bf16, uint8)",
			   json_string_value(type));
	p->type = (enum leap_type)ti;

	json_t *role = json_object_get(pj, "role");
	const char *rs = json_is_string(role) ? json_string_value(role) : role ? NULL : "scalar";
	if (!rs)
		return bad(l, field, "role: must be a string");
	size_t ri = 0;
	while (ri < 4 && strcmp(roles[ri], rs))
		ri++;
	if (ri == 4)
		return bad(l, field, "role: unknown role '%s' (scalar, in, out, inout)", rs);
	p->role = (enum leap_role)ri;

	json_t *size = json_object_get(pj, "size");
	if (p->role == LEAP_ROLE_SCALAR) {
		if (size)
			return bad(l, field, "size: a scalar has no size (give a role: in, out or inout)");
		if (!types[p->type].scalar_ok)
			return bad(l, field, "type: '%s' cannot be a scalar", types[p->type].name);
		if (json_object_get(pj, "dist") || json_object_get(pj, "range"))
			return bad(l, field, "dist/range apply to buffers only");
		return 0;
	}
	if (!json_is_string(size))
		return bad(l, field, "size: missing or not a string (an expression such as \"rows*cols\")");
	return 0;
}

/* Second pass over buffers: size expressions may name any scalar, also later ones. */
static int parse_buffer(struct ld *l, json_t *pj, size_t i)
{
	struct leap_param *p = &l->t->params[i];
	char field[96];
	snprintf(field, sizeof(field), "params[%zu] (%s)", i, p->name);
	char *e = NULL;
	p->size = leap_expr_compile(json_string_value(json_object_get(pj, "size")), find_param, l->t, &e);
	if (!p->size) {
		bad(l, field, "size: %s", e);
		free(e);
		return -1;
	}
	json_t *dist = json_object_get(pj, "dist");
	json_t *range = json_object_get(pj, "range");
	if (leap_type_is_float(p->type)) {
		if (range)
			return bad(l, field, "range: applies to integer buffers (use dist)");
		p->dists = LEAP_DIST_ALL_DEFAULT;
		if (dist) {
			json_t *list = json_is_string(dist) ? json_pack("[O]", dist) : json_incref(dist);
			if (!json_is_array(list) || !json_array_size(list)) {
				json_decref(list);
				return bad(l, field, "dist: must be a pattern name or a non-empty array of them");
			}
			p->dists = 0;
			size_t k;
			json_t *d;
			json_array_foreach(list, k, d) {
				size_t di = 0;
				while (di < NDISTS && (!json_is_string(d) || strcmp(dists[di], json_string_value(d))))
					di++;
				if (di == NDISTS) {
					json_decref(list);
					return bad(l, field, "dist[%zu]: unknown pattern (normal, uniform, small, large, sparse, positive, logits, near_one)", k);
				}
				p->dists |= 1u << di;
			}
			json_decref(list);
		}
	} else {
		if (dist)
			return bad(l, field, "dist: applies to floating-point buffers (use range)");
		int64_t lim = p->type == LEAP_T_UINT8 ? 255 : p->type == LEAP_T_INT ? INT32_MAX : INT64_MAX;
		p->lo = p->type == LEAP_T_UINT8 ? 0 : -1000;
		p->hi = p->type == LEAP_T_UINT8 ? 255 : 1000;
		if (range) {
			if (!json_is_array(range) || json_array_size(range) != 2 ||
			    !json_is_integer(json_array_get(range, 0)) || !json_is_integer(json_array_get(range, 1)))
				return bad(l, field, "range: must be [lo, hi] with integers");
			p->lo = json_integer_value(json_array_get(range, 0));
			p->hi = json_integer_value(json_array_get(range, 1));
			int64_t low = p->type == LEAP_T_UINT8 ? 0 : -lim;
			if (p->lo > p->hi || p->lo < low || p->hi > lim)
				return bad(l, field, "range: [%lld, %lld] is empty or outside the type",
					   (long long)p->lo, (long long)p->hi);
			if (p->lo == p->hi)
				return bad(l, field, "range: a single value makes every input alike");
		}
	}
	return 0;
}

static int parse_case(struct ld *l, json_t *cj, struct leap_case *c, const char *field)
{
	const struct leap_task *t = l->t;
	if (!json_is_object(cj))
		return bad(l, field, "must be an object of scalar values");
	c->vals = xcalloc(t->nparams, sizeof(union leap_scalar));
	const char *k;
	json_t *v;
	json_object_foreach(cj, k, v) {
		size_t i = 0;
		while (i < t->nparams && strcmp(t->params[i].name, k))
			i++;
		if (i == t->nparams || t->params[i].role != LEAP_ROLE_SCALAR)
			return bad(l, field, "'%s' is not a scalar parameter", k);
	}
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR)
			continue;
		json_t *val = json_object_get(cj, p->name);
		if (!val)
			return bad(l, field, "no value for '%s'", p->name);
		if (p->type == LEAP_T_INT || p->type == LEAP_T_INT64) {
			if (!json_is_integer(val))
				return bad(l, field, "'%s' must be an integer", p->name);
			json_int_t x = json_integer_value(val);
			if (p->type == LEAP_T_INT && (x < INT32_MIN || x > INT32_MAX))
				return bad(l, field, "'%s' = %lld does not fit an int", p->name, (long long)x);
			c->vals[i].i = x;
		} else {
			if (!json_is_number(val))
				return bad(l, field, "'%s' must be a number", p->name);
			c->vals[i].f = json_number_value(val);
		}
	}
	int64_t *sizes = xcalloc(t->nparams, sizeof(int64_t));
	char *e = NULL;
	int rc = leap_task_sizes(t, c, sizes, &e);
	free(sizes);
	if (rc) {
		bad(l, field, "%s", e);
		free(e);
		return -1;
	}
	return 0;
}

static int parse_expr_opt(struct ld *l, json_t *j, const char *key, struct leap_expr **out)
{
	json_t *v = json_object_get(j, key);
	if (!v)
		return 0;
	if (!json_is_string(v))
		return bad(l, key, "must be a string expression");
	char *e = NULL;
	*out = leap_expr_compile(json_string_value(v), find_param, l->t, &e);
	if (!*out) {
		bad(l, key, "%s", e);
		free(e);
		return -1;
	}
	return 0;
}

static int parse_tol(struct ld *l, json_t *j, const char *key, double *out)
{
	json_t *v = json_object_get(j, key);
	if (!v)
		return bad(l, key, "missing (a number >= 0 is required)");
	if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v)))
		return bad(l, key, "must be a finite number >= 0");
	*out = json_number_value(v);
	return 0;
}

const char *leap_precision_name(enum leap_precision p)
{
	return p == LEAP_PREC_TF32 ? "tf32" : "fp32";
}

int leap_tolerance_parse(const char *s, enum leap_tolerance *out)
{
	if (!strcmp(s, "task"))
		*out = LEAP_TOL_TASK;
	else if (!strcmp(s, "kernelbench"))
		*out = LEAP_TOL_KERNELBENCH;
	else if (!strcmp(s, "kernelbench-v0.1"))
		*out = LEAP_TOL_KERNELBENCH_V01;
	else
		return -1;
	return 0;
}

const char *leap_tolerance_name(enum leap_tolerance m)
{
	return m == LEAP_TOL_KERNELBENCH ? "kernelbench" : m == LEAP_TOL_KERNELBENCH_V01 ? "kernelbench-v0.1" : "task";
}

void leap_task_tolerance(const struct leap_task *t, enum leap_tolerance mode, double *atol, double *rtol)
{
	*atol = t->atol;
	*rtol = t->rtol;
	if (mode == LEAP_TOL_TASK)
		return;
	/* KernelBench's torch.allclose(atol=tol, rtol=tol): tol by the precision of the outputs
	 * (an output of half or bf16 is a half-precision run) now, 1e-2 for all in v0 and v0.1. A
	 * task whose own rounding needs more keeps its own, or a correct kernel would fail. */
	double kb = LEAP_KERNELBENCH_V01_TOL;
	if (mode == LEAP_TOL_KERNELBENCH) {
		kb = LEAP_KERNELBENCH_TOL_FP32;
		for (size_t i = 0; i < t->nparams; i++)
			if ((t->params[i].role == LEAP_ROLE_OUT || t->params[i].role == LEAP_ROLE_INOUT) &&
			    (t->params[i].type == LEAP_T_HALF || t->params[i].type == LEAP_T_BF16))
				kb = LEAP_KERNELBENCH_TOL_HALF;
	}
	if (*atol < kb)
		*atol = kb;
	if (*rtol < kb)
		*rtol = kb;
}

static const char *const lib_names[LEAP_LIB_COUNT] = {"cublas", "cublasLt", "cudnn", "cufft", "curand", "cusparse",
						      "cusolver"};

const char *leap_library_name(unsigned bit)
{
	for (unsigned i = 0; i < LEAP_LIB_COUNT; i++)
		if (bit == 1u << i)
			return lib_names[i];
	return NULL;
}

unsigned leap_library_of_header(const char *h)
{
	/* cublasLt first: it shares cublas's prefix */
	static const struct {
		const char *prefix;
		unsigned bit;
	} map[] = {{"cublasLt", LEAP_LIB_CUBLASLT}, {"cublas", LEAP_LIB_CUBLAS},     {"cudnn", LEAP_LIB_CUDNN},
		   {"cufft", LEAP_LIB_CUFFT},       {"curand", LEAP_LIB_CURAND},     {"cusparse", LEAP_LIB_CUSPARSE},
		   {"cusolver", LEAP_LIB_CUSOLVER}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strncmp(h, map[i].prefix, strlen(map[i].prefix)))
			return map[i].bit;
	return 0;
}

/* An optional array of library names (lib_names) into a bit set. */
static int parse_libs(struct ld *l, json_t *j, const char *key, unsigned *out)
{
	json_t *a = json_object_get(j, key), *v;
	size_t i;
	*out = 0;
	if (!a)
		return 0;
	if (!json_is_array(a))
		return bad(l, key, "must be an array of library names (cublas, cublasLt, cudnn, cufft, curand, "
				   "cusparse, cusolver)");
	json_array_foreach(a, i, v) {
		unsigned k = 0;
		while (k < LEAP_LIB_COUNT && !(json_is_string(v) && !strcmp(json_string_value(v), lib_names[k])))
			k++;
		if (k == LEAP_LIB_COUNT)
			return bad(l, key, "item %zu is not a known library (cublas, cublasLt, cudnn, cufft, curand, "
					   "cusparse, cusolver)", i);
		*out |= 1u << k;
	}
	return 0;
}

/* "precision", "libraries", "baseline_kind" and "baseline_libraries" (all optional). */
static int parse_gpu_fields(struct ld *l, json_t *j)
{
	struct leap_task *t = l->t;
	json_t *p = json_object_get(j, "precision");
	if (p && !(json_is_string(p) && (!strcmp(json_string_value(p), "fp32") || !strcmp(json_string_value(p), "tf32"))))
		return bad(l, "precision", "must be \"fp32\" or \"tf32\"");
	t->precision = p && !strcmp(json_string_value(p), "tf32") ? LEAP_PREC_TF32 : LEAP_PREC_FP32;
	if (parse_libs(l, j, "libraries", &t->libraries) || parse_libs(l, j, "baseline_libraries", &t->baseline_libraries))
		return -1;
	json_t *k = json_object_get(j, "baseline_kind");
	if (k && !(json_is_string(k) && (!strcmp(json_string_value(k), "vendor") || !strcmp(json_string_value(k), "kernel"))))
		return bad(l, "baseline_kind", "must be \"vendor\" or \"kernel\"");
	t->baseline_vendor = k && !strcmp(json_string_value(k), "vendor");
	/* a vendor baseline is a library call: it says which */
	if (t->baseline_vendor != (t->baseline_libraries != 0))
		return bad(l, "baseline_kind", "%s", t->baseline_vendor ? "\"vendor\" needs baseline_libraries"
								: "\"kernel\" (the default) links no baseline_libraries");
	return 0;
}

/* No field but the known ones: a misspelt "rtol" must not leave the default in force. */
static int check_known(struct ld *l, json_t *j)
{
	static const char *const known[] = {"id", "level", "title", "prompt", "entry", "params", "cases",
					    "bench", "bench_cpu", "ranges", "atol", "rtol", "bytes", "flops", "tags", "notes",
					    "reference_precision", "precision", "libraries", "baseline_kind", "baseline_libraries"};
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v) {
		size_t a = 0;
		while (a < sizeof(known) / sizeof(known[0]) && strcmp(k, known[a]))
			a++;
		if (a == sizeof(known) / sizeof(known[0]))
			return bad(l, k, "unknown field");
	}
	return 0;
}

/* "id", "level", "prompt", "title", "reference_precision" and "entry". */
static int parse_head(struct ld *l, json_t *j)
{
	struct leap_task *t = l->t;
	const char *s;
	if (!(s = req_str(l, j, "id")))
		return -1;
	if (!leap_task_id_valid(s))
		return bad(l, "id", "'%s' is not a valid id ([A-Za-z0-9_.-], not starting with '.')", s);
	t->id = xstrdup(s);
	json_t *level = json_object_get(j, "level");
	if (!json_is_integer(level) || json_integer_value(level) < 1 || json_integer_value(level) > 9)
		return bad(l, "level", level ? "must be an integer from 1 to 9" : "missing (an integer from 1 to 9)");
	t->level = (int)json_integer_value(level);
	if (!(s = req_str(l, j, "prompt")))
		return -1;
	t->prompt = xstrdup(s);
	json_t *title = json_object_get(j, "title");
	if (title && !json_is_string(title))
		return bad(l, "title", "must be a string");
	t->title = xstrdup(title ? json_string_value(title) : t->id);
	json_t *rp = json_object_get(j, "reference_precision"); /* stated in the prompt (prompt.c) */
	if (rp && (!json_is_string(rp) || (strcmp(json_string_value(rp), "double") && strcmp(json_string_value(rp), "float"))))
		return bad(l, "reference_precision", "must be \"double\" or \"float\"");
	if (!(s = req_str(l, j, "entry")))
		return -1;
	if (!c_ident(s))
		return bad(l, "entry", "'%s' is not a usable C identifier", s);
	t->entry = xstrdup(s);
	return 0;
}

/* "params": at least one output, no parameter named as the entry point; the buffers' sizes
 * are parsed once every name is known (a size may name any scalar). */
static int parse_params(struct ld *l, json_t *j)
{
	struct leap_task *t = l->t;
	json_t *params = json_object_get(j, "params");
	if (!json_is_array(params) || !json_array_size(params))
		return bad(l, "params", params ? "must be a non-empty array" : "missing (an array of parameters)");
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
			return bad(l, "params", "'%s' is also the entry point's name", t->entry);
	}
	if (!nout)
		return bad(l, "params", "no out or inout buffer: there would be nothing to check");
	json_array_foreach(params, i, pj) {
		if (t->params[i].role != LEAP_ROLE_SCALAR && parse_buffer(l, pj, i))
			return -1;
	}
	return 0;
}

/* "cases", "bench" and "bench_cpu" (the cpu backend's benchmark case, "bench" by default). */
static int parse_cases(struct ld *l, json_t *j)
{
	struct leap_task *t = l->t;
	json_t *cases = json_object_get(j, "cases");
	if (!json_is_array(cases) || !json_array_size(cases))
		return bad(l, "cases", cases ? "must be a non-empty array" : "missing (an array of verification cases)");
	t->cases = xcalloc(json_array_size(cases), sizeof(struct leap_case));
	size_t i;
	json_t *cj;
	json_array_foreach(cases, i, cj) {
		char field[32];
		snprintf(field, sizeof(field), "cases[%zu]", i);
		t->ncases = i + 1;
		if (parse_case(l, cj, &t->cases[i], field))
			return -1;
	}
	json_t *bench = json_object_get(j, "bench");
	if (!bench)
		return bad(l, "bench", "missing (the benchmark case, an object of scalar values)");
	if (parse_case(l, bench, &t->bench, "bench"))
		return -1;
	json_t *bench_cpu = json_object_get(j, "bench_cpu");
	return parse_case(l, bench_cpu ? bench_cpu : bench, &t->bench_cpu, "bench_cpu");
}

struct leap_task *leap_task_from_json(json_t *j, const char *dir, const char *where, char **err)
{
	struct leap_task *t = xcalloc(1, sizeof(*t));
	struct ld l = {.where = where, .t = t};
	t->dir = xstrdup(dir ? dir : ".");
	t->json = json_incref(j);
	if (!json_is_object(j)) {
		bad(&l, NULL, "must hold a JSON object");
		goto fail;
	}
	if (check_known(&l, j) || parse_head(&l, j) || parse_params(&l, j) || parse_cases(&l, j))
		goto fail;
	if (parse_tol(&l, j, "atol", &t->atol) || parse_tol(&l, j, "rtol", &t->rtol) || parse_gpu_fields(&l, j))
		goto fail;
	if (parse_expr_opt(&l, j, "bytes", &t->bytes) || parse_expr_opt(&l, j, "flops", &t->flops))
		goto fail;
	if (leap_task_load_ranges(t, j, where, &l.err))
		goto fail;
	return t;
fail:
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
		char *ref = xasprintf("%s/reference.c", dir);
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

void leap_task_free(struct leap_task *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nparams; i++) {
		free(t->params[i].name);
		leap_expr_free(t->params[i].size);
	}
	free(t->params);
	for (size_t i = 0; i < t->ncases; i++)
		free(t->cases[i].vals);
	free(t->cases);
	free(t->bench.vals);
	free(t->bench_cpu.vals);
	leap_expr_free(t->bytes);
	leap_expr_free(t->flops);
	for (size_t i = 0; i < t->nranges; i++) {
		leap_expr_free(t->ranges[i].lo);
		leap_expr_free(t->ranges[i].hi);
		leap_expr_free(t->ranges[i].multiple_of);
	}
	free(t->ranges);
	json_decref(t->json);
	free(t->id);
	free(t->dir);
	free(t->suite);
	free(t->title);
	free(t->prompt);
	free(t->entry);
	free(t);
}

static int64_t *case_ints(const struct leap_task *t, const struct leap_case *c)
{
	int64_t *v = xcalloc(t->nparams, sizeof(int64_t));
	for (size_t i = 0; i < t->nparams; i++)
		if (t->params[i].role == LEAP_ROLE_SCALAR &&
		    (t->params[i].type == LEAP_T_INT || t->params[i].type == LEAP_T_INT64))
			v[i] = c->vals[i].i;
	return v;
}

int leap_task_sizes(const struct leap_task *t, const struct leap_case *c, int64_t *sizes, char **err)
{
	int64_t *vars = case_ints(t, c);
	int rc = 0;
	for (size_t i = 0; i < t->nparams && !rc; i++) {
		sizes[i] = 0;
		const struct leap_param *p = &t->params[i];
		if (p->role == LEAP_ROLE_SCALAR)
			continue;
		if (leap_expr_eval(p->size, vars, &sizes[i], err)) {
			rc = -1;
		} else if (sizes[i] < 1 || sizes[i] > MAX_ELEMS) {
			*err = xasprintf("size of '%s' (%s) is %lld, outside [1, %lld]", p->name,
					 leap_expr_source(p->size), (long long)sizes[i], (long long)MAX_ELEMS);
			rc = -1;
		}
	}
	free(vars);
	return rc;
}

int leap_task_eval(const struct leap_task *t, const struct leap_expr *e, const struct leap_case *c, int64_t *out)
{
	if (!e)
		return -1;
	int64_t *vars = case_ints(t, c);
	char *err = NULL;
	int rc = leap_expr_eval(e, vars, out, &err);
	free(err);
	free(vars);
	return rc;
}

/* Pointer types by [type][backend][is const]. */
static const char *const ptr_types[NTYPES][2][2] = {
	[LEAP_T_FLOAT] = {{"float *", "const float *"}, {"float *", "const float *"}},
	[LEAP_T_DOUBLE] = {{"double *", "const double *"}, {"double *", "const double *"}},
	[LEAP_T_INT] = {{"int *", "const int *"}, {"int *", "const int *"}},
	[LEAP_T_INT64] = {{"int64_t *", "const int64_t *"}, {"int64_t *", "const int64_t *"}},
	[LEAP_T_HALF] = {{"__half *", "const __half *"}, {"uint16_t *", "const uint16_t *"}},
	[LEAP_T_BF16] = {{"__nv_bfloat16 *", "const __nv_bfloat16 *"}, {"uint16_t *", "const uint16_t *"}},
	[LEAP_T_UINT8] = {{"uint8_t *", "const uint8_t *"}, {"uint8_t *", "const uint8_t *"}},
};

const char *leap_param_ctype(const struct leap_param *p, enum leap_backend b)
{
	if (p->role == LEAP_ROLE_SCALAR)
		return types[p->type].c;
	return ptr_types[p->type][b == LEAP_BACKEND_CPU][p->role == LEAP_ROLE_IN];
}

char *leap_task_prototype(const struct leap_task *t, enum leap_backend b)
{
	struct leap_buf s = {0};
	if (b == LEAP_BACKEND_CUDA)
		leap_buf_adds(&s, "extern \"C\" ");
	leap_buf_addf(&s, "void %s(", t->entry);
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		const char *ct = leap_param_ctype(p, b);
		size_t n = strlen(ct);
		leap_buf_addf(&s, "%s%s%s%s", i ? ", " : "", ct, ct[n - 1] == '*' ? "" : " ", p->name);
	}
	leap_buf_adds(&s, ");");
	return leap_buf_detach(&s);
}

const struct leap_case *leap_task_bench_case(const struct leap_task *t, enum leap_backend b)
{
	return b == LEAP_BACKEND_CPU ? &t->bench_cpu : &t->bench;
}

json_t *leap_case_json(const struct leap_task *t, const struct leap_case *c)
{
	json_t *o = json_object();
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR)
			continue;
		if (p->type == LEAP_T_INT || p->type == LEAP_T_INT64)
			json_object_set_new(o, p->name, json_integer(c->vals[i].i));
		else
			json_object_set_new(o, p->name, json_real(c->vals[i].f));
	}
	return o;
}

void leap_suite_init(struct leap_suite *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->dir = xstrdup(dir);
}

/* 1 if dir/name/task.json is readable: dir/name is a task folder. */
static int has_task_json(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s/task.json", dir, name);
	int ok = access(p, R_OK) == 0;
	free(p);
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The task ids of directory `dir` (its subfolders holding task.json), sorted, into *ids.
 * Returns the count, or -1 with *err when dir cannot be read. */
static long task_folders(const char *dir, char ***ids, char **err)
{
	DIR *d = opendir(dir);
	if (!d) {
		*err = xasprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!leap_task_id_valid(e->d_name) || !has_task_json(dir, e->d_name))
			continue;
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		v[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*ids = v;
	return (long)n;
}

static void free_strv(char **v, long n)
{
	for (long i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Reads the suite folders of s->dir once: subfolders with a valid name, no task.json and at
 * least one task folder. Returns 0, or -1 with *err when the root cannot be read. */
static int read_subs(struct leap_suite *s, char **err)
{
	if (s->subs_read)
		return 0;
	DIR *d = opendir(s->dir);
	if (!d) {
		*err = xasprintf("%s: %s", s->dir, strerror(errno));
		return -1;
	}
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!leap_task_id_valid(e->d_name) || has_task_json(s->dir, e->d_name))
			continue;
		char *sub = xasprintf("%s/%s", s->dir, e->d_name), **ids = NULL, *e2 = NULL;
		long k = task_folders(sub, &ids, &e2); /* not a directory, or holding no task: not a suite */
		free(e2);
		free(sub);
		free_strv(ids, k);
		if (k <= 0)
			continue;
		xgrow((void **)&s->subs, &cap, s->nsubs + 1, sizeof(*s->subs));
		s->subs[s->nsubs++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (s->nsubs)
		qsort(s->subs, s->nsubs, sizeof(*s->subs), cmp_str);
	s->subs_read = 1;
	return 0;
}

long leap_suite_names(struct leap_suite *s, char ***names, char **err)
{
	char **own = NULL;
	long n_own = task_folders(s->dir, &own, err);
	if (n_own < 0 || read_subs(s, err))
		return -1;
	free_strv(own, n_own);
	char **v = xcalloc(s->nsubs + 1, sizeof(*v));
	size_t n = 0;
	if (n_own > 0)
		v[n++] = xstrdup(LEAP_SUITE_OWN);
	for (size_t i = 0; i < s->nsubs; i++)
		v[n++] = xstrdup(s->subs[i]);
	*names = v;
	return (long)n;
}

int leap_suite_select(struct leap_suite *s, const char *name, char **err)
{
	int found = !strcmp(name, LEAP_SUITE_OWN);
	if (!found && leap_task_id_valid(name)) {
		if (read_subs(s, err))
			return -1;
		for (size_t i = 0; i < s->nsubs && !found; i++)
			found = !strcmp(s->subs[i], name);
	}
	if (!found) {
		char **names = NULL, *e2 = NULL;
		long n = leap_suite_names(s, &names, &e2);
		struct leap_buf have = {0};
		for (long i = 0; i < n; i++)
			leap_buf_addf(&have, "%s%s", i ? ", " : "", names[i]);
		*err = xasprintf("no suite '%s' in %s (its suites: %s)", name, s->dir, have.len ? have.s : "none");
		leap_buf_free(&have);
		free_strv(names, n);
		free(e2);
		return -1;
	}
	free(s->only);
	s->only = xstrdup(name);
	return 0;
}

/* The folder of suite `name` (new). */
static char *suite_dir(const struct leap_suite *s, const char *name)
{
	return strcmp(name, LEAP_SUITE_OWN) ? xasprintf("%s/%s", s->dir, name) : xstrdup(s->dir);
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The suite holding task folder `id` (s->only, else the root's own, else the first suite
 * folder that has it), and that folder, new in *dir; NULL when none has it. */
static const char *find_task(struct leap_suite *s, const char *id, char **dir)
{
	if (s->only) {
		char *sd = suite_dir(s, s->only);
		*dir = xasprintf("%s/%s", sd, id);
		free(sd);
		if (is_dir(*dir))
			return s->only;
	} else {
		*dir = xasprintf("%s/%s", s->dir, id);
		if (is_dir(*dir))
			return LEAP_SUITE_OWN;
		char *e2 = NULL;
		if (read_subs(s, &e2))
			free(e2);
		for (size_t i = 0; i < s->nsubs; i++) {
			free(*dir);
			*dir = xasprintf("%s/%s/%s", s->dir, s->subs[i], id);
			if (is_dir(*dir))
				return s->subs[i];
		}
	}
	free(*dir);
	*dir = NULL;
	return NULL;
}

const struct leap_task *leap_suite_get(struct leap_suite *s, const char *id, char **err)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->tasks[i]->id, id))
			return s->tasks[i];
	if (!leap_task_id_valid(id)) {
		*err = xasprintf("invalid task id '%s'", id);
		return NULL;
	}
	char *dir = NULL;
	const char *suite = find_task(s, id, &dir);
	if (!suite) {
		if (s->only && strcmp(s->only, LEAP_SUITE_OWN))
			*err = xasprintf("task '%s' not found in suite '%s' of %s", id, s->only, s->dir);
		else
			*err = xasprintf("task '%s' not found in %s", id, s->dir);
		return NULL;
	}
	struct leap_task *t = leap_task_load(dir, err);
	free(dir);
	if (!t)
		return NULL;
	t->suite = xstrdup(suite);
	xgrow((void **)&s->tasks, &s->cap, s->n + 1, sizeof(*s->tasks));
	s->tasks[s->n++] = t;
	return t;
}

long leap_suite_list(struct leap_suite *s, char ***ids, char **err)
{
	char *sd = suite_dir(s, s->only ? s->only : LEAP_SUITE_OWN);
	long n = task_folders(sd, ids, err);
	free(sd);
	return n;
}

void leap_suite_free(struct leap_suite *s)
{
	for (size_t i = 0; i < s->n; i++)
		leap_task_free(s->tasks[i]);
	free(s->tasks);
	free_strv(s->subs, (long)s->nsubs);
	free(s->only);
	free(s->dir);
	memset(s, 0, sizeof(*s));
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

/* A sum over K terms has rounding errors growing like sqrt(K), and the task's tolerances were
 * chosen for its verification cases. K is estimated as flops per output element (2*K for a
 * product); 1 without flops. One function for leap-bench, which checks with it, and
 * leap-prompt, which says it. */
double leap_task_tol_scale(const struct leap_task *t, const struct leap_case *bench)
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
