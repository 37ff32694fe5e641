/* crash.h - the runner's crash report: where the candidate's code faulted, for the feedback. */
#ifndef LEAP_RUNNER_CRASH_H
#define LEAP_RUNNER_CRASH_H

/* Installs, on an alternate stack, handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and
 * SIGABRT that send one LEAP_RUN_CRASH reply (runproto.h) locating the fault in the artifact
 * loaded as `handle`, then let the signal kill the runner as it would have. Best effort:
 * without them the runner dies the same way, only without the report. */
void crash_report_init(void *handle);

#endif
