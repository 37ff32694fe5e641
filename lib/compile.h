/* compile.h - build a candidate into an artifact (abi.h) with cc or nvcc, under limits, through the cache. */
#ifndef LEAP_COMPILE_H
#define LEAP_COMPILE_H

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cache.h"
#include "task.h"

/* Settings of a compiler (fixed for a run). */
struct leap_compile_opts {
	const char *nvcc;      /* program name or path; NULL: $CUDA_HOME/bin/nvcc, else nvcc on PATH */
	const char *cc;        /* NULL: $CC, else cc */
	const char *arch;      /* NULL: the visible GPU's (nvidia-smi), else sm_90 */
	char **nvcc_flags;     /* extra options for nvcc */
	size_t n_nvcc_flags;
	char **cc_flags;       /* extra options for cc */
	size_t n_cc_flags;
	double timeout;        /* wall-clock seconds per compiler run */
	int64_t mem_limit;     /* address-space limit of each compiler process (bytes; 0: none) */
	int64_t out_limit;     /* file-size limit of each compiler process (bytes; 0: none) */
	size_t max_diags;      /* diagnostics kept per result */
	int reuse;             /* 1: reuse cached results; 0 (--no-cache): always run the compiler
				  for candidates (the per-task shim objects are still reused) */
	const char *const *hide; /* directories the compilers must not read (the task suites, the
				    reference builds): empty read-only tmpfs over each, in a mount
				    namespace of the compilers' own, when the system allows one */
	size_t nhide;
};

/* The toolchain of one backend, resolved on first use. */
struct leap_tool {
	int resolved;
	char *path;   /* absolute path of the compiler, or NULL when missing */
	char *ident;  /* its version output (and the host compiler's, for nvcc): part of every key */
	char *arch;   /* cuda: the -arch value */
	char *err;    /* why the backend cannot be used, or NULL */
	char **roots; /* canonical directories a candidate may include files from (the include guard) */
	size_t nroots;
};

/* One (task, backend) pair: the generated sources and the prebuilt shim object. */
struct leap_variant {
	const struct leap_task *task;
	enum leap_backend backend;
	char *prelude, *shim, *proto;
	char shim_key[65];
	int shim_state;   /* 0 not built, 1 building, 2 ready, 3 failed (guarded by the compiler's lock) */
	char *shim_obj;   /* private copy of the shim object, when ready */
	char *shim_err;   /* when failed */
};

struct leap_compiler {
	struct leap_compile_opts o;
	struct leap_cache *cache;
	char *workdir;              /* private temporary directory of this process */
	struct leap_tool tools[2];  /* indexed by enum leap_backend */
	struct leap_variant **variants;
	size_t nvariants, cap;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned long jobs;         /* job directories made */
	long runs;                  /* compiler runs for candidates (not cache hits) */
	pthread_mutex_t run_lock;   /* guards the running compilers below */
	pid_t *groups;              /* process groups of the compilers running now */
	size_t ngroups, groups_cap;
	int aborting;               /* leap_compiler_abort was called: no new compiler starts */
	char **hide;                /* canonical directories hidden from the compilers (see opts) */
	size_t nhide;
	int ns;                     /* how they are hidden: 0 not at all (no namespace could be made:
				       warned), 1 unshare(CLONE_NEWNS) (root), 2 a user namespace too */
};

/* Outcome of one compile. */
enum leap_cstatus {
	LEAP_C_OK,       /* an artifact */
	LEAP_C_ERROR,    /* the candidate does not compile (or hit a compiler limit) */
	LEAP_C_TIMEOUT,  /* the compiler ran past the timeout */
	LEAP_C_INTERNAL, /* leap could not do its job (no compiler, disk full...): not a verdict */
};

struct leap_cresult {
	enum leap_cstatus status;
	char *reason;       /* error kind: compile, missing_entry, wrong_signature, link, forbidden_include, timeout,
			       memory_limit, cpu_limit, output_limit, compiler_crash; NULL when ok */
	char *message;      /* one line a model can act on; NULL when ok */
	double ms;          /* wall time spent on this record now (lookup time when cached) */
	double compiled_ms; /* duration of the compiler run that produced the result */
	int cached;
	char hash[65];
	char *artifact;     /* absolute path of the .so when ok */
	json_t *diagnostics;
	char *log;          /* scrubbed compiler output (cut to 64 KiB) */
	char *arch;         /* cuda */
	int batch;          /* candidates compiled in the same translation unit (0: alone) */
};

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

/* The toolchain leap-compile uses for a backend, as a model should be told about it. */
struct leap_toolchain {
	char *version; /* "gcc (Debian 12.2.0-14) 12.2.0", "Cuda compilation tools, release 13.0, V13.0.88" */
	char *arch;    /* cuda: the -arch value (from --arch, else the visible GPU's); else NULL */
	char *flags;   /* the options that shape the code, e.g. "-std=gnu11 -O2 -g1 -fPIC -fopenmp
			* -Werror=implicit-function-declaration" (not -shared/-c, not the diagnostics'
			* format) */
};

/* Resolves the compiler of backend `b` as leap-compile does with options `o` (the same
 * lookup, --version query and, on cuda, architecture), without a cache or a work directory.
 * Returns 0 with *tc filled (free with leap_toolchain_free), or -1 with a new message in *err
 * when the compiler is missing or does not run. */
int leap_compile_toolchain(enum leap_backend b, const struct leap_compile_opts *o, struct leap_toolchain *tc,
			   char **err);
void leap_toolchain_free(struct leap_toolchain *tc);

/* The file name the compilers see the candidate's code under ("kernel.c", "kernel.cu"): the
 * name in its diagnostics and in its artifact's line table. */
const char *leap_compile_source_name(enum leap_backend b);

/* The compile.status name of s ("ok", "error", "timeout", "internal"). */
const char *leap_cstatus_name(enum leap_cstatus s);

void leap_cresult_free(struct leap_cresult *r);

/* Copies *src into *dst (deep). */
void leap_cresult_copy(struct leap_cresult *dst, const struct leap_cresult *src);

#endif
