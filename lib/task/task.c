/* task.c - the task format (task.json + reference.c + baseline.cu): its types, sizes, prototypes. */
/*
 * A task is the contract every program judges a kernel by. This file is what a loaded task
 * is and what it says: the element types, roles and input patterns by name, the buffer sizes
 * of a case (expressions, expr.c, evaluated per case, so that one task serves every size it
 * lists or draws), the tolerance a check applies, the vendor libraries (the entry point's
 * prototype on each backend is taskproto.c's, which asks the backend table). Reading task.json into it, checked whole so that nothing
 * downstream checks it again, is taskfields.c's; drawn cases are ranges.c's; which folder a
 * task id names, and keeping loaded tasks, is suite.c's. Those files call this one and it
 * calls none of them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "core/util.h"
#include "core/banned.h"

/* Largest buffer a task may declare, in elements (2^34: 64 GiB of float). */
#define MAX_ELEMS ((int64_t)1 << 34)

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

const char *leap_type_ctype(enum leap_type t)
{
	return types[t].c;
}

int leap_type_scalar_ok(enum leap_type t)
{
	return types[t].scalar_ok;
}

int leap_type_parse(const char *s, enum leap_type *t)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (!strcmp(types[i].name, s)) {
			*t = (enum leap_type)i;
			return 0;
		}
	return -1;
}

static const char *const roles[] = {"scalar", "in", "out", "inout"};

const char *leap_role_name(enum leap_role r)
{
	return roles[r];
}

int leap_role_parse(const char *s, enum leap_role *r)
{
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(roles[i], s)) {
			*r = (enum leap_role)i;
			return 0;
		}
	return -1;
}

static const char *const dists[] = {"normal", "uniform", "small", "large", "sparse", "positive", "logits", "near_one",
				     "ties", "large_int"};
#define NDISTS (sizeof(dists) / sizeof(dists[0]))

const char *leap_dist_name(unsigned bit)
{
	for (size_t i = 0; i < NDISTS; i++)
		if (bit == 1u << i)
			return dists[i];
	return NULL;
}

/* Each family's hard region: where exp overflows, where E[x^2] - E[x]^2 cancels, where a tie
 * rule decides. */
static const struct leap_family families[] = {
	{"exp", LEAP_DIST_LARGE | LEAP_DIST_LARGE_INT,
	 "exp, softmax, logsumexp, a sigmoid or tanh: large magnitudes, past exp's range (large, large_int)"},
	{"norm", LEAP_DIST_NEAR_ONE,
	 "a variance or a norm: a non-zero mean with a small spread, where E[x^2] - E[x]^2 cancels (near_one)"},
	{"tie", LEAP_DIST_TIES,
	 "a stated tie rule (arg-max, arg-min, a stable order): exact ties (ties, or an integer range of at most 16 values)"},
};
#define NFAMILIES (sizeof(families) / sizeof(families[0]))

const struct leap_family *leap_family_find(const char *name)
{
	for (size_t i = 0; i < NFAMILIES; i++)
		if (!strcmp(families[i].name, name))
			return &families[i];
	return NULL;
}

const struct leap_family *leap_family_at(size_t i)
{
	return i < NFAMILIES ? &families[i] : NULL;
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

void leap_task_free(struct leap_task *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nparams; i++) {
		free(t->params[i].name);
		leap_expr_free(t->params[i].size);
		for (size_t k = 0; k < t->params[i].ninit; k++) {
			leap_expr_free(t->params[i].init[k].size);
			leap_expr_free(t->params[i].init[k].fan);
			leap_expr_free(t->params[i].init[k].tril);
			free(t->params[i].init[k].values);
		}
		free(t->params[i].init);
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
	free(t->module);
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

/* Whether parameter p's runs of values (struct leap_init) each fill exactly their run of its n
 * elements at the sizes vars: the module's own values are one table, the same at every size. */
static int values_fit(const struct leap_param *p, const int64_t *vars, int64_t n, char **err)
{
	int64_t at = 0;
	for (size_t k = 0; k < p->ninit; k++) {
		const struct leap_init *r = &p->init[k];
		int64_t len = n - at;
		if (r->size && leap_expr_eval(r->size, vars, &len, err))
			return -1;
		if (r->values && (uint64_t)len != r->nvalues) {
			*err = xasprintf("init[%zu] of '%s' holds %zu values, but its run has %lld elements here", k, p->name,
					 r->nvalues, (long long)len);
			return -1;
		}
		at += len > 0 ? len : 0;
	}
	return 0;
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
		} else if (p->init && values_fit(p, vars, sizes[i], err)) {
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
