/* toolchain.c - find a backend's compiler, name it for the cache keys, and build its command lines. */
/*
 * A backend's toolchain is resolved on first use (leap_tool_resolve), not at start, so that
 * a cpu-only stream never needs nvcc: the compiler is looked up (--nvcc, $NVCC, $CUDA_HOME,
 * PATH: leap_nvcc_name, which the baselines' builds use too; --cc, $CC, cc), asked for its --version (and, for nvcc, the host gcc it compiles with),
 * and for cuda the arch is taken from --arch or the first visible GPU. The identity string
 * and every flag that shapes the code enter each cache key (leap_tool_hash), so that a
 * changed compiler or flag never reuses an artifact built by another.
 *
 * The fixed flags live in one function (base_flags) that builds command lines, hashes keys
 * and tells a model which flags its code is compiled with (leap_compile_toolchain), so the
 * three cannot drift apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crun.h"
#include "gpu.h"
#include "incguard.h"
#include "toolchain.h"
#include "util.h"
#include "banned.h"

char *leap_nvcc_name(const char *given)
{
	if (given)
		return xstrdup(given);
	const char *env = getenv("NVCC");
	if (env && *env)
		return xstrdup(env);
	const char *home = getenv("CUDA_HOME");
	char *at_home = xasprintf("%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
	if (access(at_home, X_OK) == 0)
		return at_home;
	char *on_path = leap_find_program("nvcc");
	if (!on_path)
		return at_home;
	free(at_home);
	return on_path;
}

void leap_tool_resolve(struct leap_compiler *c, enum leap_backend b)
{
	struct leap_tool *t = &c->tools[b];
	if (t->resolved)
		return;
	t->resolved = 1;
	struct leap_buf id = {0};
	if (b == LEAP_BACKEND_CUDA) {
		char *want = leap_nvcc_name(c->o.nvcc);
		t->path = leap_find_program(want);
		if (!t->path && c->o.nvcc)
			t->err = xasprintf("the cuda backend needs nvcc, and '%s' was not found (use --nvcc or set "
					   "CUDA_HOME)", want);
		else if (!t->path && getenv("NVCC") && *getenv("NVCC"))
			t->err = xasprintf("the cuda backend needs nvcc, and '%s' (from NVCC) was not found (set NVCC "
					   "to nvcc's path, or unset it)", want);
		else if (!t->path)
			t->err = xasprintf("the cuda backend needs nvcc, and '%s' was not found, nor nvcc on PATH "
					   "(use --nvcc, or set NVCC or CUDA_HOME)", want);
		free(want);
	} else {
		const char *want = c->o.cc;
		if (!want) {
			const char *env = getenv("CC");
			want = env && *env ? env : "cc";
		}
		t->path = leap_find_program(want);
		if (!t->path)
			t->err = xasprintf("the cpu backend needs a C compiler, and '%s' was not found (use --cc)", want);
	}
	if (!t->path)
		return;
	char *const argv[] = {t->path, (char *)"--version", NULL};
	char *v = leap_crun_query(c, argv, c->workdir);
	if (!v) {
		t->err = xasprintf("%s --version failed: the compiler does not run", t->path);
		free(t->path);
		t->path = NULL;
		return;
	}
	leap_buf_addf(&id, "%s\n%s", t->path, v);
	free(v);
	if (b == LEAP_BACKEND_CUDA) {
		/* nvcc compiles host code with the gcc on PATH: it is part of the toolchain */
		char *gcc = leap_find_program("gcc");
		if (gcc) {
			char *const gv[] = {gcc, (char *)"--version", NULL};
			char *hv = leap_crun_query(c, gv, c->workdir);
			leap_buf_addf(&id, "\n%s\n%s", gcc, hv ? hv : "");
			free(hv);
			free(gcc);
		}
		if (c->o.arch) {
			t->arch = xstrdup(c->o.arch);
		} else {
			/* the first visible GPU's exact architecture (sm_90a on Hopper: see gpu.h) */
			struct leap_gpu g;
			leap_gpu_query(&g);
			const struct leap_gpu_dev *d = leap_gpu_device(&g, 0);
			char arch[32];
			if (d && d->cc_major) {
				leap_gpu_arch(d->cc_major, d->cc_minor, arch, sizeof arch);
				t->arch = xstrdup(arch);
			} else {
				t->arch = xstrdup(LEAP_DEFAULT_ARCH);
			}
			leap_gpu_free(&g);
		}
	}
	t->ident = leap_buf_detach(&id);
	leap_guard_roots(c, b);
}

/* Appends a copy of s to the NULL-terminated vector *v of *n strings. */
static void push(char ***v, size_t *n, size_t *cap, const char *s)
{
	xgrow((void **)v, cap, *n + 2, sizeof(char *));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

/* The compiler's fixed options, then the user's (see the man page). `shared`: link a shared
 * object; otherwise compile an object (-c). */
static void base_flags(const struct leap_compiler *c, enum leap_backend b, int shared, char ***v, size_t *n,
		       size_t *cap)
{
	if (b == LEAP_BACKEND_CUDA) {
		push(v, n, cap, shared ? "-shared" : "-c");
		push(v, n, cap, "-Xcompiler");
		push(v, n, cap, "-fPIC");
		push(v, n, cap, "-O3");
		char *a = leap_gpu_arch_flag(c->tools[b].arch);
		push(v, n, cap, a);
		free(a);
		for (size_t i = 0; i < c->o.n_nvcc_flags; i++)
			push(v, n, cap, c->o.nvcc_flags[i]);
	} else {
		/* -g1: line tables, so that a crash names the candidate's line (crash.h); the code
		 * is the same as without it */
		static const char *const fixed[] = {"-std=gnu11", "-O2", "-g1", "-fPIC", "-fopenmp", "-fmax-errors=20", "-Werror=implicit-function-declaration",
						    "-fdiagnostics-color=never", "-fdiagnostics-column-unit=byte"};
		push(v, n, cap, shared ? "-shared" : "-c");
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			push(v, n, cap, fixed[i]);
		for (size_t i = 0; i < c->o.n_cc_flags; i++)
			push(v, n, cap, c->o.cc_flags[i]);
	}
}

/* The full argv of a compiler run: the compiler, base flags, then `tail` (NULL-terminated). */
char **leap_tool_argv(const struct leap_compiler *c, enum leap_backend b, int shared, const char *const *tail)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	push(&v, &n, &cap, c->tools[b].path);
	base_flags(c, b, shared, &v, &n, &cap);
	for (size_t i = 0; tail[i]; i++)
		push(&v, &n, &cap, tail[i]);
	return v;
}

/* Hashes the toolchain and flags of backend b. */
void leap_tool_hash(const struct leap_compiler *c, enum leap_backend b, struct leap_hash *h)
{
	leap_hash_str(h, leap_backend_name(b));
	leap_hash_str(h, c->tools[b].ident);
	leap_hash_str(h, c->tools[b].arch);
	leap_hash_str(h, "include guard 1"); /* results from before the guard are not reused */
	/* nor results from compilers that could read the suite, where these cannot */
	leap_hash_str(h, c->ns && c->nhide ? "suite and /proc hidden 2" : "suite visible");
	char **v = NULL;
	size_t n = 0, cap = 0;
	base_flags(c, b, 1, &v, &n, &cap);
	for (size_t i = 0; i < n; i++)
		leap_hash_str(h, v[i]);
	leap_strv_free(v);
}

int leap_compile_toolchain(enum leap_backend b, const struct leap_compile_opts *o, struct leap_toolchain *tc,
			   char **err)
{
	memset(tc, 0, sizeof(*tc));
	struct leap_compiler c;
	memset(&c, 0, sizeof(c));
	c.o = *o;
	c.workdir = (char *)"/"; /* the queries read no file of ours */
	pthread_mutex_init(&c.run_lock, NULL);
	leap_tool_resolve(&c, b);
	struct leap_tool *t = &c.tools[b];
	int rc = 0;
	if (t->err) {
		*err = t->err;
		t->err = NULL;
		rc = -1;
	} else {
		/* the version line: after the path, the first line (gcc) or nvcc's "release" line */
		const char *v = strchr(t->ident, '\n');
		v = v ? v + 1 : t->ident;
		const char *rel = b == LEAP_BACKEND_CUDA ? strstr(v, "release") : NULL;
		if (rel)
			while (rel > v && rel[-1] != '\n')
				rel--;
		tc->version = xstrndup(rel ? rel : v, strcspn(rel ? rel : v, "\n"));
		tc->arch = t->arch ? xstrdup(t->arch) : NULL;
		char **fl = NULL;
		size_t n = 0, cap = 0;
		base_flags(&c, b, 1, &fl, &n, &cap);
		struct leap_buf f = {0};
		leap_buf_add(&f, "", 0);
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(fl[i], "-shared") || !strncmp(fl[i], "-fdiagnostics", 13) || !strncmp(fl[i], "-fmax-errors", 12))
				continue;
			leap_buf_addf(&f, "%s%s", f.len ? " " : "", fl[i]);
		}
		leap_strv_free(fl);
		tc->flags = leap_buf_detach(&f);
	}
	free(t->path);
	free(t->ident);
	free(t->arch);
	free(t->err);
	for (size_t i = 0; i < t->nroots; i++)
		free(t->roots[i]);
	free(t->roots);
	pthread_mutex_destroy(&c.run_lock);
	free(c.groups);
	return rc;
}

void leap_toolchain_free(struct leap_toolchain *tc)
{
	free(tc->version);
	free(tc->arch);
	free(tc->flags);
	memset(tc, 0, sizeof(*tc));
}
