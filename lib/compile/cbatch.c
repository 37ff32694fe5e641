/* cbatch.c - compile several cuda candidates in one translation unit, one artifact each (--batch). */
/*
 * nvcc's fixed cost (its front end, the host compiler, the CUDA headers) dwarfs a small
 * kernel's, so candidates of one (task, backend) can share a translation unit: each goes in
 * a namespace of its own with its entry point renamed (leap_bI_ENTRY), its includes hoisted
 * and its macros undefined after it, and one artifact per candidate is linked from the shared
 * object and the shim, the entry bound by --defsym. Only code that cannot reach outside its
 * namespace is batched (screen): no directives but #include <...>, #define and #pragma
 * unroll, no constructors, asm, sections or __LINE__.
 *
 * The batch is an optimisation, never a verdict: a candidate the compiler's errors name is
 * dropped and the rest retried once; errors it cannot attribute, a file outside the include
 * guard's roots, or a dynamic initializer in the object (it would run in every artifact)
 * abandon the batch. Whoever is not done is compiled alone by leap_compile_run, which gives
 * it its own diagnostics and verdict.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "compile_int.h"
#include "crun.h"
#include "diag.h"
#include "core/files.h"
#include "incguard.h"
#include "toolchain.h"
#include "core/util.h"
#include "core/banned.h"

/* 1 if `word` occurs in s as a whole identifier. */
static int has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
		int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

/* The batch screen (see leap_compile_batchable). Appends "#undef NAME" for each macro the
 * code defines to `undefs` when not NULL. */
static int screen(const char *code, struct leap_buf *undefs)
{
	static const char *const banned[] = {"constructor", "destructor", "asm", "__asm", "__asm__", "section",
					     "_Pragma", "__COUNTER__", "__LINE__", "__FILE__", "init_priority",
					     "leap_entry", "leap_abi_version"};
	for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
		if (has_word(code, banned[i]))
			return 0;
	int defined = 0, cont = 0;
	for (const char *p = code; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int was_cont = cont;
		cont = n && p[n - 1] == '\\';
		const char *q = p;
		while (q < p + n && (*q == ' ' || *q == '\t'))
			q++;
		if (!was_cont && q < p + n && *q == '#') {
			q++;
			while (q < p + n && (*q == ' ' || *q == '\t'))
				q++;
			if (!strncmp(q, "include", 7)) {
				const char *r = q + 7;
				while (r < p + n && (*r == ' ' || *r == '\t'))
					r++;
				if (defined || *r != '<')
					return 0;
			} else if (!strncmp(q, "define", 6) && (q[6] == ' ' || q[6] == '\t')) {
				const char *r = q + 6;
				while (*r == ' ' || *r == '\t')
					r++;
				const char *s = r;
				while (isalnum((unsigned char)*s) || *s == '_')
					s++;
				if (s == r)
					return 0;
				if (undefs)
					leap_buf_addf(undefs, "#undef %.*s\n", (int)(s - r), r);
				defined = 1;
			} else if (!strncmp(q, "pragma", 6)) {
				const char *r = q + 6;
				while (*r == ' ' || *r == '\t')
					r++;
				if (strncmp(r, "unroll", 6) && strncmp(r, "nounroll", 8))
					return 0;
			} else {
				return 0;
			}
		}
		p = e ? e + 1 : p + n;
	}
	return 1;
}

int leap_compile_batchable(const char *code)
{
	return screen(code, NULL);
}

/* The prototype of v with the entry point renamed to leap_bI_ENTRY. */
static char *renamed_proto(const struct leap_variant *v, size_t i)
{
	const char *entry = v->task->entry;
	size_t n = strlen(entry);
	for (const char *p = strstr(v->proto, entry); p; p = strstr(p + 1, entry))
		if ((p == v->proto || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) && p[n] == '(')
			return xasprintf("%.*sleap_b%zu_%s", (int)(p - v->proto), v->proto, i, p);
	return xstrdup(v->proto);
}

/* 1 when the line p[0..len) is an #include directive (spaces and '#' before the word). */
static int is_include(const char *p, size_t len)
{
	const char *q = p;
	while (q < p + len && (*q == ' ' || *q == '\t' || *q == '#'))
		q++;
	return q > p && memchr(p, '#', (size_t)(q - p)) && (size_t)(p + len - q) >= 7 && !strncmp(q, "include", 7);
}

/* Writes the batch translation unit of the candidates idx[0..n). */
static char *batch_source(const struct leap_variant *v, const char *const *codes, const size_t *idx, size_t n)
{
	struct leap_buf s = {0}, inc = {0};
	leap_buf_add(&inc, "", 0);
	for (size_t k = 0; k < n; k++)
		for (const char *p = codes[idx[k]]; *p;) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			if (is_include(p, len)) {
				char *line = xasprintf("%.*s\n", (int)len, p);
				if (!strstr(inc.s, line))
					leap_buf_adds(&inc, line);
				free(line);
			}
			p = e ? e + 1 : p + len;
		}
	leap_buf_adds(&s, "/* leap batch */\n");
	leap_buf_adds(&s, inc.s);
	leap_buf_free(&inc);
	const char *entry = v->task->entry;
	for (size_t k = 0; k < n; k++) {
		char *proto = renamed_proto(v, k);
		struct leap_buf undefs = {0};
		leap_buf_add(&undefs, "", 0);
		screen(codes[idx[k]], &undefs);
		leap_buf_addf(&s, "%s\nnamespace leap_b%zu {\n%s\n#define %s leap_b%zu_%s\n#line 1 \"c%zu.cu\"\n", proto, k,
			      proto, entry, k, entry, k);
		for (const char *p = codes[idx[k]]; *p;) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			if (!is_include(p, len))
				leap_buf_add(&s, p, len); /* includes were hoisted; keep the line count */
			leap_buf_add(&s, "\n", 1);
			p = e ? e + 1 : p + len;
		}
		leap_buf_addf(&s, "}\n#undef %s\n%s", entry, undefs.s);
		leap_buf_free(&undefs);
		free(proto);
	}
	return leap_buf_detach(&s);
}

/* Runs a compiler command in `dir`; returns 1 when it exited 0 within the limits, with the
 * scrubbed output in *log (may be NULL) and the wall time in *ms. */
static int run_ok(struct leap_compiler *c, char **argv, const char *dir, char **log, double *ms)
{
	struct leap_crun r;
	char *err = NULL;
	if (leap_crun(c, 1, argv, dir, c->o.timeout, c->o.mem_limit, c->o.out_limit, &r, &err)) {
		free(err);
		return 0;
	}
	int ok = !r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
	if (log)
		*log = leap_compile_scrub(c, dir, &r.out);
	if (ms)
		*ms = r.ms;
	leap_buf_free(&r.out);
	return ok;
}

/* Drops from idx[0..*m) the candidates (c<k>.cu) an error in the batch's log names. Returns
 * how many were dropped. */
static size_t drop_named(const char *log, size_t *idx, size_t *m)
{
	struct leap_diags d = {0};
	struct leap_diag_files f = {NULL, LEAP_PRELUDE_FILE, NULL};
	leap_diag_parse(log, strlen(log), &f, &d, 1000);
	size_t keep = 0, named = 0;
	for (size_t k = 0; k < *m; k++) {
		char *name = xasprintf("c%zu.cu", k);
		int bad = 0;
		for (size_t j = 0; j < d.n; j++)
			bad |= d.v[j].where && !strcmp(d.v[j].where, name) && !strcmp(d.v[j].severity, "error");
		free(name);
		named += bad;
		if (!bad)
			idx[keep++] = idx[k];
	}
	leap_diags_free(&d);
	*m = keep;
	return named;
}

/* 1 when nm finds no dynamic initializer in obj (one would run in every artifact linked). */
static int no_initializers(struct leap_compiler *c, char *nm, const char *obj, const char *dir)
{
	char *const nmv[] = {nm, (char *)"-P", (char *)obj, NULL};
	struct leap_crun nr;
	char *nerr = NULL;
	if (leap_crun(c, 1, nmv, dir, 60, 0, 0, &nr, &nerr)) {
		free(nerr);
		return 0;
	}
	int clean = !nr.timed_out && WIFEXITED(nr.status) && WEXITSTATUS(nr.status) == 0 &&
		    !strstr(nr.out.s, "_GLOBAL__sub_I") && !strstr(nr.out.s, ".init_array");
	leap_buf_free(&nr.out);
	return clean;
}

/* Links candidate k of the compiled batch (its entry point renamed leap_b<k>_ENTRY) into an
 * artifact of its own for each of idx[0..m), publishing each that links; done[i] marks them. */
static void link_each(struct leap_compiler *c, struct leap_variant *v, const char *shim_obj, const char *dir,
		      double ms, const size_t *idx, size_t m, const char *const *keys, struct leap_cresult *r, int *done)
{
	enum leap_backend b = v->backend;
	for (size_t k = 0; k < m; k++) {
		size_t i = idx[k];
		char *out = leap_cache_tmp(c->cache, "so");
		char *defsym = xasprintf("--defsym=%s=leap_b%zu_%s", v->task->entry, k, v->task->entry);
		char libs[LEAP_LIB_COUNT][24];
		const char *lt[9 + LEAP_LIB_COUNT] = {"batch.o", shim_obj, "-o", out, "-Xlinker", "-z,defs", "-Xlinker", defsym,
						      NULL};
		leap_guard_libs(v->task, libs, lt + 8);
		char **lv = leap_tool_argv(c, b, 1, lt);
		double lms = 0;
		int linked = run_ok(c, lv, dir, NULL, &lms);
		leap_strv_free(lv);
		free(defsym);
		if (linked) {
			memset(&r[i], 0, sizeof(r[i]));
			memcpy(r[i].hash, keys[i], 65);
			r[i].arch = xstrdup(c->tools[b].arch);
			r[i].status = LEAP_C_OK;
			r[i].ms = leap_compile_round_ms(ms / (double)m + lms);
			r[i].batch = (int)m;
			r[i].diagnostics = json_array();
			r[i].log = xstrdup("");
			leap_compile_publish(c, keys[i], out, &r[i], "");
			done[i] = r[i].status == LEAP_C_OK;
			if (!done[i])
				leap_cresult_free(&r[i]);
		}
		unlink(out);
		free(out);
	}
}

void leap_compile_batch(struct leap_compiler *c, struct leap_variant *v, size_t n, const char *const *codes,
			const char *const *keys, struct leap_cresult *r, int *done)
{
	enum leap_backend b = v->backend;
	for (size_t i = 0; i < n; i++)
		done[i] = 0;
	if (!(leap_backend_of(b)->flags & LEAP_BK_BATCH) || n < 2)
		return;
	char *err = NULL;
	const char *shim_obj = leap_compile_shim(c, v, &err);
	char *nm = leap_find_program("nm");
	char *dir = shim_obj && nm ? leap_compile_jobdir(c, &err) : NULL;
	free(err);
	if (!dir) {
		free(nm);
		return;
	}
	size_t *idx = xcalloc(n, sizeof(size_t)), m = 0;
	for (size_t i = 0; i < n; i++) /* one naming a library the task forbids: alone, where it is refused */
		if (screen(codes[i], NULL) && !leap_guard_named_library(codes[i], v->task->libraries))
			idx[m++] = i;
	char *pre = xasprintf("%s/%s", dir, LEAP_PRELUDE_FILE), *src = xasprintf("%s/batch.cu", dir);
	char *obj = xasprintf("%s/batch.o", dir);
	char *werr = NULL;
	if (leap_write_file(pre, v->prelude, strlen(v->prelude), &werr)) {
		free(werr);
		m = 0;
	}
	for (int attempt = 0; attempt < 2 && m >= 2; attempt++) {
		char *text = batch_source(v, codes, idx, m);
		if (leap_write_file(src, text, strlen(text), &werr)) {
			free(werr);
			free(text);
			break;
		}
		free(text);
		const char *tail[] = {"-MMD", "-MF", LEAP_DEPS_FILE, "-include", LEAP_PRELUDE_FILE, "batch.cu", "-o", obj, NULL};
		char **argv = leap_tool_argv(c, b, 0, tail);
		char *log = NULL;
		double ms = 0;
		int ok = run_ok(c, argv, dir, &log, &ms);
		leap_strv_free(argv);
		if (!ok) {
			/* drop the candidates the errors name and try the rest once more */
			size_t named = drop_named(log, idx, &m);
			free(log);
			if (!named)
				break; /* errors the batch cannot attribute: everyone alone */
			continue;
		}
		free(log);
		/* a file outside the system headers: everyone alone, where the guard names the culprit */
		char *bad = NULL;
		if (leap_guard_deps(c, b, dir, v->task->libraries, &bad)) {
			free(bad);
			break;
		}
		/* a dynamic initializer of one candidate would run in every artifact: not batched */
		if (!no_initializers(c, nm, obj, dir))
			break;
		pthread_mutex_lock(&c->lock);
		c->runs++;
		pthread_mutex_unlock(&c->lock);
		link_each(c, v, shim_obj, dir, ms, idx, m, keys, r, done);
		break;
	}
	free(idx);
	free(pre);
	free(src);
	free(obj);
	free(nm);
	leap_remove_tree(dir);
	free(dir);
}

