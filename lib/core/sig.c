/* sig.c - an orderly end on SIGINT, SIGTERM and SIGHUP: the handler only records the signal. */
/*
 * How a program ends on a signal is sig.h's comment. This file holds the library's one piece of
 * mutable global state, because a signal handler can reach nothing else: the handler stores the
 * first signal and returns, and everything that cleans up runs in the program's own flow, where
 * it may call anything. The signal is re-raised at the end so that a caller sees the program
 * die of it, as a shell expects.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "sig.h"
#include "banned.h"

/* The only global mutable state of the signal handling: written by the handler (the first
 * signal wins), read by leap_signal_caught(). */
static volatile sig_atomic_t caught;

/* The handler: records the signal and nothing else (async-signal-safe). */
static void on_signal(int sig)
{
	if (!caught)
		caught = sig;
}

/* Installs on_signal with `flags` for the ending signals not ignored on entry. */
static int install(int flags)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old))
			return -1;
		if (old.sa_handler == SIG_IGN)
			continue; /* ignored on entry (nohup, a background job of a script): stays so */
		if (sigaction(sigs[i], &sa, NULL))
			return -1;
	}
	return 0;
}

int leap_signals_install(void)
{
	return install(SA_RESTART | SA_RESETHAND);
}

int leap_signals_install_worker(void)
{
	return install(SA_RESTART);
}

int leap_signal_caught(void)
{
	return caught;
}

void leap_signal_exit(int sig)
{
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}
