/* filter.c - the runner's system-call filter (seccomp), installed before candidate code loads.
 *
 * The namespaces, the dropped user and the limits of lib/sandbox/sandbox.c decide what a candidate may
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
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * System-call filter (`runner/filter.c`, libseccomp):
 *
 * The rules are `runner/policy.h`; libseccomp makes the BPF program from them at build time
 * (`build/runner/mkfilter`, which writes `build/runner/filter_bpf.h`), so that no runner
 * compiles rules at its start. The runner installs the program on itself and every thread
 * (`SECCOMP_FILTER_FLAG_TSYNC`, after `no_new_privs`) after its device is set up (the CUDA
 * driver's start-up is not the candidate's) and before the artifact is loaded, so the
 * candidate's constructors are already under it; children inherit it. It is a deny list: the
 * CUDA driver needs `ioctl` on its device nodes, `mmap` of device memory, threads, eventfds,
 * `AF_UNIX` sockets (nvidia-persistenced) and more that changes with its version, and an allow
 * list that broke it would fail every cuda candidate. It applies with or without namespaces
 * (`--no-namespaces` keeps it) and with or without root.
 *
 * Trapped (SIGSYS; the runner's handler tells the parent which call and dies of the signal, so
 * the record is `runtime_error` with "made a system call the sandbox denies (SIGSYS): NAME" and
 * `verify.denied_syscall`; the call is never made):
 *
 * The calls trapped, with why, are the table of SECURITY.md ("The calls the filter denies") and
 * runner/policy.h.
 *
 * Refused with EPERM, quietly: `socket` and `socketpair` of every family but `AF_UNIX`. The C
 * library opens such sockets itself (`if_nameindex`, `getaddrinfo`, `syslog`) and copes with
 * the failure, so a trap would end candidates that never meant harm; the network namespace
 * already leaves only an unconfigured loopback, and netlink, packet and the rest are kernel
 * surface a kernel has no use for. `AF_UNIX` stays for the CUDA driver; the sockets it can
 * reach by path are the mount namespace's question (lib/sandbox/sandbox.c, lib/task/unseen.c).
 *
 * Refused too, quietly, because each shows or changes what of a file is in the page cache,
 * which every sandbox shares (a candidate that evicts a page of a library file both sandboxes
 * map and another that asks whether it is back pass bits between sandboxes, as the red team of
 * issue 26 did with `posix_fadvise(POSIX_FADV_DONTNEED)` and `preadv2(..., RWF_NOWAIT)`):
 * `fadvise64`, `readahead`, `mincore`, `cachestat` and `io_setup` (Linux AIO, whose requests
 * carry `RWF_NOWAIT` where seccomp cannot read it) with EPERM; `madvise` with `MADV_PAGEOUT` or
 * `MADV_COLD` with EPERM (every other advice works: the C library and the CUDA driver use them
 * on their own memory); `preadv2` and `pwritev2` with `RWF_NOWAIT` with EOPNOTSUPP, what a file
 * without that support answers (ordinary calls work). These are hints and queries: a library
 * that makes one copes with its failure.
 *
 * Calls of another architecture's table (`int 0x80`, x32) kill the process (libseccomp's action
 * for a foreign architecture).
 *
 * Stops, with tests in security.bats: "verify: system calls the filter traps end the run with a
 * verdict that names them" (each call of the table's first seven rows but `kcmp`, `pidfd_getfd`
 * and the newer mount calls, one candidate each: a runtime error naming it; `getpid` passes),
 * "verify: clone with a namespace flag is trapped; clone3 answers ENOSYS, threads still start",
 * "verify: a socket of a family other than AF_UNIX fails with EPERM, quietly" (sockets.c:
 * AF_INET, AF_INET6, AF_NETLINK, AF_PACKET fail with EPERM, AF_UNIX works). "verify: the
 * page-cache and residency calls fail, quietly; madvise of its own memory and preadv2 still
 * work" (cache_channel.c: each of the refused calls on `/etc/ld.so.cache`, which every minimal
 * root holds, and the calls that must still work). The rows not named in a test are untested
 * one by one (the same code path). The cuda runner loads the same filter; that the driver works
 * under it is unproven here (needs a GPU: `make check-gpu`).
 *
 * Does not stop: whatever the allowed calls reach (the kernel is trusted; see the threat
 * model); a candidate replacing the SIGSYS handler forges only its own message. And the page
 * cache's timing channels, which no filter closes: one candidate reads a cold page of a library
 * file (a page fault or a `read` that loads it) and another times the same access (microseconds
 * when cached, far more when not), so each page of a rarely used file carries one bit, once,
 * until the kernel evicts it under memory pressure; residency also shows through the kernel's
 * fault-around (touching one page of a file mapping maps its cached neighbours, which
 * `/proc/self/pagemap` and `/proc/self/smaps` of the candidate's own process then show).
 * Untested (a test would time page faults). Shared CPU caches and other microarchitectural
 * state between cores are out of scope, as is the timing of leap's own process (lib/referee/verify.c:
 * the reference is computed in the parent).
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
#include "sandbox/runproto.h"
#include "core/banned.h"

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
