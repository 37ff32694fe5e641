/* modimport.c - a suite of module tasks from PyTorch module files (leap-task --import). */
/*
 * A user with a folder of PyTorch modules in KernelBench's form gets leap tasks without
 * writing C: each module is copied into a task folder as module.py, and torch derives the
 * rest of task.json from it (the C entry's parameters, shrunk cases, bench, tolerance: the
 * `derive` job of runner/torchref.py). One Python process derives every module of an import,
 * since importing torch costs seconds. What torch refuses (a hub download, a random forward,
 * an output that ignores its inputs, a size no expression fits) is said per module, and its
 * folder is removed; what it derives is loaded back by the task loader, so an import never
 * leaves a task.json that leap would not load. Where that process ends early (a crash, the
 * memory killer: level 3's networks, one after another, take gigabytes), the module it was on
 * is refused saying so and another process goes on from the next.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/child.h"
#include "core/files.h"
#include "modimport.h"
#include "task.h"
#include "referee/torchref.h"
#include "core/util.h"
#include "referee/verify.h"
#include "core/banned.h"

extern char **environ;

struct mod {
	char *id, *dir;
	int level;
};

struct mods {
	struct mod *m;
	size_t n, cap;
	const char *suite;
};

/* A task id from a file name: its stem, each byte an id may not hold made '_'. */
static char *id_of(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (n > 3 && !strcmp(b + n - 3, ".py"))
		n -= 3;
	char *id = xstrndup(b, n > 128 ? 128 : n);
	for (char *p = id; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') || *p == '-' ||
		      *p == '_' || *p == '.'))
			*p = '_';
	if (id[0] == '.')
		id[0] = '_';
	return id;
}

/* KernelBench's level from a path's "levelN" folder, else 1. */
static int level_of(const char *path)
{
	const char *p = strstr(path, "level");
	while (p) {
		if (p[5] >= '1' && p[5] <= '9' && p[6] == '/')
			return p[5] - '0';
		p = strstr(p + 1, "level");
	}
	return 1;
}

/* Makes the task folder of `id` with module.py holding `src`. Returns 0, or -1 with *err. */
static int add_source(struct mods *ms, const char *id, const char *src, size_t len, int level, char **err)
{
	if (!leap_task_id_valid(id)) {
		*err = xasprintf("'%s' is not a valid task id", id);
		return -1;
	}
	for (size_t i = 0; i < ms->n; i++)
		if (!strcmp(ms->m[i].id, id)) {
			*err = xasprintf("two modules have the id '%s'", id);
			return -1;
		}
	char *dir = xasprintf("%s/%s", ms->suite, id);
	char *file = xasprintf("%s/module.py", dir);
	int rc = leap_mkdirs(dir) ? -1 : leap_write_file(file, src, len, err);
	if (rc && !*err)
		*err = xasprintf("%s: %s", dir, strerror(errno));
	free(file);
	if (rc) {
		free(dir);
		return -1;
	}
	xgrow((void **)&ms->m, &ms->cap, ms->n + 1, sizeof *ms->m);
	ms->m[ms->n++] = (struct mod){xstrdup(id), dir, level};
	return 0;
}

static int add_file(struct mods *ms, const char *path, char **err)
{
	size_t len = 0;
	char *src = leap_read_file(path, &len, err);
	if (!src)
		return -1;
	char *id = id_of(path);
	int rc = add_source(ms, id, src, len, level_of(path), err);
	free(id);
	free(src);
	return rc;
}

static int py_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' && n > 3 && !strcmp(e->d_name + n - 3, ".py");
}

/* Every .py file of a folder, in name order. */
static int add_dir(struct mods *ms, const char *path, char **err)
{
	struct dirent **es = NULL;
	int n = scandir(path, &es, py_file, alphasort);
	if (n < 0) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char *f = xasprintf("%s/%s", path, es[i]->d_name);
		if (!rc)
			rc = add_file(ms, f, err);
		free(f);
		free(es[i]);
	}
	free(es);
	return rc;
}

/* A JSON Lines file: one {"id", "source", "level"?} object a line. */
static int add_jsonl(struct mods *ms, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	long no = 0;
	int rc = 0;
	while (!rc && getline(&line, &cap, f) > 0) {
		no++;
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		const char *id = json_string_value(json_object_get(o, "id"));
		json_t *src = json_object_get(o, "source");
		json_t *lv = json_object_get(o, "level");
		if (!id || !json_is_string(src) || (lv && !json_is_integer(lv))) {
			*err = xasprintf("%s:%ld: want an object with \"id\" and \"source\" strings (and an integer "
					 "\"level\" or none)", path, no);
			rc = -1;
		} else {
			rc = add_source(ms, id, json_string_value(src), json_string_length(src),
					lv ? (int)json_integer_value(lv) : 1, err);
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
	return rc;
}

static int add_sources(struct mods *ms, char *const *sources, int n, char **err)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		const char *s = sources[i];
		size_t len = strlen(s);
		int rc;
		if (stat(s, &st)) {
			*err = xasprintf("%s: %s", s, strerror(errno));
			return -1;
		}
		if (S_ISDIR(st.st_mode))
			rc = add_dir(ms, s, err);
		else if (len > 6 && !strcmp(s + len - 6, ".jsonl"))
			rc = add_jsonl(ms, s, err);
		else
			rc = add_file(ms, s, err);
		if (rc)
			return -1;
	}
	return 0;
}

/* What ended a derive process that did not exit 0, for the module it was deriving. */
struct ended {
	int code, sig;
};

/* Runs `derive` on the modules from `from` on; returns its output (one JSON line per module
 * it answered), or NULL when it could not start. *end is {0, 0}, or what ended it early. */
static char *derive(const struct mods *ms, size_t from, struct ended *end, char **err)
{
	const char *py = leap_torch_python(err);
	char *libexec = py ? leap_libexec_dir() : NULL;
	char *script = py ? leap_torchref_script(libexec, err) : NULL;
	free(libexec);
	if (!script)
		return NULL;
	size_t n = ms->n - from;
	char **argv = xcalloc(n + 4, sizeof *argv);
	argv[0] = (char *)py;
	argv[1] = script;
	argv[2] = "derive";
	for (size_t i = 0; i < n; i++)
		argv[3 + i] = xasprintf("%s/module.py", ms->m[from + i].dir);
	int p[2];
	struct leap_buf out = {0};
	struct leap_child ch;
	leap_child_init(&ch);
	ch.argv = argv;
	ch.env = environ;
	ch.exec_what = "cannot start $LEAP_TORCH_PYTHON";
	ch.fd[0] = -1;
	ch.fd[2] = STDERR_FILENO;
	ch.nfd = 3;
	ch.fail_slot = 2;
	ch.fail_prefix = "leap-task: ";
	leap_child_limit(&ch, RLIMIT_DATA, LEAP_TORCH_DATA_BYTES, LEAP_TORCH_DATA_BYTES);
	int ok = !pipe(p);
	if (ok) {
		ch.fd[1] = p[1];
		ok = !leap_child_start(&ch);
		close(p[1]);
		ok = ok && !leap_read_fd(p[0], &out);
		close(p[0]);
		if (ch.pid > 0)
			leap_child_finish(&ch, -1);
		ok = ok && !ch.setup_error[0];
	}
	*end = (struct ended){ch.exit_code, ch.term_signal};
	if (!ok) {
		*err = ch.setup_error[0] ? xstrdup(ch.setup_error) : xasprintf("%s %s derive failed", py, script);
		leap_buf_free(&out);
	}
	for (size_t i = 0; i < n; i++)
		free(argv[3 + i]);
	free(argv);
	free(script);
	return ok ? (out.s ? leap_buf_detach(&out) : xstrdup("")) : NULL;
}

/* Writes what torch derived for module m as its task.json and loads it back. Returns the
 * result object of m. */
static json_t *write_task(const struct mod *m, json_t *d)
{
	const char *why = json_string_value(json_object_get(d, "refused"));
	char *err = NULL;
	if (!why) {
		json_object_set_new(d, "level", json_integer(m->level));
		char *path = xasprintf("%s/task.json", m->dir);
		if (json_dump_file(d, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER))
			err = xasprintf("%s: cannot write it", path);
		free(path);
		struct leap_task *t = err ? NULL : leap_task_load(m->dir, &err);
		leap_task_free(t);
	}
	json_t *r;
	if (why || err) {
		leap_remove_tree(m->dir);
		r = json_pack("{s:s,s:s}", "task", m->id, "refused", why ? why : err);
	} else {
		r = json_pack("{s:s,s:s}", "task", m->id, "dir", m->dir);
	}
	free(err);
	return r;
}

static void free_mods(struct mods *ms)
{
	for (size_t i = 0; i < ms->n; i++) {
		free(ms->m[i].id);
		free(ms->m[i].dir);
	}
	free(ms->m);
}

/* Runs one derive process from module *i on, appending a result per module it answered to
 * `res`; where the process ended early (a crash, the kernel's memory killer, an allocation
 * failure torch cannot report), the module it was deriving is refused saying so, and the
 * caller starts another from the next: one module's end is not the import's. Returns 0, or -1
 * when the process could not start. */
static int derive_from(struct mods *ms, size_t *i, json_t *res, char **err)
{
	struct ended end;
	char *out = derive(ms, *i, &end, err);
	if (!out)
		return -1;
	char *p = out, *nl;
	while (*i < ms->n && (nl = strchr(p, '\n'))) {
		*nl = 0;
		json_t *d = json_loads(p, 0, NULL);
		if (!json_is_object(d)) {
			json_decref(d);
			d = json_pack("{s:s}", "refused", "torch gave no answer for it");
		}
		json_array_append_new(res, write_task(&ms->m[(*i)++], d));
		json_decref(d);
		p = nl + 1;
	}
	free(out);
	if (*i < ms->n) {
		char *why = end.sig ? xasprintf("the torch process deriving it was ended by signal %d (%s)", end.sig,
						strsignal(end.sig))
				    : xasprintf("the torch process deriving it exited with status %d", end.code);
		json_t *d = json_pack("{s:s}", "refused", why);
		free(why);
		json_array_append_new(res, write_task(&ms->m[(*i)++], d));
		json_decref(d);
	}
	return 0;
}

json_t *leap_module_import(const char *suite, char *const *sources, int nsources, char **err)
{
	struct mods ms = {.suite = suite};
	if (leap_mkdirs(suite)) {
		*err = xasprintf("%s: %s", suite, strerror(errno));
		return NULL;
	}
	if (add_sources(&ms, sources, nsources, err)) {
		for (size_t i = 0; i < ms.n; i++)
			leap_remove_tree(ms.m[i].dir);
		free_mods(&ms);
		return NULL;
	}
	json_t *res = json_array();
	for (size_t i = 0; i < ms.n;)
		if (derive_from(&ms, &i, res, err)) {
			for (size_t j = i; j < ms.n; j++)
				leap_remove_tree(ms.m[j].dir);
			json_decref(res);
			res = NULL;
			break;
		}
	free_mods(&ms);
	return res;
}
