/* incguard.h - the include guard: what a candidate's compile may read, and the verdicts when it reads more. */
#ifndef LEAP_INCGUARD_H
#define LEAP_INCGUARD_H

#include "compiler.h"
#include "core/util.h"

/* The dependency list every compile of a candidate writes in its job directory (-MMD -MF). */
#define LEAP_DEPS_FILE "leap_deps.d"

/* Computes c->tools[b].roots: the directories whose files a candidate may include with
 * backend b's compiler (c->tools[b].path resolved). Never fails. */
void leap_guard_roots(struct leap_compiler *c, enum leap_backend b);

/* 1 if the canonical path p lies in directory `root` (canonical) or is it. */
int leap_path_under(const char *p, const char *root);

/* Checks LEAP_DEPS_FILE in job directory `dir` against backend b's roots and the vendor
 * libraries `allowed`. Returns 0 when all is well, 1 with *bad the first other file, 2 with
 * *bad the first library not allowed (both newly allocated), -1 when there is no list. */
int leap_guard_deps(const struct leap_compiler *c, enum leap_backend b, const char *dir, unsigned allowed,
		    char **bad);

/* The first vendor library outside `allowed` whose file name `code` spells, or NULL. */
const char *leap_guard_named_library(const char *code, unsigned allowed);

/* Writes "-lcublas"... for each library t allows into libs and points at[0..] to them, then
 * a NULL (at has room for LEAP_LIB_COUNT + 1). */
void leap_guard_libs(const struct leap_task *t, char libs[][24], const char **at);

/* Makes r a compile_error library_not_allowed for `lib` (`how`: "names", "includes the
 * headers of"). */
void leap_guard_forbid_library(struct leap_cresult *r, const struct leap_task *t, const char *lib, const char *how);

/* The first path of a hidden directory (c->hide, /proc) that the raw compiler output `out`
 * says could not be read, newly allocated, or NULL. */
char *leap_guard_hidden(const struct leap_compiler *c, const struct leap_buf *out);

/* Makes r a compile_error forbidden_include with `message` (taken over), no diagnostics, and
 * *log replaced by a note that the candidate `verb` `path`. */
void leap_guard_forbid(struct leap_cresult *r, char **log, char *message, const char *verb, const char *path);

#endif
