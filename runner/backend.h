/* backend.h - what the runner needs from a backend: device set-up, buffers, one timed call. */
#ifndef LEAP_RUNNER_BACKEND_H
#define LEAP_RUNNER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "runproto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every function that can fail returns an enum leap_run_status and, on failure, writes a
 * short NUL-terminated reason (no paths) into msg[LEAP_RUN_MSG]. The backend's state (the
 * device, events, scratch buffers) lives in a struct rb made by rb_init and passed to all. */
struct rb;

/* Prepares the backend; `device` is argv[1] of the runner ("-" or a GPU index). On success
 * *b is the new state and msg holds the device's name ("NVIDIA H200", or the CPU model). */
int rb_init(struct rb **b, const char *device, char *msg);

/* A buffer of `bytes` bytes for the candidate, followed (and, on cpu, preceded) by a guard
 * region filled with a canary and, on cpu, an inaccessible page. NULL when out of memory. */
void *rb_alloc(struct rb *b, uint64_t bytes);
void rb_free(struct rb *b, void *buf, uint64_t bytes);
/* 1 when the canary around the buffer is intact, 0 when the candidate wrote past it. */
int rb_guard_ok(struct rb *b, const void *buf, uint64_t bytes);

/* Copies host memory into a buffer and back. */
int rb_upload(struct rb *b, void *buf, const void *host, uint64_t bytes, char *msg);
int rb_download(struct rb *b, void *host, const void *buf, uint64_t bytes, char *msg);
/* 1 when buffers live in device memory (uploads are expensive, device copies cheap). */
int rb_is_device(const struct rb *b);
/* Copies between two buffers of this backend. */
int rb_copy(struct rb *b, void *dst, const void *src, uint64_t bytes, char *msg);
/* Fills the buffer with the elsize-byte pattern (the poison). */
int rb_poison(struct rb *b, void *buf, uint64_t bytes, const uint8_t *pattern, uint32_t elsize, char *msg);

/* Calls entry(args) once and times it (flags: LEAP_RUN_F_*). On LEAP_RUN_CALL, *code is
 * leap_entry's return value; on LEAP_RUN_DEVICE, the CUDA error. */
int rb_call(struct rb *b, leap_entry_fn entry, void *const *args, uint32_t flags, struct leap_run_time *t, int *code, char *msg);

/* Measures the device: copy bandwidth in GB/s (read + write) and peak FP32 rate in GFLOP/s
 * (0 when the backend does not measure it). */
int rb_probe(struct rb *b, double *copy_gbs, double *gflops, char *msg);

#ifdef __cplusplus
}
#endif

#endif
