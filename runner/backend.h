/* backend.h - what the runner needs from a backend: the device, its regions, one call. */
#ifndef LEAP_RUNNER_BACKEND_H
#define LEAP_RUNNER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "compile/abi.h"
#include "sandbox/runproto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every function that can fail returns an enum leap_run_status and, on failure, writes a
 * short NUL-terminated reason (no paths) into msg[LEAP_RUN_MSG]. The backend's state lives in
 * a struct rb made by rb_init and passed to all. The runner (run.c) maps the host regions,
 * validates every offset the referee sends, and calls these in this order: rb_init,
 * rb_regions (before any candidate code is loaded, so that a failure there is the machine's,
 * never the candidate's), then per block rb_block_begin, rb_call per call, rb_block_end. */
struct rb;

/* Prepares the backend; `device` is argv[1] ("-" or a GPU index) and `role` argv[2] (cuda:
 * "copy", "client" or "owner"; cpu: "trusted" for the torch baseline, which skips the heap
 * check, else ignored). On success *b is the new state, msg holds the
 * device's name ("NVIDIA H200", or the CPU model) and uuid its UUID (zeros on cpu). */
int rb_init(struct rb **b, const char *device, const char *role, char *msg, uint8_t uuid[16]);

/* Device memory shared between a cuda owner and its client, as POSIX file descriptors. */
struct rb_devmem {
	int imp[2];          /* client: the owner's regions to import (LEAP_RUN_FD_DEV_IN, _OUT) */
	uint64_t imp_len[2]; /* ... and their allocations' sizes (the control page's dev_len) */
	int exp[2];          /* owner: the client regions it made, exported (-1: none); the
			      * runner sends them to the referee before the hello and closes them */
	uint64_t exp_len[2]; /* ... and their sizes, which the hello carries */
};

/* Gives the backend the host regions the runner mapped (IN read-only when the control page
 * says SEALED) and the control page; the backend makes the regions the candidate's pointers
 * will point into (cpu: the host regions themselves; cuda: device memory of its own, or an
 * owner's, imported from dm->imp). An owner exports the client regions it made into dm->exp. */
int rb_regions(struct rb *b, unsigned char *in, uint64_t in_len, unsigned char *out, uint64_t out_len,
	       const struct leap_run_ctl *ctl, struct rb_devmem *dm, char *msg);

/* 1 when the candidate's pointers point into the host regions (cpu): only then are their
 * guard ranges made inaccessible (runplan.h, leap_run_protects). */
int rb_host_pointers(const struct rb *b);

/* The base address of region r (enum leap_run_region) as the candidate sees it. */
unsigned char *rb_base(struct rb *b, int r);

/* Brackets the calls of one block. rb_block_end waits for the device and reports any error
 * the calls left (cuda), and writes the backend's own time of the block in ms (the runner's
 * clock: a cross-check only). */
int rb_block_begin(struct rb *b, char *msg);
int rb_block_end(struct rb *b, double *own_ms, int *code, char *msg);

/* Makes one call: entry(args), where row[] describes the arguments (a copy-mode backend
 * moves the host slots to and from its own buffers around the call). On LEAP_RUN_CALL, *code
 * is leap_entry's return value; on LEAP_RUN_DEVICE, the CUDA error. */
int rb_call(struct rb *b, leap_entry_fn entry, void *const *args, const struct leap_run_arg *row, uint32_t nparams,
	    int *code, char *msg);

/* An owner's data moves (runproto.h, LEAP_RUN_OP_XFER); LEAP_RUN_PROTO where the backend
 * has no owner role. `flush_l2`: evict the device's L2 cache afterwards. */
int rb_xfer(struct rb *b, const struct leap_run_xfer *x, uint32_t n, int flush_l2, char *msg);

/* Measures the device: copy bandwidth in GB/s (read + write) and peak FP32 rate in GFLOP/s
 * (0 when the backend does not measure it). */
int rb_probe(struct rb *b, double *copy_gbs, double *gflops, char *msg);

#ifdef __cplusplus
}
#endif

#endif
