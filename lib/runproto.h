/* runproto.h - the protocol between leap-verify/leap-bench and the sandboxed runner child. */
#ifndef LEAP_RUNPROTO_H
#define LEAP_RUNPROTO_H

#include <stddef.h>
#include <stdint.h>

/*
 * The parent (leap-verify, leap-bench) starts a runner (libexec/leap-run-cpu or
 * leap-run-cuda) in a sandbox with four descriptors:
 *
 *   fd LEAP_RUN_FD_CMD    commands, parent -> runner (pipe)
 *   fd LEAP_RUN_FD_REPLY  replies, runner -> parent (pipe)
 *   fd LEAP_RUN_FD_SHM    the shared I/O arena (a memfd, MAP_SHARED by both)
 *   fd LEAP_RUN_FD_ART    the artifact (.so), opened read-only by the parent
 *
 * and argv[1] = the device index (cuda) or "-". The runner first sends a hello reply
 * (status LEAP_RUN_OK, or an error such as LEAP_RUN_NO_DEVICE, LEAP_RUN_LOAD with a
 * message). Then, for each command, it runs the artifact's leap_entry `warmup + ncalls`
 * times and answers with one reply followed by `ncalls` struct leap_run_time.
 *
 * The arena holds, for each of `nsets` input sets and each buffer parameter p (in the
 * task's order), three slots of bytes[p] each: IN (the parent's inputs, never written by
 * the runner), OUT (the buffer after the call, for out and inout parameters) and AFTER
 * (for in parameters: the buffer after the call, so the parent can tell it was left
 * unchanged). leap_run_layout() computes the offsets; both sides use it. Call i uses set
 * (first + i) % nsets: the runner copies IN into its own guarded buffers (poisoning outputs with
 * the parameter's poison pattern), calls, and copies the buffers to OUT/AFTER. The arena
 * never holds a reference result, so the candidate cannot see the expected answer.
 *
 * The parent trusts nothing a reply says beyond "the runner got this far": every output
 * is checked by the parent itself.
 */

enum { LEAP_RUN_FD_CMD = 3, LEAP_RUN_FD_REPLY = 4, LEAP_RUN_FD_SHM = 5, LEAP_RUN_FD_ART = 6 };

#define LEAP_RUN_MAGIC 0x4c504131u /* "LPA1" */
#define LEAP_RUN_MAX_PARAMS 64
#define LEAP_RUN_MSG 240

/* Exit status of a runner that lost its command or reply channel (the candidate closed or
 * overwrote its descriptors); the parent never closes them while it waits for an answer. */
#define LEAP_RUN_EXIT_LOST 125

/* CALL: run the artifact (above). QUIT: exit. PROBE: measure the device (no parameters);
 * the reply carries one struct leap_run_time with ms = copy bandwidth in GB/s (read + write
 * of a large device-to-device copy) and host_ms = peak FP32 FMA rate in GFLOP/s (0 when not
 * measured). The parent probes only runners holding a trusted artifact (the baseline). */
enum leap_run_op { LEAP_RUN_OP_CALL = 1, LEAP_RUN_OP_QUIT = 2, LEAP_RUN_OP_PROBE = 3 };

enum leap_run_flags {
	LEAP_RUN_F_FLUSH_L2 = 1 << 0, /* cuda: flush the L2 cache before each call */
	LEAP_RUN_F_PIN = 1 << 1,      /* cpu: pin the runner to one CPU */
	LEAP_RUN_F_AFTER = 1 << 2,    /* copy in-parameters back to AFTER after each call */
	LEAP_RUN_F_LAST_OUT = 1 << 3, /* copy outputs back only after the last nsets calls */
};

/* Status of a reply. */
enum leap_run_status {
	LEAP_RUN_OK = 0,
	LEAP_RUN_LOAD = 1,      /* the artifact could not be loaded (message says why) */
	LEAP_RUN_ABI = 2,       /* missing leap_entry / leap_abi_version, or a wrong version */
	LEAP_RUN_CALL = 3,      /* leap_entry returned non-zero (cuda: the launch error) */
	LEAP_RUN_DEVICE = 4,    /* a CUDA error during or after the call (message names it) */
	LEAP_RUN_NO_DEVICE = 5, /* no usable GPU */
	LEAP_RUN_OVERRUN = 6,   /* a write past the end of a buffer (guard canary damaged) */
	LEAP_RUN_PROTO = 7,     /* a malformed command (a bug, or a scribbled descriptor) */
	LEAP_RUN_NOMEM = 8,     /* the runner could not allocate the buffers */
	LEAP_RUN_CRASH = 9,     /* the runner's last word before a fault kills it (runner/crash.c):
				 * code = the signal, msg = "0x..." the offset into the artifact,
				 * param = 0 the faulting instruction, 1 the candidate's call into the
				 * function that faulted, 2 not found. Feedback only: forgeable. */
};

/* Kind of a buffer parameter as the runner sees it. */
enum leap_run_kind { LEAP_RUN_K_SCALAR = 0, LEAP_RUN_K_IN = 1, LEAP_RUN_K_OUT = 2, LEAP_RUN_K_INOUT = 3 };

struct leap_run_param {
	uint32_t kind;    /* enum leap_run_kind */
	uint32_t elsize;  /* bytes per element (buffers) */
	uint64_t bytes;   /* buffer size in bytes (0 for scalars) */
	uint8_t poison[8]; /* the poison element written to outputs before each call */
	uint8_t value[8];  /* scalars: the value in the parameter's C type */
};

struct leap_run_cmd {
	uint32_t magic, op;
	uint32_t nparams, nsets;
	uint32_t warmup, ncalls;
	uint32_t flags, first; /* first: call i uses set (first + i) % nsets */
	uint64_t arena;   /* bytes of the arena the parent made (the runner maps this much) */
	/* followed by nparams struct leap_run_param */
};

struct leap_run_reply {
	uint32_t magic;
	int32_t status;   /* enum leap_run_status */
	int32_t code;     /* the leap_entry return value or CUDA error code, when relevant */
	uint32_t ncalls;  /* number of struct leap_run_time that follow */
	uint32_t call;    /* the call (0-based, warm-up included) the status refers to */
	uint32_t param;   /* the parameter an OVERRUN refers to */
	char msg[LEAP_RUN_MSG]; /* NUL-terminated text for errors */
};

/* Per timed call: the kernel time (cpu: monotonic clock around the call; cuda: CUDA
 * events around the launch) and the host time (monotonic clock from just before the
 * launch to the end of the synchronisation). */
struct leap_run_time {
	double ms, host_ms;
};

/* Offsets of the slots of a set/parameter in the arena, 64-byte aligned. Returns the
 * arena size in bytes, or 0 when it would overflow. in/out/after (each nsets*nparams
 * entries, index set*nparams + p) may be NULL. */
uint64_t leap_run_layout(const struct leap_run_param *p, uint32_t nparams, uint32_t nsets, uint64_t *in,
			 uint64_t *out, uint64_t *after);

/* Reads/writes exactly n bytes, retrying on EINTR. Returns 0, or -1 (error or EOF). */
int leap_read_full(int fd, void *buf, size_t n);
int leap_write_full(int fd, const void *buf, size_t n);

#endif
