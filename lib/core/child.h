/* child.h - start a child process the way leap starts its compilers, runners and pipelines,
 * and finish it. */
#ifndef LEAP_CHILD_H
#define LEAP_CHILD_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The contract, for every caller (lib/compile/crun.c: the compilers; lib/sandbox/sandbox.c: the runner):
 *
 * 1. Describe the child in a struct leap_child made by leap_child_init, then call
 *    leap_child_start once. Everything it points to (argv, env, dir, hide, cpus, the hooks'
 *    argument) need only live until leap_child_start returns: the child has its own copy.
 * 2. Descriptors: the child holds exactly 0..nfd-1, descriptor i a copy of the caller's fd[i]
 *    (-1: closed), bit i of `cloexec` closing it again at execve; every other one is closed.
 *    The caller keeps and closes its own fd[]; leap_child_start takes none of them. The
 *    set-up report pipe (report_slot) is the module's: its read end is ch->report_fd until
 *    leap_child_finish closes it.
 * 3. The child is the leader of a process group of its own (a session of its own with
 *    `session`), from before it runs anything of the program's: everything it starts is in
 *    that group unless it moves away. Its pid names the group until leap_child_finish reaps
 *    it, never after (the id may be reused then): leap_child_kill(pid) is safe from
 *    leap_child_start's return to leap_child_finish's, also from another thread that holds
 *    the pid. The child dies with its parent (PR_SET_PDEATHSIG).
 * 4. A set-up failure (anything before the program itself runs: descriptors, limits, the
 *    directory, the namespaces, the hidden directories, the hooks, execve) is never the
 *    program's doing: the child writes `fail_prefix WHAT: strerror\n` to descriptor fail_slot
 *    (a log the caller may show) and `WHAT: strerror` to the report pipe, which the program
 *    never holds (close-on-exec), and exits 127. After leap_child_finish, setup_error says
 *    why ("" when the program was executed). Only setup_error tells set-up from a program
 *    that exits 127 by itself: a caller must ask it before reading the status as a verdict.
 * 5. A child that cannot hide what was promised does not run the program: with a new mount
 *    namespace (CLONE_NEWNS in clone_flags or unshare_flags) the mounts are made private
 *    and an empty read-only tmpfs covers each existing directory of hide[] (and /proc with
 *    hide_proc) or the set-up fails.
 * 6. leap_child_finish reaps the child exactly once and kills its group first, so that
 *    nothing it started outlives it; it waits `grace` seconds for the child's own exit
 *    before (then `killed` is 0).
 * 7. clone_flags (new namespaces at the fork) are for a single-threaded caller only (a raw
 *    clone skips the C library's fork handlers); a threaded caller uses fork (clone_flags
 *    0) and unshare_flags.
 */

enum { LEAP_CHILD_FDS = 14, LEAP_CHILD_LIMITS = 8 };

struct leap_child;

/* A hook run in the child (single-threaded, async-signal-safe calls only, no allocation: the
 * child may run under its memory limit). It fails with leap_child_fail. */
typedef void leap_child_hook(const struct leap_child *ch, void *arg);

struct leap_child {
	/* What to run. */
	char *const *argv;   /* argv[0]: the program's absolute path; NULL: a probe, the child
			      * exits 0 once the whole set-up worked */
	char *const *env;    /* its whole environment */
	const char *dir;     /* its working directory (NULL: ours) */
	int open_early;      /* open argv[0] before the mounts and execute it through that
			      * descriptor (the hidden directories may hold it) */
	const char *exec_what; /* the set-up failure when argv[0] cannot be opened or executed,
				* e.g. "cannot start the runner" (NULL: "cannot execute the program") */
	/* Its descriptors (contract 2). */
	int fd[LEAP_CHILD_FDS];
	int nfd;
	unsigned cloexec;
	/* The process. */
	int session;         /* setsid() rather than a process group in our session */
	unsigned long clone_flags; /* namespaces made at the fork (CLONE_NEW*; contract 7) */
	int unshare_flags;   /* namespaces made in the child after the fork */
	int map_user;        /* in a new user namespace: map map_uid and map_gid to themselves */
	uid_t map_uid;
	gid_t map_gid;
	struct { int res; uint64_t soft, hard; } limit[LEAP_CHILD_LIMITS];
	int nlimit;          /* added with leap_child_limit */
	const cpu_set_t *cpus; /* its CPU affinity, or NULL */
	/* What it must not see (contract 5). */
	const char *const *hide;
	size_t nhide;
	int hide_proc;
	/* The caller's own steps: `early` right after the process group (before the
	 * descriptors are placed), `late` after the hidden directories, before execve. */
	leap_child_hook *early, *late;
	void *arg;
	/* Set-up failures (contract 4). */
	const char *fail_prefix; /* e.g. "leap sandbox: " */
	int fail_slot;       /* the child's descriptor for the failure line, or -1 */
	int report_slot;     /* the child's descriptor of the report pipe, or -1: none */
	/* State: set by leap_child_start (pid, report_fd), leap_child_finish (the rest), and
	 * in the child by the module itself (placed: the failure line goes to fail_slot;
	 * exec_fd; report_w: where the report pipe's write end is now). */
	pid_t pid;
	int report_fd;
	int status;          /* wait status, decoded: */
	int exit_code;       /* its exit status, or -1 when a signal ended it */
	int term_signal;     /* the signal that ended it, or 0 */
	int killed;          /* the child had not exited when it was killed */
	char setup_error[256];
	int placed, exec_fd, report_w;
};

/* Describes a child with nothing: no descriptors, no limits, no namespaces, pid -1. */
void leap_child_init(struct leap_child *ch);

/* Adds the resource limit `res` (soft, hard) to the child. */
void leap_child_limit(struct leap_child *ch, int res, uint64_t soft, uint64_t hard);

/* Starts the child (contract 1). Returns 0 with ch->pid set, or -1 with errno set (of the
 * fork or clone when it was refused; nothing is left running). */
int leap_child_start(struct leap_child *ch);

/* 1 once the child has exited (it is not reaped: its pid still names its group). */
int leap_child_exited(const struct leap_child *ch);

/* Kills the process group `pid` and the process itself (SIGKILL): contract 3. */
void leap_child_kill(pid_t pid);

/* Waits up to `grace` seconds for the child to exit (0: only looks; < 0: as long as it
 * takes), kills its group, reaps it and reads its set-up report: fills status, exit_code,
 * term_signal, killed and setup_error, and sets pid to -1. Returns 0, or -1 when there was
 * no child. */
int leap_child_finish(struct leap_child *ch, double grace);

/* In the child: executes the program (exit 0 when there is none), or reports why it could
 * not (leap_child_fail). A `late` hook that forks may call it from its child. */
_Noreturn void leap_child_exec(const struct leap_child *ch);

/* In the child: reports the set-up failure `what` (with errno) and exits 127 (contract 4). */
_Noreturn void leap_child_fail(const struct leap_child *ch, const char *what);

#endif
