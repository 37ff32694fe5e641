/* sig.h - an orderly end on SIGINT, SIGTERM and SIGHUP: the handler only records the signal. */
#ifndef LEAP_SIG_H
#define LEAP_SIG_H

#include <stdnoreturn.h>

/*
 * A program that must clean up before it ends (kill its sandboxes, remove temporary
 * directories, finish its last output line) calls leap_signals_install() once in main. The
 * handler does nothing but store the signal number in the one piece of global state a
 * handler needs: a volatile sig_atomic_t private to sig.c. The program polls
 * leap_signal_caught() at every point where it waits (poll, between records), stops
 * starting work, cleans up, and calls leap_signal_exit().
 *
 * The handlers use SA_RESTART (reads of the input and writes of the output are restarted,
 * so a record is never cut short by the signal; waits in poll() do end with EINTR) and
 * SA_RESETHAND: a second signal of the same kind takes the default action at once, the way
 * out when the cleanup itself cannot go on (say, the output pipe is stalled). Forked
 * children inherit the handlers and the flag.
 */

/* Installs the handlers for SIGINT, SIGTERM and SIGHUP, except for a signal ignored on
 * entry (nohup, a background job of a non-interactive shell), which stays ignored. Returns
 * 0, or -1 with errno set. */
int leap_signals_install(void);

/* In a forked worker: the same handlers without SA_RESETHAND, so that a second signal (the
 * parent's SIGTERM after a terminal's SIGINT to the whole group) never cuts its cleanup
 * short; a worker that does not end is killed by its parent after a grace period. Returns 0,
 * or -1 with errno set. */
int leap_signals_install_worker(void);

/* The ending signal caught so far (the first one), or 0. Async-signal-safe. */
int leap_signal_caught(void);

/* Ends the process the Unix way after the cleanup: restores the default action of `sig`,
 * unblocks it and raises it, so that the parent sees "killed by sig" (a shell: status
 * 128 + sig); should the signal not end the process, exits with 128 + sig. */
noreturn void leap_signal_exit(int sig);

#endif
