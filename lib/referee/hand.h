/* hand.h - one kernel by hand: a source file built exactly as the pipeline builds it. */
#ifndef LEAP_HAND_H
#define LEAP_HAND_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "compile/cache.h"
#include "compile/compile.h"
#include "task/task.h"
#include "core/util.h"
#include "verify.h"

/* The compile settings of the pipeline (leap-compile's defaults): 120 s and 8 GiB per
 * compiler run, 1 GiB of output, 50 diagnostics, cached results reused. */
void leap_compile_defaults(struct leap_compile_opts *o);

/* The backend of a source file given by hand: `opt` (--backend) when not NULL, else from the
 * name: .c is cpu, .cu is cuda. Returns 0, or -1 with a new message in *err (an unknown
 * backend name; a name that says neither, such as '-' for standard input). */
int leap_source_backend(const char *file, const char *opt, enum leap_backend *b, char **err);

/* Reads a source file ('-': standard input) as a candidate's code, the way leap-compile
 * reads it: bytes that are not UTF-8 become U+FFFD and NUL bytes spaces. Returns a new
 * string, or NULL with a new message in *err. */
char *leap_source_read(const char *file, char **err);

/* The pipeline's compiler for a program that builds files by hand. */
struct leap_hand {
	struct leap_cache cache;
	struct leap_compiler comp;
	int open;
};

/* Opens the cache `cache_dir` (made absolute; 5 GiB bound) and a compiler with the
 * pipeline's settings, hiding leap_unseen(cache_dir, tasks_dir, LEAP_UNSEEN_COMPILER). Returns 0, or -1
 * with a new message in *err. */
int leap_hand_open(struct leap_hand *h, const char *cache_dir, const char *tasks_dir, char **err);

/* Builds `code` as a candidate of `t` on `b` through the cache, as leap-compile does, and
 * fills *r (free with leap_cresult_free). Returns 0; -1 with a new message in *err when leap
 * could not do its job (no compiler for the backend, a full disk: r->status internal). */
int leap_hand_compile(struct leap_hand *h, const struct leap_task *t, enum leap_backend b, const char *code,
		      struct leap_cresult *r, char **err);

/* Removes the compiler's work directory and closes the cache. */
void leap_hand_close(struct leap_hand *h);

/* Appends leap-compile --human's verdict on one compiled source: "LABEL: TASK (BACKEND
 * ARCH): ok, MS ms" and the artifact, or the failure with its reason and message, then up to
 * 20 diagnostics as "  FILE:L:C: SEVERITY: MESSAGE" (FILE: `file`, else "code") with the
 * lines the compiler printed under each. */
void leap_cresult_human(struct leap_buf *b, const char *label, const char *file, const char *task,
			enum leap_backend be, const struct leap_cresult *r);

/* What a hand check does with a candidate that passed: time it (leap-bench) and print the
 * result; returns 1 when the candidate is to count as failed. */
typedef int (*leap_hand_timer)(void *arg, const char *file, const struct leap_task *t, enum leap_backend b,
			       const char *artifact, uint64_t seed);

/* The hand mode of leap-verify and leap-bench: builds each of files[0..n) for task `task` as
 * the pipeline does (leap_hand_compile; a failure prints leap_cresult_human), verifies what
 * builds with `v` and `seed`, prints the verdict, and, with `timer`, times what passed.
 * `backend` is --backend or NULL. Dies on a harness failure; on an ending signal, removes
 * its temporaries and dies of it. Returns the exit status: 0 when every file passed. */
int leap_hand_check(struct leap_verifier *v, struct leap_suite *suite, const char *task, const char *backend,
		    uint64_t seed, int n, char **files, leap_hand_timer timer, void *arg);

#endif
