/* unseen.h - what a candidate must not see: one list for the compilers and the runners. */
#ifndef LEAP_UNSEEN_H
#define LEAP_UNSEEN_H

#include <stddef.h>

/* Who the list is for. The compilers write their outputs into the cache, so they lose only its
 * reference builds (CACHE/artifacts); a runner loses the whole cache. */
enum leap_unseen_for { LEAP_UNSEEN_COMPILER, LEAP_UNSEEN_RUNNER };

/* The directories a candidate must not read (SECURITY.md), for `who`: the suite in use
 * (`tasks_dir`), every other place a suite is looked for ($LEAP_TASKS, the bundled suite beside
 * the program, $PREFIX/share/leap/tasks), and the cache `cache_dir` and the default cache (for
 * the compilers only their `artifacts`, made now so that one made later is hidden too). This is
 * the one place that decides it: leap-compile, leap-verify, leap-bench and the hand modes call
 * it; the run sandbox also builds its minimal root without them. Returns a new vector of *n
 * new strings (free with leap_unseen_free). */
char **leap_unseen(const char *cache_dir, const char *tasks_dir, enum leap_unseen_for who, size_t *n);

/* Frees what leap_unseen returned. */
void leap_unseen_free(char **v, size_t n);

#endif
