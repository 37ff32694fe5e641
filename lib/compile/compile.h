/* compile.h - build a candidate into an artifact (abi.h) with cc or nvcc, under limits, through the cache. */
#ifndef LEAP_COMPILE_H
#define LEAP_COMPILE_H

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cache.h"
#include "compiler.h"
#include "task/task.h"
#include "toolchain.h"

/* Prepares a compiler using `cache` (required: artifacts live there) and a private work
 * directory under $TMPDIR. The directories of o->hide that exist are hidden from every
 * compiler run; one that contains the work directory, the cache, a -I directory of the flags
 * or a system directory is left visible with a warning, and when no mount namespace can be
 * made (checked once here) the compilers run without one, with a warning. Returns 0, or -1
 * with a new message in *err. */
int leap_compiler_init(struct leap_compiler *c, const struct leap_compile_opts *o, struct leap_cache *cache,
		       char **err);

/* Removes the work directory and frees everything. */
void leap_compiler_free(struct leap_compiler *c);

/* For a program about to end on a signal while compiles may still run: kills the process
 * group of every running compiler (the driver with its cc1, as, ld, nvcc stages), stops new
 * ones from starting, removes the work directory and this process's temporaries in the cache
 * (best effort: failures are ignored). A half-written artifact is never published: the cache
 * publishes by rename. Frees nothing: call it at most once, then end the process. */
void leap_compiler_abort(struct leap_compiler *c);

/* The variant for (task, backend), made on first use: resolves the toolchain (running the
 * compilers' --version and, for cuda without --arch, nvidia-smi) and generates the sources.
 * Returns NULL with a new message in *err when the backend's compiler is missing. Call from
 * one thread only; the variant stays valid until leap_compiler_free. */
struct leap_variant *leap_compiler_variant(struct leap_compiler *c, const struct leap_task *t, enum leap_backend b,
					   char **err);

/* The cache key of `code` for `v`: SHA-256 over code, prelude, shim, compiler identity,
 * flags, backend and arch. */
void leap_compile_key(const struct leap_compiler *c, const struct leap_variant *v, const char *code, char hex[65]);

/* Looks `key` up in the cache (when reuse is on). Returns 1 and fills *r on a hit, else 0. */
int leap_compile_lookup(struct leap_compiler *c, const struct leap_variant *v, const char *key,
			struct leap_cresult *r);

/* Compiles `code` for `v` and publishes the result under `key`. Thread-safe. Always fills *r. */
void leap_compile_run(struct leap_compiler *c, struct leap_variant *v, const char *code, const char *key,
		      struct leap_cresult *r);

/* 1 if `code` may share a translation unit with other candidates (--batch): its only
 * preprocessor directives are #include <...> (before any #define), #define and #pragma
 * unroll, and it names none of constructor, destructor, asm, section, _Pragma, __LINE__,
 * __FILE__, __COUNTER__, init_priority, leap_entry, leap_abi_version. */
int leap_compile_batchable(const char *code);

/* Compiles n cuda candidates of `v` (codes[i], cache keys keys[i]) in one translation unit:
 * each in its own namespace with its entry point renamed, includes hoisted, its macros
 * undefined after it; then links one artifact per candidate from the shared object and the
 * shim (the entry bound by --defsym). Candidates that fail the screen or that the compiler's
 * errors name are left out (one retry without them); a batch whose object has a dynamic
 * initializer (it would run in every artifact) is abandoned. Sets done[i] = 1 and fills
 * r[i] for each candidate built and published; the caller compiles the others alone with
 * leap_compile_run, which gives them their own diagnostics. Thread-safe. */
void leap_compile_batch(struct leap_compiler *c, struct leap_variant *v, size_t n, const char *const *codes,
			const char *const *keys, struct leap_cresult *r, int *done);

/* The record's `compile` object for *r, with the log cut to max_log bytes. New reference. */
json_t *leap_cresult_json(const struct leap_cresult *r, size_t max_log);

/* The file name the compilers see the candidate's code under ("kernel.c", "kernel.cu"): the
 * name in its diagnostics and in its artifact's line table. */
const char *leap_compile_source_name(enum leap_backend b);

/* The compile.status name of s ("ok", "error", "timeout", "internal"). */
const char *leap_cstatus_name(enum leap_cstatus s);

void leap_cresult_free(struct leap_cresult *r);

/* Copies *src into *dst (deep). */
void leap_cresult_copy(struct leap_cresult *dst, const struct leap_cresult *src);

#endif
