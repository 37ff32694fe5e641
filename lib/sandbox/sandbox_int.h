/* sandbox_int.h - what sandbox.c and sandbox_child.c share: the child's plan and its hooks. */
/*
 * Private to the files of sandbox.h. sandbox.c, the parent's side, prepares everything before
 * the fork (struct child_plan) and starts the child through lib/core/child.c with the hooks below;
 * sandbox_child.c holds those hooks, the code that runs in the child between the fork and the
 * runner's execve, and calls nothing of sandbox.c.
 */
#ifndef LEAP_SANDBOX_INT_H
#define LEAP_SANDBOX_INT_H

#include "core/child.h"
#include "sandbox.h"

/* What the sandbox's own steps in the child (lib/core/child.c's hooks) need, prepared before the
 * fork so that the child only makes system calls. */
struct child_plan {
	const struct leap_sandbox_opts *o;
	const struct leap_sandbox_env *env;
	char *tmpdir; /* the child's copy may be written (mkdirs_here) */
	int holdfd; /* read end of the pipe the parent releases the child with once it is placed
		     * in its groups, or -1 */
	const struct leap_child *ch; /* in the child: itself (for leap_child_fail) */
	int isolated; /* in new namespaces: PID 1 stays as a reaper */
};

/* What sb_try_root needs. */
struct root_probe {
	const struct leap_root *root;
	char *top;
};

/* lib/core/child.c's `early` hook of a sandbox: waits until the parent has placed the child in its
 * groups (it writes a byte on the hold pipe); exits 127 when the parent gave up. */
void sb_hold(const struct leap_child *ch, void *arg);
/* lib/core/child.c's `late` hook of a sandbox (arg: its struct child_plan): the minimal root and
 * the rest of the view, the dropped privileges, and when isolated the reaper as PID 1, which
 * never returns. */
void sb_finish_child(const struct leap_child *ch, void *arg);
/* lib/core/child.c's `late` hook of the probe of the minimal root (arg: its struct root_probe). */
void sb_try_root(const struct leap_child *ch, void *arg);

#endif
