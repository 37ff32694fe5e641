/* verify.h - check a compiled candidate against the task's reference in a sandboxed runner. */
#ifndef LEAP_VERIFY_H
#define LEAP_VERIFY_H

#include <stdint.h>
#include <jansson.h>

#include "backend/gpu.h"
#include "core/record.h"
#include "sandbox/runproto.h"
#include "sandbox/sandbox.h"
#include "task/unseen.h"
#include "sandbox/session.h"
#include "task/task.h"
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
	double slow;                  /* a call may take this many times the reference's time on its
				       * case plus slow_floor seconds, else the record is a timeout
				       * (0: only the record's timeout bounds it) */
	double slow_floor;
};

/* leap-verify's bound on one call (--slow, --slow-floor): 100 times the reference's time on the
 * same case, plus 2 s for what the reference does not pay (a fresh process's page faults, a
 * thread pool's start, a machine under load); the floor alone bounds the candidate's load. Leap-bench bounds its blocks the same way
 * (verdict.h: LEAP_BENCH_SLOW); a candidate's load and first call get its backend's
 * first_call_s more (backend.h: cuda's module load and JIT). */
#define LEAP_VERIFY_SLOW 100.0
#define LEAP_VERIFY_SLOW_FLOOR 2.0

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
	size_t nrandom;               /* the first nrandom drawn at random (verify.drawn), the rest
				       * the residue cases (fixed by the task, not by the seed) */
	uint64_t arena; /* the largest arena a case needs */
	double *ref_s;  /* per case: the reference's longest time over its trials, in seconds (the
			 * base of the bound on a candidate's call: leap_verify_opts.slow) */
};

/* Per-program verification state (owned by main's context). */
struct leap_verifier {
	struct leap_verify_opts o;
	struct leap_sandbox_env env;
	struct leap_cgroups cg; /* the memory groups of its sandboxes (cgroup.h) */
	int mem_said;           /* warned that no memory group bounds a sandbox */
	struct leap_ref *refs;
	size_t nrefs, cap;
	struct leap_vcache *cache;
	size_t ncache, ccap;
	struct leap_gpu_once gpu; /* gathered at the first cuda record (leap_gpu_first_use) */
};

/* The sandbox's memory (--memory, the one policy: leap_sandbox_fit_memory) bounds its whole
 * tree through a memory group of `cg` (NULL: v->cg, detected now) where one serves: then
 * LEAP_CG_MEMORY joins sb->cg_ctrl and it returns 1. Where none does, it says so once per
 * program on stderr (each cpu process keeps its address-space limit) and returns 0; also 0
 * when the options ask for no memory bound. */
int leap_verifier_memory(struct leap_verifier *v, struct leap_sandbox_opts *sb, const struct leap_cgroups *cg);

/* What a session started for v needs of it (session.h), as v is now: its device may change
 * between sessions (leap-bench's slots). */
struct leap_session_host leap_verifier_host(struct leap_verifier *v);

/* Finds the runner directory: $LEAP_LIBEXEC, else ../libexec/leap or ../libexec next to the
 * executable. Returns a new string, or NULL when no leap-run-cpu is found. */
char *leap_libexec_dir(void);

/* The set-up leap-verify and leap-bench share, after their options: the process limit's
 * default, the runners' directory, the cache (`cache`, else the default; created), and the
 * directories lib/task/unseen.c says a candidate must not see (the suite `tasks_dir`, the cache and
 * the other suites and caches) hidden from the sandbox through `h` (which must outlive o).
 * Dies with a message when the runner or a cache directory cannot be found. */
void leap_verify_setup(struct leap_verify_opts *o, const char *cache, const char *tasks_dir,
			 struct leap_unseen_set *h);


void leap_verifier_init(struct leap_verifier *v, const struct leap_verify_opts *o);
void leap_verifier_free(struct leap_verifier *v);

/* The task's reference entry point, building reference.c (cached) on first use. Returns
 * NULL with a new message in *err when it cannot be built or loaded. */
leap_entry_fn leap_reference(struct leap_verifier *v, const struct leap_task *t, char **err);

/* The cases of task t for `seed` (vcases.c): found in v's cache or made there, with their
 * inputs, the reference's outputs and its time per case. NULL with a new message in *err when
 * the reference fails. */
struct leap_vcache *leap_verify_cases(struct leap_verifier *v, const struct leap_task *t, uint64_t seed, char **err);
/* verify.drawn: the values of the cases drawn at random (the residue cases are the task's). */
json_t *leap_verify_drawn_json(const struct leap_vcache *vc);

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
