/* filter.c - the runner's system-call filter (seccomp), installed before candidate code loads.
 *
 * The namespaces, the dropped user and the limits of lib/sandbox.c decide what a candidate may
 * reach; this filter takes away the kernel interfaces a kernel computing on buffers has no use
 * for and that widen what a hostile one can attack or learn (SECURITY.md lists each call and
 * why). It is a deny list, not an allow list: the CUDA driver makes many calls (ioctl on its
 * device nodes, mmap of device memory, threads, eventfds, sockets to nvidia-persistenced) that
 * change with its version, and a filter that broke it would fail every cuda candidate.
 *
 * Two actions. A call no legitimate kernel makes is trapped: SIGSYS, whose handler here tells
 * the parent which call it was (a LEAP_RUN_CRASH reply, runproto.h) and lets the runner die
 * of it, so the verdict names the call. A socket of a family other than AF_UNIX fails with
 * EPERM instead, because the C library itself opens some (if_nameindex, getaddrinfo, syslog)
 * and copes with the failure. The candidate may replace the SIGSYS handler: it then forges at
 * most its own message, and the call it trapped is still not made.
 *
 * The rules are runner/policy.h; libseccomp turns them into a BPF program at build time
 * (runner/mkfilter.c), which filter_install loads with one seccomp() call.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fault.h"
#include "filter.h"
#include "filter_bpf.h"
#include "policy.h"
#include "runproto.h"
#include "banned.h"

/* A trapped call: its number (SCMP_SYS, from libseccomp's header only) and its name. */
struct denied {
	int nr;
	const char *name;
};

#define D(x) {SCMP_SYS(x), #x},
static const struct denied trapped[] = {LEAP_TRAPPED(D)};
#undef D

/* The name of trapped call `nr`, or NULL. */
static const char *trapped_name(int nr)
{
	for (size_t i = 0; i < sizeof trapped / sizeof trapped[0]; i++)
		if (trapped[i].nr == nr)
			return trapped[i].name;
	return NULL;
}

/* SIGSYS: tells the parent which call was denied, then dies of the signal (async-signal-safe
 * calls only). */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	struct leap_run_reply r;
	fault_reply_start(&r, sig, LEAP_RUN_CRASH_SYSCALL);
	const char *name = trapped_name(si->si_syscall);
	if (!name && si->si_syscall == SCMP_SYS(clone))
		name = "clone (with a namespace flag)";
	for (size_t i = 0; name && name[i] && i < sizeof r.msg - 1; i++)
		r.msg[i] = name[i];
	fault_reply_end(&r, sig); /* the runner dies of SIGSYS */
}

int filter_install(char *msg, size_t n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL)) {
		snprintf(msg, n, "cannot handle SIGSYS: %s", strerror(errno));
		return -1;
	}
	/* the program libseccomp made at build time (runner/mkfilter.c), for this process and
	 * every thread (the driver's); no_new_privs, which a filter needs without CAP_SYS_ADMIN */
	struct sock_fprog prog = {.len = (unsigned short)(sizeof filter_bpf / sizeof filter_bpf[0]),
				  .filter = (struct sock_filter *)filter_bpf};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(msg, n, "cannot set no_new_privs: %s", strerror(errno));
		return -1;
	}
	long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (rc != 0) { /* with TSYNC, a positive result is a thread that could not take it */
		snprintf(msg, n, "cannot install the system-call filter: %s",
			 rc < 0 ? strerror(errno) : "a thread would not take it");
		return -1;
	}
	return 0;
}
