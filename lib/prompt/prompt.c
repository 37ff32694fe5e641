/* prompt.c - the turn-1 chat messages that state a task to the model.
 *
 * The prompt is all a model knows when it writes its first kernel, so it states every fact
 * that decides whether the kernel is correct and fast (the inputs it will see, the tolerance
 * in words and at the speed case, how the reference computes, the machine, the exact compiler and flags, the
 * libraries, how speed is measured and against what) and nothing else: each sentence is
 * generated from task.json and from the machine as leap-compile and the runners see it, and
 * a sentence that does not apply to the task is left out rather than hedged. The facts of
 * the machine come from leap_prompt_machine_probe: the compiler resolved the way leap-compile
 * resolves it (one lookup, compile.h), the CPUs this process may run on (the runners inherit
 * them), /proc/cpuinfo, and for a device the --device-info file, else the backend's own probe.
 * What differs between backends (the system message, the machine and build section, how speed
 * is measured) is the backend's row (backend.h); this file writes what every backend shares. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/build.h"
#include "sandbox/cgroup.h"
#include "task/expr.h"
#include "core/jsonl.h"
#include "prompt.h"
#include "sandbox/sandbox.h"
#include "core/util.h"
#include "core/banned.h"

const char *leap_prompt_system(enum leap_backend b)
{
	return leap_backend_of(b)->system_prompt;
}

const char *leap_prompt_lang(enum leap_backend b)
{
	return leap_backend_of(b)->fence;
}

/* ---- the machine ---- */

/* The CPUs this process may run on (the runners it starts inherit the same set), and the
 * first of them in *first. */
static int affinity_cores(int *first)
{
	cpu_set_t set;
	*first = 0;
	if (sched_getaffinity(0, sizeof set, &set) || CPU_COUNT(&set) == 0)
		return 0;
	while (*first < CPU_SETSIZE - 1 && !CPU_ISSET(*first, &set))
		(*first)++;
	return CPU_COUNT(&set);
}

/* The SIMD extensions worth naming to a kernel writer, as /proc/cpuinfo spells them. */
static const char *const simd_flags[] = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
					 "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile",
					 "asimd", "sve", "sve2"};

/* Reads the CPU's model and SIMD flags from /proc/cpuinfo (the first processor). */
static void read_cpuinfo(struct leap_prompt_machine *m)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	int have_flags = 0;
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *v = colon + 1 + strspn(colon + 1, " \t");
		v[strcspn(v, "\n")] = 0;
		if (!m->cpu_model && !strncmp(line, "model name", 10) && *v)
			m->cpu_model = xstrdup(v);
		if (have_flags || (strncmp(line, "flags", 5) && strncmp(line, "Features", 8)))
			continue;
		have_flags = 1;
		for (size_t i = 0; i < sizeof simd_flags / sizeof simd_flags[0]; i++) {
			size_t n = strlen(simd_flags[i]);
			for (const char *p = v; (p = strstr(p, simd_flags[i])); p += n)
				if ((p == v || p[-1] == ' ') && (p[n] == ' ' || !p[n])) {
					m->cpu_flags = xrealloc(m->cpu_flags, (m->ncpu_flags + 1) * sizeof(char *));
					m->cpu_flags[m->ncpu_flags++] = xstrdup(simd_flags[i]);
					break;
				}
		}
	}
	free(line);
	fclose(f);
}

/* The size in sysfs's spelling ("32K", "16384K", "1M") as "32 KiB", "16 MiB" into out. */
static void cache_size(const char *v, char *out, size_t n)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end == 'K')
		x <<= 10;
	else if (*end == 'M')
		x <<= 20;
	else if (*end == 'G')
		x <<= 30;
	if (x >= (1ull << 20) && x % (1ull << 20) == 0)
		snprintf(out, n, "%llu MiB", x >> 20);
	else if (x >= 1024 && x % 1024 == 0)
		snprintf(out, n, "%llu KiB", x >> 10);
	else
		snprintf(out, n, "%llu bytes", x);
}

/* The first line of file dir/name into buf (n bytes), newline removed; 0, or -1. */
static int read_line(const char *dir, const char *name, char *buf, size_t n)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "re");
	free(path);
	if (!f)
		return -1;
	int ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* How many CPUs a sysfs CPU list ("0-1,4") names. */
static int cpu_list_count(const char *list)
{
	int n = 0;
	for (const char *p = list; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		n += b >= a ? (int)(b - a + 1) : 0;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return n;
}

/* The data and unified caches of CPU `cpu` as the kernel describes them (sysfs): "L1d 32 KiB
 * per CPU, L2 512 KiB per CPU, L3 16 MiB shared by 2 CPUs; 64-byte lines", or NULL. They
 * decide the blocking of transposes and GEMMs. */
static char *read_caches(int cpu)
{
	struct leap_buf b = {0};
	char line_size[32] = "";
	for (int i = 0; i < 16; i++) {
		char *dir = xasprintf("/sys/devices/system/cpu/cpu%d/cache/index%d", cpu, i);
		char level[16], type[32], size[32], shared[256];
		int ok = !read_line(dir, "level", level, sizeof level) && !read_line(dir, "type", type, sizeof type) &&
			 !read_line(dir, "size", size, sizeof size) && !read_line(dir, "shared_cpu_list", shared, sizeof shared);
		if (ok && !line_size[0] && read_line(dir, "coherency_line_size", line_size, sizeof line_size))
			line_size[0] = 0;
		free(dir);
		if (!ok)
			break;
		if (strcmp(type, "Data") && strcmp(type, "Unified"))
			continue;
		char sz[48];
		cache_size(size, sz, sizeof sz);
		int sharers = cpu_list_count(shared);
		leap_buf_addf(&b, "%sL%s%s %s ", b.len ? ", " : "", level, strcmp(type, "Data") ? "" : "d", sz);
		if (sharers > 1)
			leap_buf_addf(&b, "shared by %d CPUs", sharers);
		else
			leap_buf_adds(&b, "per CPU");
	}
	if (b.len && line_size[0])
		leap_buf_addf(&b, "; %s-byte lines", line_size);
	if (!b.len) {
		leap_buf_free(&b);
		return NULL;
	}
	return leap_buf_detach(&b);
}

/* Takes the facts of a --device-info object over those probed. */
static int device_info(struct leap_prompt_machine *m, enum leap_backend b, const char *path, char **err)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j || !json_is_object(j)) {
		*err = j ? xasprintf("%s: not a JSON object", path) : xasprintf("%s:%d: %s", path, je.line, je.text);
		json_decref(j);
		return -1;
	}
	json_int_t cores = leap_get_int(j, "cores", 0);
	if (cores > 0)
		m->cores = (int)cores;
	const char *model = leap_get_str(j, "cpu_model", NULL);
	if (model) {
		free(m->cpu_model);
		m->cpu_model = xstrdup(model);
		free(m->cpu_caches); /* this machine's caches are not that CPU's */
		m->cpu_caches = NULL;
	}
	const char *caches = leap_get_str(j, "cpu_caches", NULL);
	if (caches) {
		free(m->cpu_caches);
		m->cpu_caches = xstrdup(caches);
	}
	const json_t *fl = json_object_get(j, "cpu_flags");
	if (json_is_array(fl)) {
		for (size_t i = 0; i < m->ncpu_flags; i++)
			free(m->cpu_flags[i]);
		m->ncpu_flags = 0;
		size_t i;
		const json_t *f;
		json_array_foreach(fl, i, f)
			if (json_is_string(f)) {
				m->cpu_flags = xrealloc(m->cpu_flags, (m->ncpu_flags + 1) * sizeof(char *));
				m->cpu_flags[m->ncpu_flags++] = xstrdup(json_string_value(f));
			}
	}
	if (leap_backend_of(b)->device_facts)
		m->gpu = json_incref(j);
	json_decref(j);
	return 0;
}

int leap_prompt_machine_probe(struct leap_prompt_machine *m, enum leap_backend b, const char *device_info_path,
			      char **err)
{
	memset(m, 0, sizeof(*m));
	int first_cpu;
	m->cores = affinity_cores(&first_cpu);
	m->cpu_caches = read_caches(first_cpu);
	m->timed_cores = leap_candidate_cores(NULL); /* leap-bench's default --cpus */
	if (m->timed_cores < 0)
		m->timed_cores = 0;
	read_cpuinfo(m);
	struct leap_compile_opts o;
	memset(&o, 0, sizeof o);
	char *terr = NULL;
	m->have_tc = leap_compile_toolchain(b, &o, &m->tc, &terr) == 0;
	free(terr);
	if (device_info_path && device_info(m, b, device_info_path, err))
		return -1;
	if (leap_backend_of(b)->device_facts && !m->gpu)
		m->gpu = leap_backend_of(b)->device_facts();
	return 0;
}

void leap_prompt_machine_free(struct leap_prompt_machine *m)
{
	free(m->cpu_model);
	free(m->cpu_caches);
	for (size_t i = 0; i < m->ncpu_flags; i++)
		free(m->cpu_flags[i]);
	free(m->cpu_flags);
	if (m->have_tc)
		leap_toolchain_free(&m->tc);
	json_decref(m->gpu);
	memset(m, 0, sizeof(*m));
}

/* ---- the parts of the user message ---- */

/* "rows=7, cols=33" into s. */
static void add_case(struct leap_buf *s, const struct leap_task *t, const struct leap_case *c)
{
	int first = 1;
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR)
			continue;
		if (p->type == LEAP_T_INT || p->type == LEAP_T_INT64)
			leap_buf_addf(s, "%s%s=%lld", first ? "" : ", ", p->name, (long long)c->vals[i].i);
		else
			leap_buf_addf(s, "%s%s=%g", first ? "" : ", ", p->name, c->vals[i].f);
		first = 0;
	}
	if (first)
		leap_buf_adds(s, "(no scalars)");
}

/* 1 when some buffer of t has type ty; `outputs`: only out and inout buffers. */
static int has_type(const struct leap_task *t, int (*pred)(enum leap_type), int outputs)
{
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR && (!outputs || p->role != LEAP_ROLE_IN) && pred(p->type))
			return 1;
	}
	return 0;
}

static int is_float_type(enum leap_type ty)
{
	return leap_type_is_float(ty);
}

static int is_int_type(enum leap_type ty)
{
	return !leap_type_is_float(ty);
}

static void add_params(struct leap_buf *s, const struct leap_task *t)
{
	leap_buf_adds(s, "## Parameters\n\n");
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role == LEAP_ROLE_SCALAR)
			leap_buf_addf(s, "- `%s`: %s scalar", p->name, leap_type_name(p->type));
		else
			leap_buf_addf(s, "- `%s`: %s buffer of `%s` elements, %s", p->name, leap_type_name(p->type),
				      leap_expr_source(p->size),
				      p->role == LEAP_ROLE_IN    ? "input (read only: it must be left unchanged)"
				      : p->role == LEAP_ROLE_OUT ? "output (write every element)"
								 : "input and output (updated in place)");
		const char *doc = leap_get_str(json_array_get(json_object_get(t->json, "params"), i), "doc", NULL);
		if (doc)
			leap_buf_addf(s, ": %s", doc);
		leap_buf_adds(s, "\n");
	}
}

/* The words for one input pattern (task.h). */
static const char *dist_words(unsigned bit)
{
	switch (bit) {
	case LEAP_DIST_NORMAL: return "normal N(0, 1)";
	case LEAP_DIST_UNIFORM: return "uniform on [-1, 1]";
	case LEAP_DIST_SMALL: return "N(0, 1) scaled by 1e-3";
	case LEAP_DIST_LARGE: return "N(0, 1) scaled by 1e3";
	case LEAP_DIST_SPARSE: return "90% zeros, the rest N(0, 1)";
	case LEAP_DIST_POSITIVE: return "uniform on [0.1, 10]";
	case LEAP_DIST_LOGITS: return "N(0, 1) scaled by 3 (the spread of logits)";
	case LEAP_DIST_NEAR_ONE: return "1 plus N(0, 1) scaled by 1e-2 (a mean 100 times the spread; products of thousands stay finite)";
	case LEAP_DIST_TIES: return "integers from -4 to 4 (values repeat: exact ties)";
	case LEAP_DIST_LARGE_INT: return "N(0, 1) scaled by 16, rounded to integers (dot products past exp's range)";
	default: return "?";
	}
}

/* The range drawn cases give integer scalar p (lib/task/ranges.c: task.json's "ranges", or the
 * least and greatest listed value), or NULL when the task draws none ("ranges": {}). */
static const struct leap_range *range_of(const struct leap_task *t, size_t p)
{
	for (size_t i = 0; i < t->nranges; i++)
		if (t->ranges[i].param == p)
			return &t->ranges[i];
	return NULL;
}

/* leap_expr_vars callback: the expression names a variable. */
static void names_var(int idx, void *arg)
{
	(void)idx;
	*(int *)arg = 0;
}

/* Evaluates e on `vars` (one value per parameter): 0 with *v set, or -1. */
static int eval_bound(const struct leap_expr *e, const int64_t *vars, int64_t *v)
{
	char *err = NULL;
	int rc = leap_expr_eval(e, vars, v, &err);
	free(err);
	return rc;
}

/* One bound as the model reads it, into s: a number when it is a constant (then *v holds it
 * and 1 is returned), else the expression quoted (`k`). */
static int add_bound(struct leap_buf *s, const struct leap_expr *e, const int64_t *vars, int64_t *v)
{
	int constant = 1;
	leap_expr_vars(e, names_var, &constant);
	if (constant && !eval_bound(e, vars, v)) {
		leap_buf_addf(s, "%lld", (long long)*v);
		return 1;
	}
	leap_buf_addf(s, "`%s`", leap_expr_source(e));
	return 0;
}

/* The bounds integer scalar p keeps in every call: from the least value checked up to the
 * speed case's `speed` (the largest the code meets), then the checked range and the speed
 * case: "1 to 256 (checked: 1 to 130; speed case: 256)". `vars`: the speed case's values.
 * Returns 1 when the speed case's value lies above the checked range. */
static int add_domain(struct leap_buf *s, const struct leap_task *t, size_t p, const int64_t *vars)
{
	const struct leap_range *r = range_of(t, p);
	int64_t speed = vars[p], lv = 0, hv = 0;
	struct leap_buf lo = {0}, hi = {0};
	int lconst = 1, hconst = 1;
	if (r) {
		lconst = add_bound(&lo, r->lo, vars, &lv);
		hconst = add_bound(&hi, r->hi, vars, &hv);
		if (!hconst && eval_bound(r->hi, vars, &hv))
			hv = INT64_MAX; /* cannot be compared: the bound stands as written */
	} else { /* no drawn cases: the listed values */
		lv = hv = t->cases[0].vals[p].i;
		for (size_t c = 1; c < t->ncases; c++) {
			int64_t x = t->cases[c].vals[p].i;
			lv = x < lv ? x : lv;
			hv = x > hv ? x : hv;
		}
		leap_buf_addf(&lo, "%lld", (long long)lv);
		leap_buf_addf(&hi, "%lld", (long long)hv);
	}
	int above = speed > hv;
	if (lconst && hconst && lv == hv && speed == lv) {
		leap_buf_addf(s, "always %lld", (long long)lv);
	} else {
		leap_buf_addf(s, "%s to ", lo.s);
		if (above)
			leap_buf_addf(s, "%lld", (long long)speed);
		else
			leap_buf_adds(s, hi.s);
		if (r && r->multiple_of) {
			int64_t m;
			leap_buf_adds(s, ", a multiple of ");
			add_bound(s, r->multiple_of, vars, &m);
		}
		leap_buf_addf(s, " (checked: %s to %s; speed case: %lld)", lo.s, hi.s, (long long)speed);
	}
	leap_buf_free(&lo);
	leap_buf_free(&hi);
	return above;
}

/* The sizes: the bounds each integer scalar keeps in every call, up to the speed case (an
 * array sized for the checked cases overflows there), then the cases checked and the speed
 * case. */
static void add_sizes(struct leap_buf *s, const struct leap_task *t, enum leap_backend b)
{
	const struct leap_case *bc = leap_task_bench_case(t, b);
	int64_t *vars = xcalloc(t->nparams ? t->nparams : 1, sizeof *vars);
	for (size_t i = 0; i < t->nparams; i++)
		if (t->params[i].role == LEAP_ROLE_SCALAR && !leap_type_is_float(t->params[i].type))
			vars[i] = bc->vals[i].i;
	struct leap_buf above = {0}; /* the sizes whose speed case lies beyond the checked range */
	int any = 0;
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR || leap_type_is_float(p->type))
			continue;
		if (!any)
			leap_buf_adds(s, "\nSizes: your function must be correct for every value of each size within these "
					 "bounds, from the least checked up to the speed case's; no other values are passed.\n");
		any = 1;
		leap_buf_addf(s, "- `%s`: ", p->name);
		if (add_domain(s, t, i, vars))
			leap_buf_addf(&above, "%s`%s`", above.len ? ", " : "", p->name);
		leap_buf_adds(s, "\n");
	}
	free(vars);
	if (above.len)
		leap_buf_addf(s, "The speed case goes beyond the checked bounds (%s): size arrays, stack buffers and "
				 "scratch memory for the sizes of each call, not for the checked ones.\n", above.s);
	leap_buf_free(&above);
	leap_buf_adds(s, "\nCorrectness is checked on these cases: ");
	for (size_t i = 0; i < t->ncases; i++) {
		leap_buf_adds(s, i ? "; " : "");
		add_case(s, t, &t->cases[i]);
	}
	if (t->nranges)
		leap_buf_adds(s, "; and, at every check, on cases of random sizes drawn within the checked bounds, "
				 "none more costly than the largest listed case");
	if (t->residue_mod)
		leap_buf_addf(s, ", and on small cases of every remainder of `%s` modulo %lld",
			      t->params[t->residue_param].name, (long long)t->residue_mod);
	leap_buf_adds(s, ". Speed is measured on ");
	add_case(s, t, bc);
	leap_buf_adds(s, ".\n");
}

static void add_inputs(struct leap_buf *s, const struct leap_task *t, enum leap_backend b)
{
	leap_buf_adds(s, "\n## Inputs\n\nEvery check fills the inputs with fresh random values; each draw takes "
			 "one of a buffer's patterns, in turn:\n");
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role == LEAP_ROLE_SCALAR || p->role == LEAP_ROLE_OUT)
			continue;
		leap_buf_addf(s, "- `%s`: ", p->name);
		if (p->init && p->ninit == 1 && p->init[0].values) { /* a module's own table */
			leap_buf_addf(s, "the module's own %zu values, not drawn: as its __init__ makes them, the same "
					 "in every case\n", p->init[0].nvalues);
			continue;
		}
		if (!leap_type_is_float(p->type) && p->init) { /* an integer pack: its tables */
			leap_buf_adds(s, "the module's own values, not drawn: each entry as its __init__ makes it\n");
			continue;
		}
		if (!leap_type_is_float(p->type)) {
			leap_buf_addf(s, "integers from %lld to %lld\n", (long long)p->lo, (long long)p->hi);
			continue;
		}
		if (p->init && p->ninit == 1 && p->init[0].tril) { /* a module's causal mask */
			leap_buf_addf(s, "the module's causal mask, not drawn: n x n matrices (n = %s) of 1 where the "
					 "column <= the row, else 0 (torch.tril(torch.ones(n, n)))\n",
				      leap_expr_source(p->init[0].tril));
			continue;
		}
		if (p->init) { /* a module's parameter: its runs (task.json init) */
			leap_buf_adds(s, p->ninit > 1 ? "uniform, run by run (its entries in order): " : "uniform in ");
			for (size_t k = 0; k < p->ninit && k < 3; k++)
				if (p->init[k].tril)
					leap_buf_addf(s, "%sthe module's causal mask (n = %s)", k ? ", " : "",
						      leap_expr_source(p->init[k].tril));
				else if (p->init[k].values)
					leap_buf_addf(s, "%sthe module's own %zu values", k ? ", " : "", p->init[k].nvalues);
				else
					leap_buf_addf(s, "%s%g +- %g%s%s%s", k ? ", " : "", p->init[k].center, p->init[k].spread,
					      p->init[k].fan ? " / sqrt(" : "",
					      p->init[k].fan ? leap_expr_source(p->init[k].fan) : "", p->init[k].fan ? ")" : "");
			leap_buf_adds(s, p->ninit > 3 ? ", ..." : "");
			leap_buf_adds(s, " (the module's initialisation's scale, a symmetric one at He's gain)\n");
			continue;
		}
		int n = 0, k = 0;
		for (unsigned bit = 1; bit <= LEAP_DIST_LAST; bit <<= 1)
			n += (p->dists & bit) != 0;
		for (unsigned bit = 1; bit <= LEAP_DIST_LAST; bit <<= 1)
			if (p->dists & bit)
				leap_buf_addf(s, "%s%s", k++ ? (k == n ? " or " : ", ") : "", dist_words(bit));
		leap_buf_adds(s, "\n");
	}
	add_sizes(s, t, b);
}

/* "4" for 1e-4: the significant digits a relative tolerance keeps. */
static int digits(double rtol)
{
	return (int)floor(-log10(rtol) + 0.5);
}

/* What the precision class and the tolerance allow on a GPU (unit roundoffs: TF32 and half
 * 4.9e-4, bf16 3.9e-3). */
static void add_precision(struct leap_buf *s, const struct leap_task *t, double rtol, enum leap_tolerance mode)
{
	if (mode == LEAP_TOL_KERNELBENCH_V01)
		leap_buf_adds(s, "This is KernelBench v0.1's tolerance (atol = rtol = 1e-2): TF32 tensor cores pass, "
				 "and half precision or bf16 inputs may, depending on the length of the sums. ");
	else if (mode == LEAP_TOL_KERNELBENCH && rtol < 4.9e-4)
		leap_buf_adds(s, "This is KernelBench's tolerance in fp32 (atol = rtol = 1e-4): tighter than TF32 or "
				 "half precision rounds (4.9e-4 relative): compute in float. ");
	else if (mode == LEAP_TOL_KERNELBENCH)
		leap_buf_adds(s, "This is KernelBench's tolerance, kept at the task's own where that is wider. ");
	else if (t->precision == LEAP_PREC_TF32)
		leap_buf_adds(s, "Precision class tf32: the tolerance admits tensor cores in TF32 (the inputs of "
				 "products rounded to a 10-bit mantissa, 4.9e-4 relative, sums in float); "
				 "half precision and bf16 inputs do not pass. ");
	else if (rtol < 4.9e-4)
		leap_buf_adds(s, "Precision class fp32. That is tighter than TF32 or half precision rounds (4.9e-4 "
				 "relative): compute in float. ");
	else
		leap_buf_adds(s, "Precision class fp32 (float arithmetic). For scale: TF32 and half precision round "
				 "at 4.9e-4 relative, bf16 at 3.9e-3, and rounding errors grow with the length of "
				 "a sum. ");
}

/* The tolerance at the speed case, where leap-bench checks the outputs of every call: the
 * same, or widened as leap-bench widens it (leap_task_tol_scale), said with the numbers so
 * that the model knows what a longer sum in float may cost there. */
static void add_speed_tolerance(struct leap_buf *s, const struct leap_task *t, enum leap_backend b, double atol,
				double rtol)
{
	double k = leap_task_tol_scale(t, leap_task_bench_case(t, b));
	leap_buf_adds(s, "The outputs of every call at the speed case are checked too, ");
	if (k > 1.0005)
		leap_buf_addf(s, "with the tolerance widened %.3g times, to |out - ref| <= %.3g + %.3g * |ref|: its sums "
				 "are about %.3g times longer than the checked cases' (by the task's work per output "
				 "element), and rounding errors grow like the square root of a sum's length. ",
			      k, atol * k, rtol * k, k * k);
	else
		leap_buf_adds(s, "with the same tolerance. ");
}

static void add_correctness(struct leap_buf *s, const struct leap_task *t, enum leap_backend b,
			    enum leap_tolerance mode)
{
	double atol, rtol;
	leap_task_tolerance(t, mode, &atol, &rtol);
	leap_buf_adds(s, "\n## Correctness\n\n");
	if (has_type(t, is_float_type, 1) && atol == 0 && rtol == 0) {
		leap_buf_adds(s, "Every floating-point output element must equal the reference's value exactly. ");
	} else if (has_type(t, is_float_type, 1)) {
		leap_buf_addf(s, "Every floating-point output element must satisfy |out - ref| <= %g + %g * |ref|, "
				 "where ref is the reference's value: ", atol, rtol);
		if (rtol > 0)
			leap_buf_addf(s, "a relative error up to %g (about %d significant digits), and an absolute "
					 "error up to %g near zero. ", rtol, digits(rtol), atol);
		else
			leap_buf_addf(s, "an absolute error up to %g. ", atol);
	}
	if (has_type(t, is_int_type, 1))
		leap_buf_adds(s, "Integer outputs must be exact. ");
	const char *prec = leap_get_str(t->json, "reference_precision", NULL);
	if (t->module)
		leap_buf_adds(s, "The reference is the PyTorch module above, run by torch on the CPU in double "
				 "precision and rounded to the output type once. ");
	else if (prec && !strcmp(prec, "double"))
		leap_buf_adds(s, "The reference is plain C run on the CPU; it computes in double precision (its sums "
				 "included) and rounds to the output type only when it stores each result. ");
	else
		leap_buf_adds(s, "The reference is plain C run on the CPU. ");
	if ((leap_backend_of(b)->flags & LEAP_BK_PRECISION) && has_type(t, is_float_type, 1) && rtol > 0)
		add_precision(s, t, rtol, mode);
	if (has_type(t, is_float_type, 1) && (rtol > 0 || atol > 0))
		add_speed_tolerance(s, t, b, atol, rtol);
	int fo = has_type(t, is_float_type, 1), io = has_type(t, is_int_type, 1);
	leap_buf_addf(s, "Outputs are filled with %s before every call, so every element must be written; inputs "
			 "must be left as they were.\n",
		      fo && io ? "NaN (integers: a poison value)" : fo ? "NaN" : "a poison value");
}

static void add_speed(struct leap_buf *s, const struct leap_task *t, enum leap_backend b,
		      const struct leap_prompt_machine *m)
{
	leap_buf_adds(s, "\n## Speed\n\nYour function is timed on ");
	add_case(s, t, leap_task_bench_case(t, b));
	leap_backend_of(b)->prompt_speed(s, t, m);
}

char *leap_prompt_user(const struct leap_task *t, enum leap_backend b, const struct leap_prompt_machine *m)
{
	struct leap_buf s = {0};
	const char *lang = leap_prompt_lang(b);
	leap_buf_addf(&s, "# Task: %s\n\n%s", t->title, t->prompt);
	if (s.len && s.s[s.len - 1] != '\n')
		leap_buf_adds(&s, "\n");
	char *proto = leap_task_prototype(t, b);
	leap_buf_addf(&s, "\n## Implement exactly this function\n\n```%s\n%s\n```\n\n", lang, proto);
	free(proto);
	add_params(&s, t);
	add_inputs(&s, t, b);
	add_correctness(&s, t, b, m ? m->tolerance : LEAP_TOL_TASK);
	leap_buf_adds(&s, "\n## Machine and build\n\n");
	leap_backend_of(b)->prompt_machine(&s, t, m);
	add_speed(&s, t, b, m);
	leap_buf_addf(&s, "\n## Answer format\n\nOne fenced ```%s block with the complete source: "
			  "includes, helpers and kernels, and the function above with exactly that "
			  "signature. No main(), no test code.\n", lang);
	return leap_buf_detach(&s);
}

json_t *leap_prompt_messages(const char *system, const char *user)
{
	return json_pack("[{s:s,s:s},{s:s,s:s}]", "role", "system", "content", system, "role", "user",
			 "content", user);
}
