/* toolchain.c - find a backend's compiler, name it for the cache keys, and build its command lines. */
/*
 * A backend's toolchain is resolved on first use (leap_tool_resolve), not at start, so that
 * a cpu-only stream never needs nvcc: the compiler is looked up as the backend says (its
 * `find`: --nvcc, $NVCC, $CUDA_HOME, PATH; --cc, $CC, cc), asked for its --version, and the
 * backend adds the rest of its identity and its arch (`identify`: nvcc's host gcc, --arch or
 * the first visible GPU). The identity string
 * and every flag that shapes the code enter each cache key (leap_tool_hash), so that a
 * changed compiler or flag never reuses an artifact built by another.
 *
 * The fixed flags live in one function (base_flags, the backend's flags_of) that builds command lines, hashes keys
 * and tells a model which flags its code is compiled with (leap_compile_toolchain), so the
 * three cannot drift apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crun.h"
#include "core/files.h"
#include "incguard.h"
#include "toolchain.h"
#include "core/util.h"
#include "core/banned.h"

void leap_tool_resolve(struct leap_compiler *c, enum leap_backend b)
{
	const struct leap_backend_ops *be = leap_backend_of(b);
	struct leap_tool *t = &c->tools[b];
	if (t->resolved)
		return;
	t->resolved = 1;
	char *want = be->want(&c->o);
	t->path = leap_find_program(want);
	if (!t->path)
		t->err = be->missing(&c->o, want);
	free(want);
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
	struct leap_buf id = {0};
	leap_buf_addf(&id, "%s\n%s", t->path, v);
	free(v);
	if (be->host_compiler) { /* it compiles host code with another: part of the toolchain */
		char *host = leap_find_program(be->host_compiler);
		if (host) {
			char *const hv_argv[] = {host, (char *)"--version", NULL};
			char *hv = leap_crun_query(c, hv_argv, c->workdir);
			leap_buf_addf(&id, "\n%s\n%s", host, hv ? hv : "");
			free(hv);
			free(host);
		}
	}
	if (be->arch)
		t->arch = be->arch(&c->o);
	t->ident = leap_buf_detach(&id);
	leap_guard_roots(c, b);
}

/* The compiler's fixed options, then the user's (see the man page): the backend's. */
static void base_flags(const struct leap_compiler *c, enum leap_backend b, int shared, struct leap_argv *a)
{
	leap_backend_of(b)->flags_of(c, &c->tools[b], shared, a);
}

/* The full argv of a compiler run: the compiler, base flags, then `tail` (NULL-terminated). */
char **leap_tool_argv(const struct leap_compiler *c, enum leap_backend b, int shared, const char *const *tail)
{
	struct leap_argv a = {0};
	leap_argv_push(&a, c->tools[b].path);
	base_flags(c, b, shared, &a);
	for (size_t i = 0; tail[i]; i++)
		leap_argv_push(&a, tail[i]);
	return a.v;
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
	struct leap_argv a = {0};
	base_flags(c, b, 1, &a);
	for (size_t i = 0; i < a.n; i++)
		leap_hash_str(h, a.v[i]);
	leap_strv_free(a.v);
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
		/* the version line: after the path, the first line, or the line of the backend's
		 * version mark (nvcc's "release") */
		const char *v = strchr(t->ident, '\n'), *mark = leap_backend_of(b)->version_mark;
		v = v ? v + 1 : t->ident;
		const char *rel = mark ? strstr(v, mark) : NULL;
		if (rel)
			while (rel > v && rel[-1] != '\n')
				rel--;
		tc->version = xstrndup(rel ? rel : v, strcspn(rel ? rel : v, "\n"));
		tc->arch = t->arch ? xstrdup(t->arch) : NULL;
		struct leap_argv a = {0};
		base_flags(&c, b, 1, &a);
		char **fl = a.v;
		struct leap_buf f = {0};
		leap_buf_add(&f, "", 0);
		for (size_t i = 0; i < a.n; i++) {
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
