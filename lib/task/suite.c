/* suite.c - the tasks of a task root: its suites, finding a task by id, listing a suite. */
/*
 * A root holds leap's own task folders and suite folders of tasks (task.h says how an id is
 * looked up across them). Tasks are loaded by id on first use and kept for the process: a
 * stream of records names a few tasks many times. This file only finds folders and keeps
 * what it loaded; reading a task is leap_task_load's, which never needs the suite: the suite
 * sits on top of the loader, not beside it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "core/util.h"
#include "core/banned.h"

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
