/* verify.h - check a compiled candidate against the task's reference in a sandboxed runner. */
#ifndef LEAP_VERIFY_H
#define LEAP_VERIFY_H

#include <stdint.h>
#include <jansson.h>

#include "gpu.h"
#include "record.h"
#include "runproto.h"
#include "sandbox.h"
#include "unseen.h"
#include "session.h"
#include "task.h"
#include "case.h"

/* Settings shared by leap-verify and leap-bench. */
struct leap_verify_opts {
	int trials;                   /* fresh input sets per case (>= 1) */
	int drawn;                    /* cases of sizes drawn from the task's ranges, besides the listed */
	enum leap_tolerance tolerance; /* --tolerance: the task's own, or KernelBench's */
	struct leap_sandbox_opts sb;  /* limits of the runner child */
	const char *device;           /* cuda device index ("0") */
	char *libexec;                /* directory of leap-run-cpu / leap-run-cuda */
	char *cache;                  /* cache directory (reference builds) */
};

/* The trusted reference of a task, built once per process and called in this process. */
struct leap_ref {
	const struct leap_task *task;
	enum leap_backend backend;    /* always cpu: the reference is plain C */
	void *handle;
	leap_entry_fn entry;
	char *path;
	struct leap_torchref *torch;  /* a module task's reference (torchref.h), else NULL */
};

/* The verification cases of one task for one seed: inputs and reference results of the
 * listed cases, then of the o.drawn cases drawn from the seed (leap_task_draw_case). */
struct leap_vcache {
	const struct leap_task *task;
	uint64_t seed;
	struct leap_case_data *cd;
	size_t ncases;                /* listed + drawn */
	struct leap_case *drawn;      /* the drawn cases' values (cd[task->ncases + k].c) */
	size_t ndrawn;
	uint64_t arena; /* the largest arena a case needs */
};

/* Per-program verification state (owned by main's context). */
struct leap_verifier {
	struct leap_verify_opts o;
	struct leap_sandbox_env env;
	struct leap_cgroups cg; /* with o.sb.cg_mem_bytes: the memory groups (cgroup.h) */
	struct leap_ref *refs;
	size_t nrefs, cap;
	struct leap_vcache *cache;
	size_t ncache, ccap;
	struct leap_gpu_once gpu; /* gathered at the first cuda record (leap_gpu_first_use) */
};

/* What a session started for v needs of it (session.h), as v is now: its device may change
 * between sessions (leap-bench's slots). */
struct leap_session_host leap_verifier_host(struct leap_verifier *v);

/* Finds the runner directory: $LEAP_LIBEXEC, else ../libexec/leap or ../libexec next to the
 * executable. Returns a new string, or NULL when no leap-run-cpu is found. */
char *leap_libexec_dir(void);

/* The set-up leap-verify and leap-bench share, after their options: the process limit's
 * default, the runners' directory, the cache (`cache`, else the default; created), and the
 * directories lib/unseen.c says a candidate must not see (the suite `tasks_dir`, the cache and
 * the other suites and caches) hidden from the sandbox through `h` (which must outlive o).
 * Dies with a message when the runner or a cache directory cannot be found. */
void leap_verify_setup(struct leap_verify_opts *o, const char *cache, const char *tasks_dir,
			 struct leap_unseen_set *h);


void leap_verifier_init(struct leap_verifier *v, const struct leap_verify_opts *o);
void leap_verifier_free(struct leap_verifier *v);

/* The task's reference entry point, building reference.c (cached) on first use. Returns
 * NULL with a new message in *err when it cannot be built or loaded. */
leap_entry_fn leap_reference(struct leap_verifier *v, const struct leap_task *t, char **err);

/* Builds the reference and computes the inputs and reference results of task t for `seed`
 * now (leap_verify_artifact does it on first use), so that forked workers share them.
 * Returns 0, or -1 with a new message in *err. */
int leap_verify_prepare(struct leap_verifier *v, const struct leap_task *t, uint64_t seed, char **err);

/* Verifies `artifact` for task `t` on backend `b` with `seed`: every case, o.trials sets
 * each. Returns the new `verify` object (status pass, mismatch, runtime_error, timeout or
 * no_device; seed, cases, trials, max_abs_err, max_rel_err, mismatch, ms, run_ms, message,
 * output)
 * and sets *st to the record status (LEAP_ST_NONE for no_device). Returns NULL with a new
 * message in *err when the harness failed (the reference does not build, no runner...). */
json_t *leap_verify_artifact(struct leap_verifier *v, const struct leap_task *t, enum leap_backend b,
			     const char *artifact, uint64_t seed, enum leap_status *st, char **err);

/* The largest seed: seeds are written to records as JSON integers, exact in every JSON
 * reader's doubles. */
#define LEAP_SEED_MAX ((int64_t)((1ull << 53) - 1))

/* A seed from the kernel's random source (never fails: falls back to time and pid). */
uint64_t leap_random_seed(void);

#endif
