/* compile.c - build a candidate into an artifact (abi.h) with cc or nvcc, under limits, through the cache. */
/*
 * One compile is one compiler run in a job directory of its own, under the process rules of
 * crun.c: the candidate's code is written next to the prelude (the task's types, included
 * first) and linked with the task's shim object into a shared library with -z defs, so that
 * a missing or mistyped entry point is a link error on the candidate, not a crash in the
 * runner. The shim is leap's own generated code: it is built once per (task, backend) and
 * process (leap_compile_shim, the first caller builds while others wait on cv) and reused
 * through the cache even under --no-cache.
 *
 * Every result, failures included, is published in the cache under a key that covers
 * everything that shapes the artifact (leap_compile_key, toolchain.c), by atomic rename, so a
 * killed compile never leaves a half-written artifact. What is not the candidate's fault (a
 * full disk, no compiler) is LEAP_C_INTERNAL and never cached; a limit verdict (timeout,
 * memory, output) is reused only under limits no larger than those that produced it.
 *
 * The verdict is decided in one order in leap_compile_run: the include guard (incguard.c)
 * first, since a candidate that read a forbidden file gets no artifact and no log whatever
 * the compiler said, then the timeout, success, death by a signal, and last the diagnostics
 * (classify). The batch mode (cbatch.c) builds on the helpers in compile_int.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "compile_int.h"
#include "core/child.h"
#include "crun.h"
#include "diag.h"
#include "extract.h"
#include "core/files.h"
#include "incguard.h"
#include "core/jsonl.h"
#include "shim.h"
#include "toolchain.h"
#include "core/util.h"
#include "core/banned.h"

#define STORED_LOG (64 << 10)   /* log kept in a cached result */

/* ---- the compiler: set-up, variants, keys ---- */

int leap_compiler_init(struct leap_compiler *c, const struct leap_compile_opts *o, struct leap_cache *cache,
		       char **err)
{
	memset(c, 0, sizeof(*c));
	c->o = *o;
	/* Limits inherited from the shell bound ours: the verdicts, their messages and the cache
	 * (a limit verdict is reused only under limits no larger) name the limit really applied. */
	c->o.mem_limit = leap_crun_limit(RLIMIT_AS, c->o.mem_limit);
	c->o.out_limit = leap_crun_limit(RLIMIT_FSIZE, c->o.out_limit);
	c->cache = cache;
	const char *tmp = getenv("TMPDIR");
	char *templ = xasprintf("%s/leap-compile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(templ)) {
		*err = xasprintf("cannot create a work directory %s: %s", templ, strerror(errno));
		free(templ);
		return -1;
	}
	c->workdir = templ;
	c->o.hide = NULL; /* the caller's; c->hide is our own copy */
	c->o.nhide = 0;
	leap_crun_hiding(c, o);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->run_lock, NULL);
	pthread_cond_init(&c->cv, NULL);
	return 0;
}

void leap_compiler_abort(struct leap_compiler *c)
{
	pthread_mutex_lock(&c->run_lock);
	c->aborting = 1;
	for (size_t i = 0; i < c->ngroups; i++)
		leap_child_kill(c->groups[i]); /* cc1, as, ld, ptxas... the whole group of each compiler */
	pthread_mutex_unlock(&c->run_lock);
	if (c->workdir)
		leap_remove_tree(c->workdir);
	if (c->cache)
		leap_cache_remove_own_tmp(c->cache);
}

void leap_compiler_free(struct leap_compiler *c)
{
	if (c->workdir)
		leap_remove_tree(c->workdir);
	free(c->workdir);
	for (int b = 0; b < LEAP_NBACKENDS; b++) {
		free(c->tools[b].path);
		free(c->tools[b].ident);
		free(c->tools[b].arch);
		free(c->tools[b].err);
		for (size_t i = 0; i < c->tools[b].nroots; i++)
			free(c->tools[b].roots[i]);
		free(c->tools[b].roots);
	}
	for (size_t i = 0; i < c->nvariants; i++) {
		struct leap_variant *v = c->variants[i];
		free(v->prelude);
		free(v->shim);
		free(v->proto);
		free(v->shim_obj);
		free(v->shim_err);
		free(v);
	}
	free(c->variants);
	for (size_t i = 0; i < c->nhide; i++)
		free(c->hide[i]);
	free(c->hide);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->run_lock);
	free(c->groups);
	pthread_cond_destroy(&c->cv);
	memset(c, 0, sizeof(*c));
}

struct leap_variant *leap_compiler_variant(struct leap_compiler *c, const struct leap_task *t, enum leap_backend b,
					   char **err)
{
	for (size_t i = 0; i < c->nvariants; i++)
		if (c->variants[i]->task == t && c->variants[i]->backend == b)
			return c->variants[i];
	leap_tool_resolve(c, b);
	if (c->tools[b].err) {
		*err = xstrdup(c->tools[b].err);
		return NULL;
	}
	struct leap_variant *v = xcalloc(1, sizeof(*v));
	v->task = t;
	v->backend = b;
	v->prelude = leap_shim_prelude(t, b);
	v->shim = leap_shim_source(t, b);
	v->proto = leap_task_prototype(t, b);
	struct leap_hash h;
	leap_hash_init(&h);
	leap_hash_str(&h, "leap-compile shim object 1");
	leap_tool_hash(c, b, &h);
	leap_hash_str(&h, v->prelude);
	leap_hash_str(&h, v->shim);
	leap_hash_final(&h, v->shim_key);
	xgrow((void **)&c->variants, &c->cap, c->nvariants + 1, sizeof(*c->variants));
	c->variants[c->nvariants++] = v;
	return v;
}

void leap_compile_key(const struct leap_compiler *c, const struct leap_variant *v, const char *code, char hex[65])
{
	struct leap_hash h;
	leap_hash_init(&h);
	leap_hash_str(&h, "leap-compile artifact 1");
	leap_tool_hash(c, v->backend, &h);
	leap_hash_str(&h, v->prelude);
	leap_hash_str(&h, v->shim);
	if (v->task->libraries) { /* what the candidate may include */
		char libs[32];
		snprintf(libs, sizeof libs, "libraries %x", v->task->libraries);
		leap_hash_str(&h, libs);
	}
	leap_hash_str(&h, code);
	leap_hash_final(&h, hex);
}

/* ---- results ---- */

const char *leap_compile_source_name(enum leap_backend b)
{
	return leap_backend_of(b)->source;
}

const char *leap_cstatus_name(enum leap_cstatus s)
{
	switch (s) {
	case LEAP_C_OK: return "ok";
	case LEAP_C_ERROR: return "error";
	case LEAP_C_TIMEOUT: return "timeout";
	default: return "internal";
	}
}

void leap_cresult_free(struct leap_cresult *r)
{
	free(r->reason);
	free(r->message);
	free(r->artifact);
	free(r->log);
	free(r->arch);
	json_decref(r->diagnostics);
	memset(r, 0, sizeof(*r));
}

void leap_cresult_copy(struct leap_cresult *dst, const struct leap_cresult *src)
{
	*dst = *src;
	dst->reason = src->reason ? xstrdup(src->reason) : NULL;
	dst->message = src->message ? xstrdup(src->message) : NULL;
	dst->artifact = src->artifact ? xstrdup(src->artifact) : NULL;
	dst->log = src->log ? xstrdup(src->log) : NULL;
	dst->arch = src->arch ? xstrdup(src->arch) : NULL;
	dst->diagnostics = src->diagnostics ? json_deep_copy(src->diagnostics) : NULL;
}

/* The texts of a full disk: strerror's of ENOSPC and EDQUOT, which the compilers print too. */
static const char *const full_disk[] = {"No space left on device", "Disk quota exceeded"};

/* The full-disk text in msg, or NULL. */
static const char *disk_full(const char *msg)
{
	for (size_t i = 0; msg && i < sizeof full_disk / sizeof full_disk[0]; i++) {
		const char *p = strstr(msg, full_disk[i]);
		if (p)
			return p;
	}
	return NULL;
}

/* A machine fault on the record (taking msg). A full disk is said in one way whichever step met
 * it (the compiler's output, the job directory, the cache), as the compiler's own messages say
 * it, so that a reader can tell it from a broken installation. */
static void internal(struct leap_cresult *r, char *msg)
{
	r->status = LEAP_C_INTERNAL;
	r->reason = xstrdup("internal");
	const char *p = disk_full(msg);
	if (p) {
		char *m = xasprintf("%.*sno space left on the device (is the cache directory or TMPDIR full?)",
				    (int)(p - msg), msg);
		free(msg);
		msg = m;
	}
	r->message = msg;
}

json_t *leap_cresult_json(const struct leap_cresult *r, size_t max_log)
{
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(leap_cstatus_name(r->status)));
	if (r->reason)
		json_object_set_new(o, "reason", json_string(r->reason));
	if (r->message)
		json_object_set_new(o, "message", json_string(r->message));
	json_object_set_new(o, "ms", json_real(r->ms));
	json_object_set_new(o, "cached", json_boolean(r->cached));
	if (r->cached)
		json_object_set_new(o, "compiled_ms", json_real(r->compiled_ms));
	if (r->hash[0])
		json_object_set_new(o, "hash", json_string(r->hash));
	if (r->artifact)
		json_object_set_new(o, "artifact", json_string(r->artifact));
	if (r->arch)
		json_object_set_new(o, "arch", json_string(r->arch));
	if (r->batch > 1)
		json_object_set_new(o, "batch", json_integer(r->batch));
	json_object_set_new(o, "diagnostics", r->diagnostics ? json_incref(r->diagnostics) : json_array());
	char *log = leap_log_cut(r->log ? r->log : "", max_log);
	json_object_set_new(o, "log", json_string(log));
	free(log);
	return o;
}

/* ---- one compile: the cache, the job directory, the shim, the verdict ---- */

/* Rounds to 0.01 ms, so that records stay short. */
double leap_compile_round_ms(double ms)
{
	return (double)(long long)(ms * 100.0 + 0.5) / 100.0;
}

static enum leap_cstatus parse_cstatus(const char *s)
{
	if (!strcmp(s, "ok"))
		return LEAP_C_OK;
	if (!strcmp(s, "timeout"))
		return LEAP_C_TIMEOUT;
	return LEAP_C_ERROR;
}

int leap_compile_lookup(struct leap_compiler *c, const struct leap_variant *v, const char *key,
			struct leap_cresult *r)
{
	if (!c->o.reuse)
		return 0;
	double t0 = leap_now();
	json_t *m = leap_cache_get(c->cache, key, "so");
	if (!m)
		return 0;
	enum leap_cstatus st = parse_cstatus(leap_get_str(m, "status", "error"));
	/* a limit verdict is only reused under limits no larger than those that produced it */
	const char *why = leap_get_str(m, "reason", "");
	if (((st == LEAP_C_TIMEOUT || !strcmp(why, "cpu_limit")) && leap_get_num(m, "timeout", 0) < c->o.timeout) ||
	    (!strcmp(why, "memory_limit") && leap_get_num(m, "memory", 0) < (double)c->o.mem_limit) ||
	    (!strcmp(why, "output_limit") && leap_get_num(m, "output", 0) < (double)c->o.out_limit)) {
		json_decref(m);
		return 0;
	}
	memset(r, 0, sizeof(*r));
	r->status = st;
	const char *s;
	if ((s = leap_get_str(m, "reason", NULL)))
		r->reason = xstrdup(s);
	if ((s = leap_get_str(m, "message", NULL)))
		r->message = xstrdup(s);
	if ((s = leap_get_str(m, "log", NULL)))
		r->log = leap_log_harness(s); /* idempotent; results cached before it still get it */
	if ((s = leap_get_str(m, "arch", NULL)))
		r->arch = xstrdup(s);
	json_t *d = json_object_get(m, "diagnostics");
	r->diagnostics = json_is_array(d) ? json_incref(d) : json_array();
	r->compiled_ms = leap_get_num(m, "ms", 0);
	r->cached = 1;
	memcpy(r->hash, key, 65);
	if (st == LEAP_C_OK)
		r->artifact = leap_cache_path(c->cache, key, "so");
	json_decref(m);
	(void)v;
	r->ms = leap_compile_round_ms((leap_now() - t0) * 1000.0);
	return 1;
}

/* Makes a new job directory under the work directory. */
char *leap_compile_jobdir(struct leap_compiler *c, char **err)
{
	pthread_mutex_lock(&c->lock);
	unsigned long n = ++c->jobs;
	pthread_mutex_unlock(&c->lock);
	char *d = xasprintf("%s/j%lu", c->workdir, n);
	if (mkdir(d, 0700)) {
		*err = xasprintf("cannot create %s: %s", d, strerror(errno));
		free(d);
		return NULL;
	}
	return d;
}

/* Scrubs a compiler's output of this machine's paths. */
char *leap_compile_scrub(const struct leap_compiler *c, const char *dir, const struct leap_buf *out)
{
	const char *home = getenv("HOME");
	const char *cuda = getenv("CUDA_HOME");
	char *cache_root = xstrdup(c->cache->dir);
	char *slash = strrchr(cache_root, '/');
	if (slash)
		*slash = '\0';
	const char *dirs[] = {dir, c->workdir, cache_root, cuda && *cuda ? cuda : "/usr/local/cuda",
			      home && *home && strcmp(home, "/") ? home : NULL};
	const char *repl[] = {"", "", "$LEAP_CACHE", "$CUDA_HOME", "~"};
	char *s = leap_log_scrub(out->s ? out->s : "", out->len, dirs, repl, sizeof(dirs) / sizeof(dirs[0]));
	free(cache_root);
	return s;
}

/* Makes sure v's shim object is built (once per process, shared through the cache). Returns
 * its private path (owned by v), or NULL with *err set. A failure is remembered for the rest
 * of the run, except one caused by a full disk, which the next call tries again. */
const char *leap_compile_shim(struct leap_compiler *c, struct leap_variant *v, char **err)
{
	pthread_mutex_lock(&c->lock);
	while (v->shim_state == 1)
		pthread_cond_wait(&c->cv, &c->lock);
	if (v->shim_state == 2 || v->shim_state == 3) {
		const char *p = v->shim_obj;
		if (!p)
			*err = xstrdup(v->shim_err);
		pthread_mutex_unlock(&c->lock);
		return p;
	}
	v->shim_state = 1;
	pthread_mutex_unlock(&c->lock);

	enum leap_backend b = v->backend;
	char *priv = xasprintf("%s/shim-%s.o", c->workdir, v->shim_key);
	char *fail = NULL;
	int transient = 0; /* the failure is the machine's (a full disk): not remembered */
	/* the shim is leap's own generated code: its object is reused even under --no-cache */
	json_t *m = leap_cache_get(c->cache, v->shim_key, "o");
	if (m && !strcmp(leap_get_str(m, "status", ""), "ok")) {
		char *cached = leap_cache_path(c->cache, v->shim_key, "o");
		if (leap_copy_file(cached, priv, &fail)) {
			free(fail);
			fail = NULL;
			json_decref(m);
			m = NULL; /* evicted meanwhile: build it */
		}
		free(cached);
	} else {
		json_decref(m);
		m = NULL;
	}
	if (!m) {
		char *dir = leap_compile_jobdir(c, &fail);
		if (dir) {
			char *pre = xasprintf("%s/%s", dir, LEAP_PRELUDE_FILE), *src = xasprintf("%s/%s", dir, leap_backend_of(b)->shim);
			char *obj = leap_cache_tmp(c->cache, "o");
			if (!leap_write_file(pre, v->prelude, strlen(v->prelude), &fail) &&
			    !leap_write_file(src, v->shim, strlen(v->shim), &fail)) {
				const char *tail[] = {"-include", LEAP_PRELUDE_FILE, leap_backend_of(b)->shim, "-o", obj, NULL};
				char **argv = leap_tool_argv(c, b, 0, tail);
				struct leap_crun r;
				if (!leap_crun(c, 1, argv, dir, c->o.timeout, c->o.mem_limit, c->o.out_limit, &r, &fail)) {
					if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status)) {
						char *log = leap_compile_scrub(c, dir, &r.out);
						int sig = WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0;
						if (r.timed_out)
							fail = xasprintf("the compiler ran longer than %g s on the generated "
									 "shim of task '%s'", c->o.timeout, v->task->id);
						else if (sig == SIGXFSZ)
							fail = xasprintf("the compiler could not write the shim of task '%s': "
									 "file size limit of %lld bytes exceeded (`ulimit -f`?)",
									 v->task->id, (long long)c->o.out_limit);
						else if (sig)
							fail = xasprintf("the compiler died of signal %d (%s) on the generated "
									 "shim of task '%s'", sig, strsignal(sig), v->task->id);
						else if (disk_full(log)) {
							fail = xasprintf("the compiler could not write the shim of task '%s': "
									 "no space left on the device (is the cache "
									 "directory full?)", v->task->id);
							transient = 1;
						} else
							fail = xasprintf("the generated shim of task '%s' does not compile with "
									 "these %s flags: %s",
									 v->task->id, leap_backend_name(b), log);
						free(log);
						unlink(obj);
					} else if (leap_copy_file(obj, priv, &fail)) {
						unlink(obj);
					} else {
						json_t *meta = json_pack("{s:s,s:s,s:s,s:f}", "status", "ok", "kind",
									 "shim", "task", v->task->id, "ms", r.ms);
						char *perr = NULL;
						if (leap_cache_put(c->cache, v->shim_key, obj, "o", meta, &perr)) {
							leap_warn("%s", perr);
							free(perr);
						}
						json_decref(meta);
					}
					leap_buf_free(&r.out);
				}
				leap_strv_free(argv);
			}
			free(obj);
			free(pre);
			free(src);
			leap_remove_tree(dir);
			free(dir);
		}
	}
	json_decref(m);
	transient = transient || disk_full(fail); /* a full work directory, not only the compiler's */
	pthread_mutex_lock(&c->lock);
	if (fail && transient) {
		v->shim_state = 0; /* the next record tries again: space may have been freed */
		*err = fail;
		free(priv);
	} else if (fail) {
		v->shim_state = 3;
		v->shim_err = fail;
		*err = xstrdup(fail);
		free(priv);
	} else {
		v->shim_state = 2;
		v->shim_obj = priv;
	}
	pthread_cond_broadcast(&c->cv);
	const char *p = v->shim_obj;
	pthread_mutex_unlock(&c->lock);
	return p;
}

/* 1 if some diagnostic's message contains `needle`. */
static int diag_has(const struct leap_diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].message, needle))
			return 1;
	return 0;
}

/* Classifies a failed compile and writes the one-line message; `c_out_limit` is the file-size
 * limit the compiler ran under. A machine fault (a full disk) makes the result internal. */
static void classify(struct leap_variant *v, const char *code, const struct leap_diags *d, const char *log,
		     int64_t c_out_limit, struct leap_cresult *r)
{
	const char *entry = v->task->entry;
	char *undef1 = xasprintf("undefined reference to `%s'", entry);
	char *undef2 = xasprintf("undefined reference to '%s'", entry);
	char *conflict = xasprintf("conflicting types for '%s'", entry);
	char *overload = xasprintf("overloaded function \"%s\" has \"C\" linkage", entry);
	char *incompat = xasprintf("declaration is incompatible with previous \"%s\"", entry);
	int undefined = diag_has(d, undef1) || diag_has(d, undef2);
	if ((undefined && leap_defines(code, entry)) || diag_has(d, conflict) || diag_has(d, overload) ||
	    diag_has(d, incompat)) {
		r->reason = xstrdup("wrong_signature");
		r->message = xasprintf("%s() is defined with another signature than the required prototype: %s",
				       entry, v->proto);
	} else if (undefined) {
		r->reason = xstrdup("missing_entry");
		r->message = xasprintf("the entry point %s() is not defined; define exactly: %s", entry, v->proto);
	} else if (strstr(log, "File size limit exceeded") || strstr(log, "File too large")) {
		/* a tool under the driver (ld, cc1, as) hit the file-size limit: a limit verdict,
		 * recompiled later under a larger limit, never cached as the candidate's fault */
		r->reason = xstrdup("output_limit");
		r->message = xasprintf("the compiler wrote a file larger than the limit of %lld bytes",
				       (long long)c_out_limit);
	} else if (disk_full(log)) {
		/* the machine's fault, not the candidate's: not cached, a later run compiles again */
		r->status = LEAP_C_INTERNAL;
		r->reason = xstrdup("internal");
		r->message = xstrdup("the compiler could not write its output: no space left on the device");
	} else if (strstr(log, "out of memory") || strstr(log, "virtual memory exhausted") ||
		   strstr(log, "bad_alloc") || strstr(log, "Cannot allocate memory")) {
		r->reason = xstrdup("memory_limit");
		r->message = xstrdup("the compiler ran out of its memory limit (a huge include, template or "
				     "unrolled loop?)");
	} else {
		const struct leap_diag *first = NULL;
		int link = 0;
		for (size_t i = 0; i < d->n && !first; i++)
			if (!strcmp(d->v[i].severity, "error"))
				first = &d->v[i];
		for (size_t i = 0; i < d->n; i++)
			link |= d->v[i].where && !strcmp(d->v[i].where, "link");
		r->reason = xstrdup(link && (!first || (first->where && !strcmp(first->where, "link"))) ? "link"
												: "compile");
		if (first && first->line > 0)
			r->message = first->col > 0 ? xasprintf("line %d, column %d: %s", first->line, first->col,
								first->message)
						    : xasprintf("line %d: %s", first->line, first->message);
		else if (first)
			r->message = first->where ? xasprintf("%s: %s", first->where, first->message)
						  : xstrdup(first->message);
		else
			r->message = xstrdup("the compiler failed without a diagnostic (see log)");
	}
	free(undef1);
	free(undef2);
	free(conflict);
	free(overload);
	free(incompat);
}

/* Stores the result in the cache (failures too, except internal ones). */
void leap_compile_publish(struct leap_compiler *c, const char *key, const char *tmp_artifact, struct leap_cresult *r,
			  const char *full_log)
{
	json_t *m = json_pack("{s:s,s:f,s:f,s:f,s:f}", "status", leap_cstatus_name(r->status), "ms", r->ms, "timeout",
			      c->o.timeout, "memory", (double)c->o.mem_limit, "output", (double)c->o.out_limit);
	if (r->reason)
		json_object_set_new(m, "reason", json_string(r->reason));
	if (r->message)
		json_object_set_new(m, "message", json_string(r->message));
	if (r->arch)
		json_object_set_new(m, "arch", json_string(r->arch));
	json_object_set(m, "diagnostics", r->diagnostics);
	char *log = leap_log_cut(full_log, STORED_LOG);
	json_object_set_new(m, "log", json_string(log));
	free(log);
	char *err = NULL;
	if (leap_cache_put(c->cache, key, tmp_artifact, "so", m, &err)) {
		if (r->status == LEAP_C_OK) {
			leap_cresult_free(r);
			internal(r, err);
			memcpy(r->hash, key, 65);
		} else {
			leap_warn("%s", err);
			free(err);
		}
	} else if (r->status == LEAP_C_OK) {
		r->artifact = leap_cache_path(c->cache, key, "so");
	}
	json_decref(m);
}


/* The verdict on one compiler run (r): what the include guard says first, then how the
 * compiler ended. *log may be withheld (replaced) when the candidate read a file it must not. */
static void judge(struct leap_compiler *c, struct leap_variant *v, const char *code, const char *dir,
		  const char *out, const struct leap_crun *run, const char *hidden, char **plog,
		  const struct leap_diags *dg, struct leap_cresult *r)
{
	enum leap_backend b = v->backend;
	char *log = *plog;
	struct stat st;
	int built = WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0 && stat(out, &st) == 0 && st.st_size > 0;
	char *bad = NULL;
	int deps = run->timed_out ? -1 : leap_guard_deps(c, b, dir, v->task->libraries, &bad);
	const char *named = leap_backend_of(b)->flags & LEAP_BK_LIBRARIES ? leap_guard_named_library(code, v->task->libraries)
									    : NULL;
	if (deps == 2 || (named && deps >= 0 && deps != 1)) {
		leap_guard_forbid_library(r, v->task, deps == 2 ? bad : named, deps == 2 ? "includes the headers of" : "names");
		free(bad);
	} else if (deps == 1) {
		/* the candidate read a file outside the system headers (a task's reference.c, a
		 * secret): no artifact, and no compiler output, which may quote that file */
		leap_guard_forbid(r, &log,
		       xasprintf("the candidate includes '%s', which is not a system or CUDA header: only those "
				 "may be included",
				 bad),
		       "included", bad);
		free(bad);
	} else if (!built && !run->timed_out && hidden) {
		/* it tried to read (#include, .incbin) a file the compiler cannot see: the same
		 * verdict as the include guard's, and the output is withheld likewise */
		leap_guard_forbid(r, &log,
		       xasprintf("the candidate reads '%s', which is hidden from the compiler (a task suite or "
				 "the reference builds): only system and CUDA headers may be included",
				 hidden),
		       "read", hidden);
	} else if (built && deps < 0) {
		r->status = LEAP_C_INTERNAL;
		r->reason = xstrdup("internal");
		r->message = xasprintf("the compiler wrote no dependency list (-MMD -MF %s): the include guard "
				       "cannot check the candidate",
				       LEAP_DEPS_FILE);
	} else if (run->timed_out) {
		r->status = LEAP_C_TIMEOUT;
		r->reason = xstrdup("timeout");
		r->message = xasprintf("the compiler ran longer than %g s and was stopped (a template, "
				       "unrolling or include bomb?)", c->o.timeout);
	} else if (built) {
		r->status = LEAP_C_OK;
	} else if (WIFSIGNALED(run->status)) {
		int sig = WTERMSIG(run->status);
		r->status = LEAP_C_ERROR;
		if (sig == SIGXCPU) {
			r->reason = xstrdup("cpu_limit");
			r->message = xasprintf("the compiler used more than %g s of CPU time", c->o.timeout + 5);
		} else if (sig == SIGXFSZ) {
			r->reason = xstrdup("output_limit");
			r->message = xasprintf("the compiler wrote a file larger than %lld bytes",
					       (long long)c->o.out_limit);
		} else {
			r->reason = xstrdup("compiler_crash");
			r->message = xasprintf("the compiler died of signal %d (%s)", sig, strsignal(sig));
		}
	} else {
		r->status = LEAP_C_ERROR;
		classify(v, code, dg, log, c->o.out_limit, r);
	}
	*plog = log;
}

/* The command line that builds candidate `v` into `out`: the dependency list for the include
 * guard, the prelude force-included, the candidate and the shim, then the backend's link
 * options and the vendor libraries the task allows (where the backend links them). */
static char **candidate_argv(struct leap_compiler *c, const struct leap_variant *v, const char *shim_obj,
			     const char *out)
{
	const struct leap_backend_ops *be = leap_backend_of(v->backend);
	const char *tail[32 + LEAP_LIB_COUNT] = {"-MMD", "-MF", LEAP_DEPS_FILE, "-include", LEAP_PRELUDE_FILE, be->source,
						  shim_obj, "-o", out};
	size_t n = 9;
	for (size_t i = 0; be->link[i] && n < 32; i++)
		tail[n++] = be->link[i];
	char libs[LEAP_LIB_COUNT][24];
	if (be->flags & LEAP_BK_LIBRARIES)
		leap_guard_libs(v->task, libs, tail + n);
	else
		tail[n] = NULL;
	return leap_tool_argv(c, v->backend, 1, tail);
}

void leap_compile_run(struct leap_compiler *c, struct leap_variant *v, const char *code, const char *key,
		      struct leap_cresult *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->hash, key, 65);
	enum leap_backend b = v->backend;
	if (c->tools[b].arch)
		r->arch = xstrdup(c->tools[b].arch);
	char *err = NULL;
	const char *shim_obj = leap_compile_shim(c, v, &err);
	if (!shim_obj) {
		internal(r, err);
		return;
	}
	char *dir = leap_compile_jobdir(c, &err);
	if (!dir) {
		internal(r, err);
		return;
	}
	char *pre = xasprintf("%s/%s", dir, LEAP_PRELUDE_FILE), *src = xasprintf("%s/%s", dir, leap_backend_of(b)->source);
	char *out = leap_cache_tmp(c->cache, "so");
	if (leap_write_file(pre, v->prelude, strlen(v->prelude), &err) || leap_write_file(src, code, strlen(code), &err)) {
		internal(r, err);
		goto done;
	}
	char **argv = candidate_argv(c, v, shim_obj, out);
	struct leap_crun run;
	int started = leap_crun(c, 1, argv, dir, c->o.timeout, c->o.mem_limit, c->o.out_limit, &run, &err);
	leap_strv_free(argv);
	if (started) {
		internal(r, err);
		goto done;
	}
	pthread_mutex_lock(&c->lock);
	c->runs++;
	pthread_mutex_unlock(&c->lock);
	r->ms = leap_compile_round_ms(run.ms);
	char *hidden = leap_guard_hidden(c, &run.out);
	char *log = leap_compile_scrub(c, dir, &run.out);
	if (run.dropped) {
		char *more = xasprintf("%s\n[leap: %zu more bytes of compiler output dropped]\n", log, run.dropped);
		free(log);
		log = more;
	}
	leap_buf_free(&run.out);
	struct leap_diags d = {0};
	struct leap_diag_files files = {leap_backend_of(b)->source, LEAP_PRELUDE_FILE, leap_backend_of(b)->shim};
	leap_diag_parse(log, strlen(log), &files, &d, c->o.max_diags ? c->o.max_diags : 50);
	r->diagnostics = leap_diags_json(&d);
	judge(c, v, code, dir, out, &run, hidden, &log, &d, r);
	leap_diags_free(&d);
	free(hidden);
	r->log = leap_log_harness(log); /* parsed above with the names the tools print */
	free(log);
	if (r->status != LEAP_C_INTERNAL) /* a machine fault is not the candidate's verdict */
		leap_compile_publish(c, key, r->status == LEAP_C_OK ? out : NULL, r, r->log);
	if (r->log && strlen(r->log) > STORED_LOG) {
		char *cut = leap_log_cut(r->log, STORED_LOG);
		free(r->log);
		r->log = cut;
	}
done:
	unlink(out);
	free(out);
	free(pre);
	free(src);
	leap_remove_tree(dir);
	free(dir);
}
