/* unseen.c - what a candidate must not see: one list for the compilers and the runners.
 *
 * The compile namespace (lib/compile.c) and the run sandbox (lib/sandbox.c) each cover the
 * directories of this list with an empty read-only tmpfs. They once kept lists of their own,
 * and the lists differed (the runners hid the suite in use and the cache, the compilers eight
 * places), so a place added to one was missing from the other. Both now take this list; what
 * differs between them is said here, with why. */
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "cli.h"
#include "unseen.h"
#include "util.h"
#include "banned.h"

/* Appends `d` (taken over; may be NULL) to the vector v[0..*n), made canonical: the sandbox
 * mounts over it after changing its directory, and a directory reached by two names is one.
 * A path that does not exist (or is named twice) is dropped: there is nothing to hide. */
static void add_dir(char ***v, size_t *n, char *d)
{
	char *real = d ? realpath(d, NULL) : NULL;
	free(d);
	if (!real)
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], real)) {
			free(real);
			return;
		}
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = real;
}

/* Adds the cache `dir` (NULL: none): the whole of it for a runner; its reference builds for a
 * compiler, which writes the candidates' outputs into the rest. */
static void add_cache(char ***v, size_t *n, const char *dir, enum leap_unseen_for who)
{
	if (!dir)
		return;
	if (who == LEAP_UNSEEN_RUNNER) {
		if (leap_mkdirs(dir))
			leap_warn_errno("cannot create %s", dir);
		add_dir(v, n, xstrdup(dir));
		return;
	}
	char *arts = xasprintf("%s/artifacts", dir);
	if (leap_mkdirs(arts))
		leap_warn_errno("cannot create %s", arts);
	add_dir(v, n, arts);
}

char **leap_unseen(const char *cache_dir, const char *tasks_dir, enum leap_unseen_for who, size_t *n)
{
	char **v = NULL;
	*n = 0;
	add_cache(&v, n, cache_dir, who);
	char *def_cache = leap_cache_dir();
	if (def_cache && (!cache_dir || strcmp(def_cache, cache_dir)))
		add_cache(&v, n, def_cache, who);
	free(def_cache);
	if (tasks_dir)
		add_dir(&v, n, xstrdup(tasks_dir));
	add_dir(&v, n, leap_tasks_dir(NULL));
	const char *env_tasks = getenv("LEAP_TASKS");
	if (env_tasks && *env_tasks)
		add_dir(&v, n, xstrdup(env_tasks));
	char *exe = leap_exe_dir();
	if (exe) {
		add_dir(&v, n, xasprintf("%s/../share/leap/tasks", exe));
		add_dir(&v, n, xasprintf("%s/../tasks", exe));
	}
	free(exe);
	return v;
}

void leap_unseen_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
