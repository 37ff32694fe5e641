/* fault.h - the runner's crash report: where the candidate's code faulted, for the feedback. */
#ifndef LEAP_RUNNER_FAULT_H
#define LEAP_RUNNER_FAULT_H

#include <stdint.h>

/* Installs, on an alternate stack, handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and
 * SIGABRT that send one LEAP_RUN_CRASH reply (runproto.h) locating the fault in the artifact
 * loaded as `handle`, then let the signal kill the runner as it would have. Best effort:
 * without them the runner dies the same way, only without the report. */
void fault_report_init(void *handle);

/* 1 with *off the offset of address a into the artifact when a lies in it, else 0. */
int fault_artifact_offset(uintptr_t a, uint64_t *off);

#endif
