/* torchbase.h - the torch baseline of a module task in leap-bench: its artifact, its kind, and
 * the one place that says what its sandbox is exempt from. */
#ifndef LEAP_TORCHBASE_H
#define LEAP_TORCHBASE_H

#include "sandbox/sandbox.h"
#include "sandbox/session.h"
#include "task/task.h"

struct leap_verifier;
struct ref_torch;

/* The baseline kinds of a module task (bench.baseline_kind, task.json baseline_kind,
 * leap-bench --baseline). */
#define LEAP_TORCH_EAGER "torch-eager"
#define LEAP_TORCH_COMPILE "torch-compile"

/* The kind of t's torch baseline: `forced` (leap-bench --baseline) when given, else the
 * task's baseline_kind, else torch-eager. */
const char *leap_torch_kind(const struct leap_task *t, const char *forced);

/* Builds (cached under CACHE/artifacts/) the torch baseline of module task t for backend b, of
 * kind `kind`: runner/torchbase.c with the module, task.json and the Python of
 * $LEAP_TORCH_PYTHON embedded, and for torch-compile the module compiled ahead of time for the
 * bench case and the runner's `cores` (torchaot.h; the first time, tens of seconds, never
 * timed). *tp holds what is
 * learnt of that Python once per process (made here; leap_torch_free). Returns the artifact's
 * path (new), or NULL with a new message in *err (no torch, a failed compile or build), *skip
 * set when the task's baseline cannot be made at all (torch cannot compile its module): its
 * records are not timed, saying why, and no candidate's fault. */
char *leap_torch_baseline(struct ref_torch **tp, struct leap_verifier *v, const struct leap_task *t,
			  enum leap_backend b, const char *kind, int cores, int *skip, char **err);

/* Gives the session options of a torch baseline's runner the exemptions of trusted torch code,
 * decided here and nowhere else (SECURITY.md): its sandbox is `sb` (the candidates') with the
 * Python's directories bound read-only into the minimal root and no address-space limit
 * (torch's import maps more than 4 GiB; the memory group still bounds the tree at --memory),
 * and on a host backend (`host`) the cpu runner's "trusted" role (no heap check). Nothing
 * before leap_torch_baseline succeeded (tp NULL). */
void leap_torch_session(struct ref_torch *tp, const struct leap_sandbox_opts *sb, int host,
			struct leap_session_opts *so);

void leap_torch_free(struct ref_torch *tp);

#endif
