/* runproto.h - the protocol between the referee (leap-verify, leap-bench) and its servant, the
 * sandboxed runner child that loads a candidate. */
#ifndef LEAP_RUNPROTO_H
#define LEAP_RUNPROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why this shape: the runner's process holds candidate code, which may patch anything in it
 * (a constructor runs at load), so nothing it reports is trusted, and nothing the referee
 * relies on may happen there. The runner is a servant: it waits for "go", makes the calls of
 * one block on buffers the referee chose, and answers "done". The referee (the parent) owns the
 * clock (it times from before "go" to after "done", see lib/sandbox/session.c), the inputs (it writes
 * them, from a pool the candidate never sees whole) and the checks (it reads the outputs from
 * its own mapping, after the candidate's processes are frozen). The runner copies nothing back
 * on the host: the candidate's buffers ARE the shared memory the referee reads.
 *
 * Descriptors of the runner (set up by lib/sandbox/sandbox.c):
 *   3 CMD    "go" tokens, referee -> runner (a pipe; struct leap_run_go)
 *   4 REPLY  the hello, the load reply and "done" replies, runner -> referee (a pipe; struct
 *            leap_run_reply)
 *   5 IN     the input region (a memfd): the input slots. When the control page says SEALED
 *            (leap-bench), the memfd carries F_SEAL_FUTURE_WRITE: only the referee's mapping,
 *            made before the seal, can write it; the runner maps it read-only and a candidate
 *            cannot change an input.
 *   6 ART    the artifact (.so), read-only
 *   7 OUT    the output region (a memfd): output (and in-out) slots, each between guard
 *            ranges the cpu runner makes inaccessible and the referee fills with a canary (0xFF:
 *            a NaN in every floating-point type) and checks after every block.
 *   10 CTL   the control region (a memfd, F_SEAL_FUTURE_WRITE where the kernel has it: the
 *            runner maps it read-only): the control page (struct leap_run_ctl), the call
 *            table and the guard list.
 *   11 HANDLES  cuda owner only: a Unix socket to the referee, on which the owner sends the
 *            client regions it made, as POSIX file descriptors of device memory (SCM_RIGHTS,
 *            leap_run_send_fds), before its hello.
 *   12 DEV_IN, 13 DEV_OUT  cuda client only: those two descriptors, inherited; the client
 *            imports and maps them (their sizes are the control page's dev_len).
 * Every memfd is sealed against shrinking and growing, and its seals are sealed
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so that no access of the referee's mappings can
 * fault. The referee never reads anything back from these regions but outputs and canaries,
 * which it checks: every offset, length and count it uses is its own copy. The runner maps the
 * three regions and closes 5, 7 and 10 to 13 before any candidate code runs.
 * argv[1] = the device index (cuda) or "-", argv[2] = the runner's role on cuda
 * ("copy": buffers of its own, copied to and from the host slots around each call, as
 * leap-verify uses it; "client": the device regions of an owner, imported from the descriptors
 * 12 and 13; "owner": a trusted runner holding the baseline, which makes its own and a
 * client's device regions, sends the client's on 11, and moves data between them and the host
 * (LEAP_RUN_OP_XFER)). Device memory goes from owner to client as file descriptors, not as
 * legacy CUDA IPC handles: owner and client each run as PID 2 of a PID namespace of their
 * own, where those handles do not open (issue 27, item 3).
 *
 * Conversation. Start-up is in two steps, so that a message the referee relies on can only
 * come from the runner's own code: (1) trusted set-up: the runner sets up its device, maps
 * the regions, makes the guard ranges inaccessible (cpu), opens device memory (cuda: an owner
 * sends its client's on 11), closes the region and device descriptors, installs its
 * system-call filter and sends the HELLO (seq 0: status OK
 * with the device's name and UUID, or a set-up failure: NO_DEVICE, NOMEM, PROTO); (2) on the
 * go token LEAP_RUN_OP_LOAD it loads the artifact (its constructors run then) and sends the
 * LOAD REPLY (seq 0: OK, LOAD or ABI). Every reply after the hello may be the candidate's
 * forgery: a set-up status there (NO_DEVICE, NOMEM) is never believed (lib/sandbox/session.c).
 * Each block: the referee writes the call table and the block fields of the control page,
 * then writes a go token naming the block's sequence number; the runner checks the page
 * against the token, makes `ncalls` calls (call j's arguments are row j of the table: each a
 * slot of IN or OUT, or a scalar's value) and replies once. A reply's times are the runner's
 * own clock (cuda: events around the block) and serve at most as a cross-check.
 */

enum {
	LEAP_RUN_FD_CMD = 3,
	LEAP_RUN_FD_REPLY = 4,
	LEAP_RUN_FD_IN = 5,
	LEAP_RUN_FD_ART = 6,
	LEAP_RUN_FD_OUT = 7,
	LEAP_RUN_FD_CTL = 10,
	LEAP_RUN_FD_HANDLES = 11,
	LEAP_RUN_FD_DEV_IN = 12,
	LEAP_RUN_FD_DEV_OUT = 13,
};

#define LEAP_RUN_MAGIC 0x4c504133u /* "LPA3" */
#define LEAP_RUN_MAX_FDS 2         /* descriptors sent in one message (leap_run_send_fds) */
#define LEAP_RUN_MAX_PARAMS 64
#define LEAP_RUN_MAX_CALLS 4096    /* calls of one block */
#define LEAP_RUN_MSG 240
#define LEAP_RUN_GUARD 4096        /* bytes of canary (a page) before and after every slot */
#define LEAP_RUN_CANARY 0xFF

/* Exit status of a runner that lost its command or reply channel (the candidate closed or
 * overwrote its descriptors); the referee never closes them while it waits for an answer. */
#define LEAP_RUN_EXIT_LOST 125

/* Operations of a block (struct leap_run_ctl.op, echoed by the go token).
 * CALL: the calls of the table. EMPTY: the same walk over the table without calling (the
 * referee's calibration of what a block costs beyond its calls; only asked of a trusted
 * runner). PROBE: measure the device (copy GB/s and FP32 GFLOP/s in the reply's aux; trusted
 * runners only). XFER: an owner's data moves (struct leap_run_xfer rows in the table). QUIT:
 * exit. LOAD (seq 0, once, after the hello): load the artifact. */
enum leap_run_op { LEAP_RUN_OP_CALL = 1, LEAP_RUN_OP_QUIT = 2, LEAP_RUN_OP_PROBE = 3, LEAP_RUN_OP_EMPTY = 4,
		   LEAP_RUN_OP_XFER = 5, LEAP_RUN_OP_LOAD = 6 };

/* Status of a reply. */
enum leap_run_status {
	LEAP_RUN_OK = 0,
	LEAP_RUN_LOAD = 1,      /* the artifact could not be loaded (message says why) */
	LEAP_RUN_ABI = 2,       /* missing leap_entry / leap_abi_version, or a wrong version */
	LEAP_RUN_CALL = 3,      /* leap_entry returned non-zero (cuda: the launch error) */
	LEAP_RUN_DEVICE = 4,    /* a CUDA error during or after the call (message names it) */
	LEAP_RUN_NO_DEVICE = 5, /* no usable GPU (the hello only) */
	LEAP_RUN_OVERRUN = 6,   /* a write past the end of a buffer (found by the referee) */
	LEAP_RUN_PROTO = 7,     /* a malformed command (a bug, or a scribbled descriptor) */
	LEAP_RUN_NOMEM = 8,     /* the runner could not make its regions (the hello only) */
	LEAP_RUN_CRASH = 9,     /* the runner's last word before a fault kills it (runner/fault.c):
				 * code = the signal, msg = "0x..." the offset into the artifact,
				 * call = 0 the faulting instruction, 1 the candidate's call into the
				 * function that faulted, 2 not found; for SIGSYS (runner/filter.c)
				 * call = LEAP_RUN_CRASH_SYSCALL and msg the denied call's name.
				 * Feedback only: forgeable. */
	LEAP_RUN_FORGED = 10,   /* never sent: lib/sandbox/session.c gives it to a reply after the hello
				 * whose status only the trusted set-up may send (its message then
				 * quotes the claim) */
	LEAP_RUN_HEAP = 11,     /* cpu: the block's calls wrote past the end of a block the code
				 * allocated itself (runner/heap.c): code = 1 + the allocating call's
				 * offset into the artifact (0: not the artifact's), msg = the words.
				 * Forgeable, and only ever a failure. */
};

/* `call` of a LEAP_RUN_CRASH reply for a system call the filter denied. */
#define LEAP_RUN_CRASH_SYSCALL 3

/* Kind of a parameter as the runner sees it. */
enum leap_run_kind { LEAP_RUN_K_SCALAR = 0, LEAP_RUN_K_IN = 1, LEAP_RUN_K_OUT = 2, LEAP_RUN_K_INOUT = 3 };

/* A parameter of a case as the referee describes it (lib/referee/case.c). */
struct leap_run_param {
	uint32_t kind;    /* enum leap_run_kind */
	uint32_t elsize;  /* bytes per element (buffers) */
	uint64_t bytes;   /* buffer size in bytes (0 for scalars) */
	uint8_t poison[8]; /* the poison element written to outputs before each call */
	uint8_t value[8];  /* scalars: the value in the parameter's C type */
};

/* Flags of the control page. */
enum leap_run_ctl_flags {
	LEAP_RUN_CTL_SEALED = 1 << 0, /* IN is sealed: map it read-only */
	LEAP_RUN_CTL_FLUSH_L2 = 1 << 1, /* cuda owner: flush the L2 cache after this XFER */
	LEAP_RUN_CTL_LAZY = 1 << 2,   /* map the regions without populating them (cuda: the host
				       * regions are staging, mostly never touched) */
};

/* The control page, at offset 0 of CTL. The first part is fixed for the session; the block
 * part is rewritten before each go. The referee writes it and never reads it back. */
struct leap_run_ctl {
	uint32_t magic, flags;
	uint64_t in_len, out_len;   /* sizes of IN and OUT (what the runner maps) */
	uint64_t guards_off;        /* offset in CTL of `nguards` struct leap_run_range: the ranges
				     * (offsets as below) the cpu runner makes inaccessible (runplan.h) */
	uint32_t nguards, nparams;  /* nparams: the width of a call-table row */
	uint64_t table_off, table_cap; /* offset in CTL of the call table and its size in bytes */
	uint64_t ctl_len;           /* size of CTL */
	uint64_t dev_len[2];        /* cuda client: bytes of the device allocations behind 12 and 13
				     * (the owner's hello said them) */
	uint64_t pool_len;          /* cuda owner: bytes of its device pool of input sets */
	/* the block */
	uint64_t seq;
	uint32_t op, ncalls;        /* CALL/EMPTY: rows of nparams struct leap_run_arg; XFER: rows
				     * of one struct leap_run_xfer */
	uint64_t guard_gen;         /* changes when the guard list changes (a case of another
				     * size): the runner then applies the new list */
};

struct leap_run_range {
	uint64_t off, len;
};

/* Where an argument lives. */
enum leap_run_region { LEAP_RUN_R_IN = 0, LEAP_RUN_R_OUT = 1 };

/* One argument of one call. */
struct leap_run_arg {
	uint32_t kind;     /* enum leap_run_kind */
	uint32_t region;   /* enum leap_run_region (buffers) */
	uint64_t off;      /* offset of the buffer in its region */
	uint64_t bytes;    /* its size */
	uint8_t value[8];  /* scalars: the value */
};

/* An owner's data move (cuda): copy `len` bytes, or fill them with the `elsize`-byte pattern
 * when src_space is LEAP_RUN_S_FILL. Spaces: the host regions (the owner's own IN and OUT
 * mappings), its device regions, the client's, and its pool of input sets on the device. */
enum leap_run_space {
	LEAP_RUN_S_HOST_IN = 0, LEAP_RUN_S_HOST_OUT, LEAP_RUN_S_DEV_IN, LEAP_RUN_S_DEV_OUT, LEAP_RUN_S_CLIENT_IN,
	LEAP_RUN_S_CLIENT_OUT, LEAP_RUN_S_POOL, LEAP_RUN_S_FILL, LEAP_RUN_NSPACES
};
struct leap_run_xfer {
	uint32_t src_space, dst_space;
	uint64_t src_off, dst_off, len;
	uint8_t pattern[8];
	uint32_t elsize, pad;
};

/* The go token of a block. */
struct leap_run_go {
	uint32_t magic, op;
	uint64_t seq;
};

/* The hello and every block's reply. */
struct leap_run_reply {
	uint32_t magic;
	int32_t status;   /* enum leap_run_status */
	int32_t code;     /* the leap_entry return value or CUDA error code, when relevant */
	uint32_t call;    /* the call of the block (0-based) the status refers to */
	uint64_t seq;     /* the block answered (0: the hello) */
	double aux[2];    /* PROBE: copy GB/s, FP32 GFLOP/s; CALL: the runner's own ms (cross-check) */
	uint64_t dev_len[2]; /* cuda owner's hello: bytes of the client's device IN and OUT, whose
			      * descriptors it sent on 11 before */
	uint8_t uuid[16];   /* the hello: the device's UUID (cuda; zero on cpu) */
	char msg[LEAP_RUN_MSG]; /* NUL-terminated: the device (hello) or what failed */
};

/* Offsets name a place in either region: an offset below LEAP_RUN_OUT_BASE is in IN, one at or
 * above it is in OUT at (offset - LEAP_RUN_OUT_BASE). The referee maps OUT that far after IN
 * (the span between is reserved, inaccessible), so that one base pointer reaches the slots of
 * every case, whatever the size of its inputs. */
#define LEAP_RUN_OUT_BASE (1ull << 40)

/* The layout of a case in IN and OUT for `nslots` slots (the calls of a block). For slot s and
 * parameter p (index s * nparams + p): in[] the offset of an input buffer (for an in-out
 * buffer: its place in OUT, where its input is written), out[] the offset of an output or
 * in-out buffer; after[] = in[] for inputs (they are checked in place) and out[] otherwise.
 * Both regions start with a guard; every slot lies between LEAP_RUN_GUARD-byte guards, its
 * buffer ending 64-byte aligned just before the upper guard. Returns LEAP_RUN_OUT_BASE + the
 * size of OUT (0 on overflow); *in_len and *out_len receive the sizes of IN and OUT (page
 * multiples). in/out/after may be NULL. */
uint64_t leap_run_layout(const struct leap_run_param *p, uint32_t nparams, uint32_t nslots, uint64_t *in,
			 uint64_t *out, uint64_t *after);
uint64_t leap_run_layout2(const struct leap_run_param *p, uint32_t nparams, uint32_t nslots, uint64_t *in,
			  uint64_t *out, uint64_t *after, uint64_t *in_len, uint64_t *out_len);

/* The ranges around the buffer at `off` of `bytes` (as leap_run_layout placed it) that must hold
 * the canary: the guard before, the slack before the buffer, the slack after it, the guard
 * after. */
void leap_run_canary_ranges(uint64_t off, uint64_t bytes, struct leap_run_range r[4]);

/* The call table's offset in CTL and its size for `calls` rows of `nparams` arguments; the
 * guard list's offset after it and its capacity (entries) for `nslots` slots; the size of CTL
 * (a page multiple, 0 on overflow). */
uint64_t leap_run_table_off(void);
uint64_t leap_run_table_bytes(uint32_t nparams, uint32_t calls);
uint64_t leap_run_guards_off(uint32_t nparams, uint32_t calls);
uint64_t leap_run_guards_cap(uint32_t nparams, uint32_t nslots);
uint64_t leap_run_ctl_len(uint32_t nparams, uint32_t calls, uint32_t nslots);

/* Sends descriptors fds[0..n) (1 <= n <= LEAP_RUN_MAX_FDS) with one byte over the Unix socket
 * `sock` (SCM_RIGHTS): the cuda owner's device memory to the referee. Returns 0, or -1 (errno). */
int leap_run_send_fds(int sock, const int *fds, int n);

/* Receives exactly n descriptors sent by leap_run_send_fds into fds[], close-on-exec. With
 * `nowait`, fails at once (EAGAIN) when nothing is waiting. Anything else (fewer or more
 * descriptors, other control data, a truncated message) fails with EPROTO, every descriptor
 * that came closed; the end of the stream with ECONNRESET. Returns 0, or -1 (errno). */
int leap_run_recv_fds(int sock, int *fds, int n, int nowait);

#ifdef __cplusplus
}
#endif

#endif
