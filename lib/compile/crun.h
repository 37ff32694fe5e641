/* crun.h - run one compiler process under limits, its output captured, the suites hidden from it. */
#ifndef LEAP_CRUN_H
#define LEAP_CRUN_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "core/util.h"

/* What one run of a program left behind. */
struct leap_crun {
	int status;        /* wait status */
	int timed_out;
	double ms;
	struct leap_buf out; /* stdout and stderr together, at most 1 MiB */
	size_t dropped;      /* bytes beyond that */
};

/* Runs argv[0] (an absolute path) in `dir` under c's process rules (see crun.c): the clean
 * environment, its own process group (registered in c until reaped, so that
 * leap_compiler_abort kills it), stdin from /dev/null, output captured, limits `mem` and
 * `fsize` (bytes; 0: none), CPU time and `timeout` seconds of wall time. `isolate`: in a mount
 * namespace where c->hide is hidden, when c->ns. Returns 0 with *r filled (free r->out), or -1
 * with a new message in *err when the program could not be started at all. */
int leap_crun(struct leap_compiler *c, int isolate, char *const argv[], const char *dir, double timeout,
	      int64_t mem, int64_t fsize, struct leap_crun *r, char **err);

/* Runs a short query (--version, nvidia-smi; not isolated) and returns its output, or NULL. */
char *leap_crun_query(struct leap_compiler *c, char *const argv[], const char *dir);

/* The limit `want` (bytes; 0: none) of resource `res` as a child can really get it: no more
 * than this process's hard limit. */
int64_t leap_crun_limit(int res, int64_t want);

/* Fills c->hide with the canonical, existing directories of o->hide that can be hidden
 * without breaking the compilers, and c->ns with the kind of namespace this system allows.
 * Needs c->workdir and c->cache. Never fails: what cannot be hidden is a warning. */
void leap_crun_hiding(struct leap_compiler *c, const struct leap_compile_opts *o);

#endif
