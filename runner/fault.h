/* fault.h - the runner's crash report: where the candidate's code faulted, for the feedback. */
#ifndef LEAP_RUNNER_FAULT_H
#define LEAP_RUNNER_FAULT_H

#include <stdint.h>

/* Installs, on an alternate stack, handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and
 * SIGABRT that send one LEAP_RUN_CRASH reply (runproto.h) locating the fault in the artifact
 * loaded as `handle`, then let the signal kill the runner as it would have. Best effort:
 * without them the runner dies the same way, only without the report. */
void fault_report_init(void *handle);

/* The shared regions as this runner mapped them (NULL: none), so that a fault on a guard page
 * names its place in them. */
void fault_data_regions(const void *in, uint64_t in_len, const void *out, uint64_t out_len);

struct leap_run_reply;

/* The runner's last word before signal `sig` kills it, for its handlers (this file's and the
 * filter's SIGSYS): fault_reply_start clears *r and makes it a LEAP_RUN_CRASH reply of `sig`
 * and `call` (the handler writes msg), fault_reply_end sends it and raises `sig` again, which
 * (its handler reset) ends the runner as it would have once the handler returns.
 * Async-signal-safe. */
void fault_reply_start(struct leap_run_reply *r, int sig, uint32_t call);
void fault_reply_end(const struct leap_run_reply *r, int sig);

/* 1 with *off the offset of address a into the artifact when a lies in it, else 0. */
int fault_artifact_offset(uintptr_t a, uint64_t *off);

#endif
