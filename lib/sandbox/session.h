/* session.h - the referee's side of one runner child: shared regions, blocks of calls timed on
 * the referee's clock, freezing between blocks (runproto.h is the other side). */
#ifndef LEAP_SESSION_H
#define LEAP_SESSION_H

#include <stdint.h>

#include "runproto.h"
#include "sandbox.h"
#include "task/task.h"
#include "core/util.h"
#include "referee/case.h"

struct leap_gpu_once;

/* What a session needs of the program that starts it: where the runners are, the sandboxes'
 * environment and default limits, and the device. Read only while a session starts;
 * verify.h's leap_verifier_host makes one from a verifier as it is at that moment. */
struct leap_session_host {
	const char *libexec;                /* directory of leap-run-cpu / leap-run-cuda */
	struct leap_sandbox_env *env;       /* the sandboxes' environment (users, slots) */
	const struct leap_sandbox_opts *sb; /* the runner child's limits, unless the session's opts say */
	const struct leap_gpu_once *gpu;    /* the GPU facts, once gathered (NULL: none) */
	const char *device;                 /* cuda device index ("0") */
};

/*
 * A session: one runner child holding one artifact, serving the referee (this process) block
 * by block (runproto.h). The referee lays out the slots of a case in two shared regions (IN:
 * control page, call table, input slots; OUT: guarded output slots), which it maps as one
 * span (`arena`, with OUT at LEAP_RUN_OUT_BASE), so that the offsets of struct leap_case_data
 * index it directly. It writes the inputs and poisons the outputs of a block's slots itself
 * (leap_session_stage), times the block from before "go" to after "done" on its own clock
 * (with the candidate's processes frozen before and after, when asked: leap_session_block),
 * and reads outputs and canaries from its own mapping.
 */

/* How a session freezes its child between blocks. */
enum leap_freeze {
	LEAP_FREEZE_NONE = 0,  /* not at all (leap-verify) */
	LEAP_FREEZE_CGROUP,    /* the cgroup freezer (sandbox opts carry the groups) */
	LEAP_FREEZE_SIGNALS,   /* SIGSTOP to every process of the PID namespace, from its init */
};

struct leap_session_opts {
	uint64_t in_cap, out_cap; /* sizes of IN and OUT: the largest case (leap_session_fit) */
	uint32_t nparams, calls;  /* the call table: its row width and rows */
	uint32_t nslots;          /* slots of the largest case (the guard list's capacity) */
	int seal;                 /* seal IN (F_SEAL_FUTURE_WRITE): the candidate cannot write inputs */
	enum leap_freeze freeze;
	const char *role;         /* the cuda runner's role ("copy", "client", "owner"; NULL: copy) */
	const struct leap_sandbox_opts *sb; /* the sandbox's limits and placement (NULL: the host's) */
	struct leap_session *owner; /* cuda client: the owner's session, whose client regions (its
				     * device memory descriptors) the client imports; leap clears them
				     * through the owner first */
	uint64_t pool_len;        /* cuda owner: its device pool's size */
	struct leap_regions *regions; /* regions to use (made by the caller), or NULL: own ones */
	int lazy;                 /* map the regions without populating them (cuda: never read on the host) */
	const char *lock_cache;   /* cuda: hold the device's lock, shared, for the session (under
				   * this cache directory; leap-bench takes it exclusive to time) */
	double hello_s;           /* > 0: the runner's hello, and its answer to the load (the
				   * candidate's constructors), must each come within this many
				   * seconds (the sandbox's deadline still bounds the rest) */
	double load_s;            /* > 0: the answer to the load must come within this many seconds,
				   * instead of hello_s (leap-verify: lib/verify.c, load_bound) */
};

/* Grows o (zeroed first by the caller) to fit case d with `calls` calls per block. */
void leap_session_fit(struct leap_session_opts *o, const struct leap_case_data *d, uint32_t calls);

/* The referee's clock and the kernel's accounting of one block. */
struct leap_block {
	double ms;        /* wall time from before the go (thaw included) to after the done (the
			   * freeze included) */
	double cpu_ms;    /* CPU time of the child's processes meanwhile (-1: not accounted) */
	double stall_ms;  /* the part of ms in which every runnable process of the child waited for
			   * a CPU others held: cgroup v2 PSI "full", within ms - cpu_ms
			   * (leap_block_stall; -1: not reported, or no cpu_ms) */
	double own_ms;    /* what the runner says it took (cross-check only) */
};

/* The shared regions of a session: IN and OUT (the slots) and CTL (the control page, the call
 * table, the guard list), each a memfd sealed against shrinking and growing with its seals
 * sealed, so that no access of leap's own mappings can fault (SIGBUS) whatever the candidate
 * does; CTL, and IN when `sealed`, also against writing (F_SEAL_FUTURE_WRITE): the runner maps
 * them read-only. A caller may make them once and hand them to many sessions in turn
 * (leap_session_opts.regions): each session clears them before its runner maps them, so that
 * nothing of one candidate (its call table, inputs, outputs) reaches the next. The layout
 * (offsets, capacities, counts) lives here, in leap's own memory: leap writes the control page
 * and never reads it back. */
struct leap_regions {
	int in_fd, out_fd, ctl_fd;
	unsigned char *arena;     /* IN at arena, OUT at arena + LEAP_RUN_OUT_BASE */
	uint64_t span;            /* bytes of the reservation */
	uint64_t in_len, out_len, ctl_len;
	struct leap_run_ctl *ctl; /* the control page (leap's writable mapping of CTL): write only */
	unsigned char *ctlmap;    /* = (unsigned char *)ctl */
	uint64_t table_off, table_cap; /* the call table in CTL */
	uint64_t guards_off, guards_cap; /* the guard list in CTL (entries) */
	uint64_t guard_gen;       /* the generation of the guard list written last */
	uint32_t nparams, calls, nslots;
	uint32_t flags;           /* the control page's flags as written */
	int sealed;               /* IN carries F_SEAL_FUTURE_WRITE */
	int lazy;                 /* not populated (leap_session_opts.lazy) */
	int used;                 /* a runner mapped them since they were made or cleared */
	int in_written;           /* leap wrote inputs into IN since then (sealed IN: only leap can) */
	const struct leap_case_data *laid; /* the case the guard list and canaries are for */
};

/* Makes regions as o says (sizes, call table, seal). Returns 0, or -1 with a new message in
 * *err. leap_regions_free undoes it (safe on zeroed regions with fds -1). */
int leap_regions_make(struct leap_regions *g, const struct leap_session_opts *o, char **err);
void leap_regions_free(struct leap_regions *g);

/* Clears regions a runner has used: every byte of IN and OUT, the call table and the guard list,
 * and the block fields of the control page (leap_session_open does it before a new runner
 * maps them). */
void leap_regions_clear(struct leap_regions *g);

struct leap_session {
	struct leap_sandbox sb;
	struct leap_regions own;  /* the regions when the caller gave none */
	struct leap_regions *rg;  /* the regions in use (&own, or the caller's) */
	unsigned char *arena;     /* rg->arena */
	int sealed;               /* rg->sealed */
	uint64_t seq;
	enum leap_freeze freeze;
	uint64_t frozen_usage;    /* CPU ns when last frozen (the freeze must hold) */
	struct leap_run_reply hello; /* the runner's first reply, sent by its own code before any
				      * candidate code loaded (device, UUID, an owner's client regions'
				      * sizes) */
	int dev_fd[2];            /* cuda owner: the client regions it sent before its hello, as
				   * descriptors of device memory (each client inherits them), or -1 */
	int loaded;               /* the artifact was told to load: every reply since may be forged */
	double hello_s;           /* the bound on each start-up reply (struct leap_session_opts) */
	double hello_at;          /* leap_now() when the hello came (0: none yet), before the load */
	double load_s;            /* the bound on the load's reply, when > 0 */
	int lock_fd;              /* the device lock held for the session, or -1 */
	int has_usage;
	int ncpus;                /* the cores its processes may run on (leap_session_usage_lag) */
	int dead;                 /* the child died or timed out: no more calls */
	struct leap_run_reply last; /* the last reply (status, message) */
	struct leap_run_reply crash; /* the LEAP_RUN_CRASH report, when the runner sent one
				      * (forgeable: for the message only) */
	int status;               /* after leap_session_end: the child's wait status */
};

/* Outcome of starting a session or running a block. */
enum leap_sess {
	LEAP_SESS_OK = 0,
	LEAP_SESS_REPLY,     /* the runner answered with an error status (in s->last) */
	LEAP_SESS_DIED,      /* the child died or broke the protocol */
	LEAP_SESS_TIMEOUT,   /* the deadline passed */
	LEAP_SESS_FREEZE,    /* the child could not be frozen, or ran while frozen (s->last.msg) */
};

/* Starts a runner of host h for `artifact` on backend `b` with regions as `o` says, reads its
 * hello, has it load the artifact, reads the load reply and, when o->freeze, freezes it. Returns
 * an enum leap_sess; -1 with a new message in *err when the harness itself failed (no runner,
 * artifact unreadable, out of descriptors, no way to freeze, a hello that says the runner could
 * not set up: everything before candidate code runs is the harness's, except no device on cuda,
 * which is LEAP_SESS_REPLY with s->last.status LEAP_RUN_NO_DEVICE). A reply after the hello that
 * claims a set-up status has s->last.status LEAP_RUN_FORGED: the candidate's doing. A cuda owner's
 * hello must come after the two descriptors of its client regions (kept in s->dev_fd); a cuda
 * client (o->owner) first has the owner fill those regions with the canary, then inherits the
 * descriptors. */
int leap_session_open(const struct leap_session_host *h, struct leap_session *s, enum leap_backend b,
		      const char *artifact, const struct leap_session_opts *o, char **err);

/* Lays the guard list and canaries out for case d (when it is not the case laid out last). */
void leap_session_layout(struct leap_session *s, const struct leap_case_data *d);

/* Writes the inputs of set `set` into slot `slot` and poisons its outputs. */
void leap_session_stage(struct leap_session *s, const struct leap_case_data *d, uint32_t set, uint32_t slot);

/* leap_session_stage for n sets derived on the spot (leap_case_stage, on up to `threads`
 * threads): their inputs written past the caches (stream.h), so that the block finds none of
 * them in a cache, whatever ran before it; their outputs poisoned (in the cache, as every
 * block's). */
void leap_session_derive(struct leap_session *s, const struct leap_case_data *d, const struct leap_case_recipe *r,
			 uint32_t n, uint32_t fresh_every, unsigned threads);

/* Runs one block: op LEAP_RUN_OP_CALL (or EMPTY) on slots[0..n) of case d; *bt receives the
 * referee's timing. Returns an enum leap_sess. */
int leap_session_block(struct leap_session *s, const struct leap_case_data *d, const uint32_t *slots, uint32_t n,
		       uint32_t op, struct leap_block *bt);

/* Whether a frozen group's CPU usage, `frozen` when it was frozen, then `now`, and `later` two
 * ticks after, moved only by the kernel's accounting and not by work done while frozen: a
 * running task's time is added at ticks and as it switches out, and a task entering the
 * freezer marks its group frozen just before it switches out, so a usage read at once can miss
 * up to a tick of each CPU's task (an honest log_softmax of make demo "used 2.73 ms of CPU while
 * frozen" and failed). Up to a tick per CPU that stands still is the accounting's. */
int leap_session_usage_lag(uint64_t frozen, uint64_t now, uint64_t later, long cpus);

/* The stall of a block that the running clock may leave out: full_ms, the kernel's "full" stall
 * of the child's group over the block, but never more than the block's time less its CPU time
 * (ms - cpu_ms, and never below 0). The kernel finds "full" per CPU and weighs each CPU's by its
 * busy time, so a thread kept waiting on a core another job holds makes a group look stalled
 * while its work runs at full speed on another core. Each instant in which one of its threads
 * ran adds at least that instant to its CPU time, so ms - cpu_ms is never more than the time in
 * which none of them ran: what is left out is such time, and the time kept is never less than
 * the group's CPU time (the kernel's count). A parallel kernel, with more CPU time than wall
 * time, keeps its wall time. */
double leap_block_stall(double ms, double cpu_ms, double full_ms);

/* The first parameter of slot `slot` whose canary was damaged (a write outside its buffer),
 * or -1. */
int leap_session_guards(const struct leap_session *s, const struct leap_case_data *d, uint32_t slot);

/* An owner's data moves (runproto.h, LEAP_RUN_OP_XFER), with an L2 flush after them when
 * `flush`; untimed (the child is thawed for them and frozen again). Returns an enum leap_sess. */
int leap_session_xfer(struct leap_session *s, const struct leap_run_xfer *x, uint32_t n, int flush);

/* Measures the device in the runner (LEAP_RUN_OP_PROBE): copy bandwidth in GB/s and peak
 * FP32 rate in GFLOP/s (0: not measured). Only for runners holding a trusted artifact.
 * Returns an enum leap_sess. */
int leap_session_probe(struct leap_session *s, double *copy_gbs, double *gflops);

/* Ends the session. When the child died, *why receives a new description of how (signal,
 * exit, timeout) and *timeout is 1 when it ran out of time; the child's captured output (at
 * most maxlog bytes) is appended to `log` when not NULL. leap_sandbox_start_error(&s->sb)
 * then says when the sandbox failed before the runner ran: a harness error, never the
 * candidate's. */
void leap_session_end(struct leap_session *s, char **why, int *timeout, struct leap_buf *log, size_t maxlog);

#endif
