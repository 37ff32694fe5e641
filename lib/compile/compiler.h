/* compiler.h - the compiler's types: its options, its tools, the (task, backend) variants and a
 * compile's result. Apart from compile.h so that the pieces compile.c is made of (crun.c,
 * incguard.c, toolchain.c) can share them without including the module they serve: the
 * dependencies point one way, compile -> its pieces -> these types. */
#ifndef LEAP_COMPILER_H
#define LEAP_COMPILER_H

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cache.h"
#include "task/task.h"

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
	struct leap_tool tools[LEAP_NBACKENDS]; /* indexed by enum leap_backend */
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

#endif
