/* hand.c - one kernel by hand: a source file built exactly as the pipeline builds it.
 *
 * Someone debugging one kernel runs `leap-compile --task T FILE`, `leap-verify --task T
 * FILE` or `leap-bench --task T FILE` and trusts that the verdict is the one the pipeline
 * would give. The hand modes of leap-verify and leap-bench once built with lib/task/build.c (the
 * builder of the trusted reference and baseline), which knows nothing of leap-compile's
 * include guard, compile namespace, cache or diagnostics: a file that included the task's
 * reference.c passed there and was forbidden_include in the pipeline, and a failure printed
 * the raw log with temporary paths. So every hand mode comes here: the pipeline's compiler
 * settings and hidden directories, its cache (a hand build is a cache hit for the pipeline
 * and back), its diagnostics, and one rule for the backend of a file (its extension). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/build.h"
#include "core/cli.h"
#include "group/feedback.h"
#include "hand.h"
#include "core/jsonl.h"
#include "core/sig.h"
#include "task/unseen.h"
#include "core/banned.h"

void leap_compile_defaults(struct leap_compile_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout = 120;
	o->mem_limit = 8LL << 30;
	o->out_limit = 1LL << 30;
	o->max_diags = 50;
	o->reuse = 1;
}

int leap_source_backend(const char *file, const char *opt, enum leap_backend *b, char **err)
{
	if (opt) {
		if (!leap_backend_parse(opt, b))
			return 0;
		*err = xasprintf("unknown backend '%s' (cuda or cpu)", opt);
		return -1;
	}
	if (!leap_backend_by_ext(file, b))
		return 0;
	*err = xasprintf("%s: cannot tell the backend from the name (.c: cpu, .cu: cuda); give --backend",
			 strcmp(file, "-") ? file : "standard input");
	return -1;
}

char *leap_source_read(const char *file, char **err)
{
	int in = !strcmp(file, "-");
	FILE *fp = in ? stdin : fopen(file, "re");
	if (!fp) {
		*err = xasprintf("cannot read %s: %s", file, strerror(errno));
		return NULL;
	}
	struct leap_buf b = {0};
	char chunk[65536];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		leap_buf_add(&b, chunk, k);
	int bad = ferror(fp);
	int e = errno;
	if (!in)
		fclose(fp);
	if (bad) {
		leap_buf_free(&b);
		*err = xasprintf("cannot read %s: %s", in ? "standard input" : file, strerror(e));
		return NULL;
	}
	struct leap_buf clean = {0};
	leap_utf8_sanitize(&clean, b.s ? b.s : "", b.len);
	leap_buf_free(&b);
	for (size_t i = 0; i < clean.len; i++)
		if (!clean.s[i])
			clean.s[i] = ' '; /* as leap-compile does with a record's code */
	leap_buf_add(&clean, "", 0);
	return leap_buf_detach(&clean);
}

int leap_hand_open(struct leap_hand *h, const char *cache_dir, const char *tasks_dir, char **err)
{
	memset(h, 0, sizeof(*h));
	char *cdir = NULL;
	if (cache_dir[0] != '/') {
		char *cwd = realpath(".", NULL);
		if (!cwd) {
			*err = xasprintf("cannot find the working directory: %s", strerror(errno));
			return -1;
		}
		cdir = xasprintf("%s/%s", cwd, cache_dir);
		free(cwd);
	} else {
		cdir = xstrdup(cache_dir);
	}
	if (leap_cache_open(&h->cache, cdir, 5LL << 30, err)) {
		free(cdir);
		return -1;
	}
	struct leap_compile_opts o;
	leap_compile_defaults(&o);
	size_t nhide = 0;
	char **hide = leap_unseen(cdir, tasks_dir, LEAP_UNSEEN_COMPILER, &nhide);
	o.hide = (const char *const *)hide;
	o.nhide = nhide;
	int rc = leap_compiler_init(&h->comp, &o, &h->cache, err);
	leap_unseen_free(hide, nhide);
	free(cdir);
	if (rc) {
		leap_cache_close(&h->cache);
		return -1;
	}
	h->open = 1;
	return 0;
}

int leap_hand_compile(struct leap_hand *h, const struct leap_task *t, enum leap_backend b, const char *code,
		      struct leap_cresult *r, char **err)
{
	memset(r, 0, sizeof(*r));
	struct leap_variant *v = leap_compiler_variant(&h->comp, t, b, err);
	if (!v)
		return -1;
	char key[65];
	leap_compile_key(&h->comp, v, code, key);
	if (!leap_compile_lookup(&h->comp, v, key, r))
		leap_compile_run(&h->comp, v, code, key, r);
	if (r->status == LEAP_C_INTERNAL) {
		*err = xstrdup(r->message ? r->message : "the compile failed");
		return -1;
	}
	return 0;
}

void leap_hand_close(struct leap_hand *h)
{
	if (!h->open)
		return;
	leap_compiler_free(&h->comp);
	leap_cache_close(&h->cache);
	h->open = 0;
}

void leap_cresult_human(struct leap_buf *b, const char *label, const char *file, const char *task,
			enum leap_backend be, const struct leap_cresult *r)
{
	const char *bn = leap_backend_name(be), *sp = r->arch ? " " : "", *arch = r->arch ? r->arch : "";
	if (r->status == LEAP_C_OK)
		leap_buf_addf(b, "%s: %s (%s%s%s): ok, %.0f ms%s\n  artifact: %s\n", label, task, bn, sp, arch,
			      r->cached ? r->compiled_ms : r->ms, r->cached ? ", cached" : "", r->artifact);
	else
		leap_buf_addf(b, "%s: %s (%s%s%s): %s (%s): %s\n", label, task, bn, sp, arch,
			      r->status == LEAP_C_TIMEOUT ? "timeout" : "compile error", r->reason ? r->reason : "",
			      r->message ? r->message : "");
	size_t i;
	const json_t *d;
	json_array_foreach(r->diagnostics, i, d) {
		if (i >= 20)
			break;
		const char *w = leap_get_str(d, "where", NULL);
		long l = (long)leap_get_int(d, "line", 0), col = (long)leap_get_int(d, "col", 0);
		leap_buf_adds(b, "  ");
		if (w)
			leap_buf_addf(b, "%s: ", w);
		else if (l && col)
			leap_buf_addf(b, "%s:%ld:%ld: ", file ? file : "code", l, col);
		else if (l)
			leap_buf_addf(b, "%s:%ld: ", file ? file : "code", l);
		leap_buf_addf(b, "%s: %s\n", leap_get_str(d, "severity", "error"), leap_get_str(d, "message", ""));
		const char *x = leap_get_str(d, "excerpt", NULL);
		for (const char *p = x; p && *p;) { /* the quoted line and caret, indented */
			size_t k = strcspn(p, "\n");
			leap_buf_adds(b, "  ");
			leap_buf_add(b, p, k);
			leap_buf_add(b, "\n", 1);
			p += k + (p[k] == '\n');
		}
	}
}

/* Prints text[0..n) on stdout; dies when it cannot. */
static void put(const char *text, size_t n)
{
	if (n && fwrite(text, 1, n, stdout) != n)
		leap_die_errno("write error");
}

/* Ends the run on a caught signal: the compiler's temporaries go first. */
static void check_signal(struct leap_hand *h)
{
	int sig = leap_signal_caught();
	if (!sig)
		return;
	leap_hand_close(h);
	leap_signal_exit(sig);
}

/* Closes the hand compiler (its temporaries go), then dies with "FILE: MESSAGE". */
static void die_closing(struct leap_hand *h, const char *file, char *err)
{
	leap_hand_close(h);
	leap_die("%s%s%s", file ? file : "", file ? ": " : "", err);
}

/* Builds, verifies and (with `timer`) times one file; returns 1 when it did not pass. */
static int check_one(struct leap_verifier *v, struct leap_hand *h, const struct leap_task *t, const char *backend,
		     uint64_t seed, const char *file, leap_hand_timer timer, void *arg)
{
	char *err = NULL;
	enum leap_backend b;
	if (leap_source_backend(file, backend, &b, &err))
		die_closing(h, NULL, err);
	char *code = leap_source_read(file, &err);
	if (!code)
		die_closing(h, NULL, err);
	struct leap_cresult r;
	int rc = leap_hand_compile(h, t, b, code, &r, &err);
	check_signal(h);
	if (rc)
		die_closing(h, file, err);
	if (r.status != LEAP_C_OK) {
		struct leap_buf out = {0};
		leap_cresult_human(&out, file, file, t->id, b, &r);
		put(out.s, out.len);
		leap_buf_free(&out);
		leap_cresult_free(&r);
		free(code);
		return 1;
	}
	enum leap_status st;
	json_t *vj = leap_verify_artifact(v, t, b, r.artifact, seed, &st, &err);
	check_signal(h); /* the verdict may be the interruption's */
	if (!vj)
		die_closing(h, file, err);
	const char *status = leap_get_str(vj, "status", "?");
	int bad = strcmp(status, "pass") != 0;
	if (!timer) {
		printf("%s: %s (task %s, %s, seed %lld, %.1f ms)\n  %s\n", file, status, t->id, leap_backend_name(b),
		       (long long)leap_get_int(vj, "seed", -1), leap_get_num(vj, "ms", 0), leap_get_str(vj, "message", ""));
		struct leap_buf q = {0}; /* the line a crash report names */
		leap_feedback_quote(&q, code, (long)leap_get_int(json_object_get(vj, "crash"), "line", 0), 0);
		if (q.len)
			printf(" %s\n", q.s + 1);
		leap_buf_free(&q);
		const char *output = leap_get_str(vj, "output", NULL);
		if (output)
			printf("  output of the code:\n%s\n", output);
	} else if (bad) {
		printf("%s: %s, not timed\n  %s\n", file, status, leap_get_str(vj, "message", ""));
	} else {
		bad = timer(arg, file, t, b, r.artifact, seed) != 0;
		check_signal(h);
	}
	json_decref(vj);
	leap_cresult_free(&r);
	free(code);
	return bad;
}

int leap_hand_check(struct leap_verifier *v, struct leap_suite *suite, const char *task, const char *backend,
		    uint64_t seed, int n, char **files, leap_hand_timer timer, void *arg)
{
	char *err = NULL;
	const struct leap_task *t = leap_suite_get(suite, task, &err);
	if (!t)
		leap_die("%s", err);
	for (int i = 0; i < n; i++) { /* a wrong name stops the run before anything is built */
		enum leap_backend b;
		if (leap_source_backend(files[i], backend, &b, &err))
			leap_die("%s", err);
		if (leap_backend_of(b)->first_use)
			leap_backend_of(b)->first_use(&v->gpu); /* so does a driver too old for leap's runtime */
	}
	struct leap_hand h;
	if (leap_hand_open(&h, v->o.cache, suite->dir, &err))
		leap_die("%s", err);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= check_one(v, &h, t, backend, seed, files[i], timer, arg);
	leap_hand_close(&h);
	if (fflush(stdout) || ferror(stdout))
		leap_die_errno("write error");
	return bad ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
