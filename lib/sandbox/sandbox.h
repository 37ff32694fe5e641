/* sandbox.h - run an untrusted runner child: namespaces, rlimits, dropped privileges, deadline. */
#ifndef LEAP_SANDBOX_H
#define LEAP_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "core/child.h"
#include "task/unseen.h"
#include "core/util.h"

/* The stack limit of every sandboxed child (RLIMIT_STACK, soft and hard): the main thread's
 * stack, and each thread's that takes the default size (glibc reads the limit at start), so
 * OpenMP's workers too. Fixed, not inherited, so that the prompt can state it (lib/prompt/prompt.c). */
#define LEAP_SANDBOX_STACK_BYTES (8ull << 20)

/* The default address-space limit of a cpu child beyond its buffers (leap-verify and leap-bench
 * --memory), as a prompt states it. */
#define LEAP_SANDBOX_MEM_DEFAULT (4ull << 30)

/* Limits of one sandboxed child. */
struct leap_sandbox_opts {
	double timeout;        /* wall-clock seconds for the whole conversation (> 0); the CPU-time
				* limit is this times the number of online CPUs */
	uint64_t mem_bytes;    /* --memory: the sandbox's memory beyond its shared regions, the
				* bound of its whole tree through a memory group where cg_ctrl has
				* one (both backends) and each cpu process's RLIMIT_AS; 0: none.
				* leap_sandbox_fit_memory turns it into the two limits */
	uint64_t fsize_bytes;  /* RLIMIT_FSIZE: the largest file (and captured output) it may write */
	long nproc;            /* RLIMIT_NPROC: processes and threads of the sandbox user */
	int namespaces;        /* 1: isolate network, PID view and mounts where the kernel allows */
	const char *const *hide; /* directories made invisible (empty) to the child when isolated */
	size_t nhide;
	const struct leap_root *root; /* when isolated, the child pivots into a minimal root that
				       * shows only these (unseen.h); NULL: the machine's root */
	/* leap-bench's referee (all optional): */
	const cpu_set_t *cpus; /* the cores: affinity set before the runner is executed, and the
				* cpuset of the group when cgroups provide one */
	struct leap_cgroups *cgroups; /* make groups for the child (cgroup.h) ... */
	unsigned cg_ctrl;      /* ... for these functions (1 << LEAP_CG_x) */
	uint64_t cg_mem_bytes; /* with LEAP_CG_MEMORY in cg_ctrl: the memory limit of the child's
				* whole tree (the kernel's OOM killer ends it there): leap-verify's
				* --memory-max, else set by leap_sandbox_fit_memory; 0: none */
	int cg_mem_none;       /* no memory group (--memory-max 0): moving a process into a v1
				* group waits for an RCU grace period (5 to 15 ms of wall time) */
	int pidns_freeze;      /* freeze by stopping every process of the PID namespace from its
				* init (needs namespaces): leap_sandbox_freeze() without a cgroup */
	const char *visible;   /* the child's CUDA_VISIBLE_DEVICES (NULL: the caller's) */
};

/* The one memory policy of a sandbox, applied to the options of a child (in place) whose shared
 * regions take `regions` bytes: the whole tree is bounded by --memory plus the regions
 * (cg_mem_bytes, unless --memory-max named a limit or none), a cpu process's address space by
 * the same (mem_bytes); a device's child (cuda) gets no address-space limit (the CUDA driver reserves far
 * more than any sane one). Drops LEAP_CG_MEMORY from cg_ctrl when there is no tree limit. */
void leap_sandbox_fit_memory(struct leap_sandbox_opts *o, int device, uint64_t regions);

/* Per-process sandbox state: what the kernel allows (probed once) and the user to run as.
 * One per program, owned by main's context. */
struct leap_sandbox_env {
	int ns_ok;             /* -1 not probed yet, 0 unavailable (warned once), 1 available */
	int root_ok;           /* the minimal root: -1 not probed yet, 0 cannot be made (warned
				* once: candidates see the machine's files), 1 works */
	int root;              /* the program runs as root: children drop to uid/gid below */
	uid_t uid;
	gid_t gid;
	uid_t uid_base;        /* root: this process's block of 1024 sandbox users (slot 0 first),
				* 0x40000000 + (pid mod 2^20) * 1024, ids without a passwd entry */
	const char *tmp;       /* parent of the private temp dirs ($TMPDIR or /tmp) */
};

/* One running child. */
struct leap_sandbox {
	struct leap_child child; /* the child (lib/core/child.h): its pid, and after leap_sandbox_end
				  * its setup_error: why the sandbox could not start the runner
				  * (a set-up failure: a harness fault, not the candidate's), or "" */
	int cmd_fd, reply_fd;  /* the parent's ends of the command and reply pipes */
	int log_fd;            /* memfd holding the child's stdout and stderr */
	char *tmpdir;
	double deadline;       /* leap_now() value after which the child is killed */
	int timed_out;         /* the deadline passed during a read or write */
	int isolated;          /* namespaces were used */
	struct leap_cgroup cg; /* its groups (cg.mode[] says which exist) */
	int ctl_fd;            /* pidns_freeze: the control socket to the namespace's init, or -1 */
	int frozen;
	uint64_t mem_limit;    /* the memory limit its group had (bytes), or 0 */
	int mem_hit;           /* after leap_sandbox_end: the kernel killed in it at that limit */
};

/* Binds directory `src` at `dst` (made first) read-only, as the minimal root binds /sys: without
 * the mounts under it; where the kernel refuses that (EINVAL: in a user namespace those mounts
 * are locked to src), with them, every one made read-only, nosuid, nodev and noexec too
 * (*recursive is then 1). Allocates nothing: a sandbox's set-up calls it. Returns 0, or -1 with
 * errno (ENOSYS for a recursive bind where the kernel cannot make a tree read-only). */
int leap_sandbox_bind_flat(const char *src, char *dst, int *recursive);

/* Fills `env` for this process (root or not, the unprivileged user, temp dir). */
void leap_sandbox_env_init(struct leap_sandbox_env *env);

/* Gives the sandboxes of parallel worker `slot` their own user when root (uid_base + slot:
 * ids without a passwd entry, a block of its own for every leap process), so that one
 * candidate's fork bomb cannot use up the process limit (RLIMIT_NPROC, counted per user) of
 * candidates running beside it, in this run or in another one. */
void leap_sandbox_slot(struct leap_sandbox_env *env, int slot);

/* Finds out now whether namespaces can be created (warning once when not), so that
 * processes forked later inherit the answer. */
void leap_sandbox_probe(struct leap_sandbox_env *env, const struct leap_sandbox_opts *o);

/* The descriptors a runner is handed, each at the number runproto.h gives it; -1 where none. */
struct leap_runner_fds {
	int in, out, ctl; /* the shared regions: LEAP_RUN_FD_IN, LEAP_RUN_FD_OUT, LEAP_RUN_FD_CTL */
	int art;          /* the artifact: LEAP_RUN_FD_ART */
	int handles;      /* cuda owner: its end of the socket it sends device memory on
			   * (LEAP_RUN_FD_HANDLES) */
	int dev[2];       /* cuda client: the owner's device memory (LEAP_RUN_FD_DEV_IN, _OUT) */
};

/* Starts `runner` (an absolute path) with argv {runner, arg, role} in a new sandbox, handing
 * it the descriptors of *fds at their numbers, and a minimal environment (PATH, HOME and
 * TMPDIR = its private temp dir, LANG=C, and, when set, CUDA_VISIBLE_DEVICES,
 * CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES, LD_LIBRARY_PATH, which select and find the GPU).
 * It holds no other descriptor of ours. With o->cgroups, the child is placed in its groups
 * before it executes the runner (it waits for that), so that the runner and everything it
 * starts, the candidate's constructors included, run in them from the first instruction; with
 * o->cpus its affinity is set then too. Returns 0, or -1 with a new message in *err (nothing
 * is left running). */
int leap_sandbox_start(struct leap_sandbox_env *env, struct leap_sandbox *sb, const struct leap_sandbox_opts *o,
		       const char *runner, const char *arg, const char *role, const struct leap_runner_fds *fds,
		       char **err);

/* Freezes every process of the sandbox (its cgroup freezer, else SIGSTOP to every process of
 * its PID namespace from the namespace's init) and returns once the kernel says all are
 * stopped, at most `timeout` seconds. Returns 0, -1 (no way to freeze, or it failed), -2
 * (timeout). leap_sandbox_thaw() undoes it (0 or -1). */
int leap_sandbox_freeze(struct leap_sandbox *sb, double timeout);
int leap_sandbox_thaw(struct leap_sandbox *sb);

/* The CPU time the sandbox's processes used so far (ns). Returns 0, or -1 when not accounted. */
int leap_sandbox_usage(const struct leap_sandbox *sb, uint64_t *ns);

/* The time all the sandbox's runnable processes waited for a CPU others held (ns, cgroup v2
 * PSI: leap_cgroup_stalled). Returns 0, or -1 when the kernel does not report it. */
int leap_sandbox_stalled(const struct leap_sandbox *sb, uint64_t *ns);

/* Reads exactly n bytes from the child before its deadline. Returns 0; -1 when the child
 * closed the pipe, a read failed or an ending signal was caught (sig.h); -2 when the
 * deadline passed (sb->timed_out is set). */
int leap_sandbox_read(struct leap_sandbox *sb, void *buf, size_t n);
/* Writes exactly n bytes to the child before its deadline; same return values. */
int leap_sandbox_write(struct leap_sandbox *sb, const void *buf, size_t n);

/* Ends the child: when `wait_exit` and it is not already gone, waits up to 500 ms for it to
 * end by itself; then kills its whole process group (and PID namespace), reaps it, removes
 * its temp dir and closes the descriptors. When the set-up failed before the runner was
 * executed (limits, namespaces, privileges, execve of the runner: reported on a close-on-exec
 * pipe the candidate never holds, so it cannot be forged), leap_sandbox_start_error says
 * why. *status receives the wait status; *killed is 1 when this call had to kill it. Up to
 * `maxlog` bytes of its output are appended to `log` (UTF-8 sanitised) when log is not NULL. */
void leap_sandbox_end(struct leap_sandbox *sb, int wait_exit, int *status, int *killed, struct leap_buf *log,
		      size_t maxlog);

/* After leap_sandbox_end: "the sandbox could not start the runner: WHY" (newly allocated)
 * when its set-up failed, a fault of the harness or the machine and never a verdict on the
 * candidate, though the child exited 127 as exit(127) would; NULL when the runner ran. */
char *leap_sandbox_start_error(const struct leap_sandbox *sb);

/* A short description of a wait status for the model, e.g. "crashed with SIGSEGV (invalid
 * memory access)". Static or newly allocated into *buf; returns the text. */
const char *leap_sandbox_describe(int status, struct leap_buf *buf);

#endif
