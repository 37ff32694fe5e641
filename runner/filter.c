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
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "filter.h"
#include "runproto.h"
#include "banned.h"

/* A trapped call: its number (SCMP_SYS: a negative pseudo-number where the architecture has no
 * such call, which libseccomp skips) and its name for the verdict. */
struct denied {
	int nr;
	const char *name;
};

#define D(x) {SCMP_SYS(x), #x}
static const struct denied trapped[] = {
	/* reading or changing other processes' memory and registers */
	D(ptrace), D(process_vm_readv), D(process_vm_writev), D(kcmp), D(pidfd_getfd),
	/* changing the file system view: the sandbox's mounts are its walls */
	D(mount), D(umount2), D(pivot_root), D(chroot), D(move_mount), D(open_tree), D(fsopen),
	D(fsconfig), D(fsmount), D(fspick), D(mount_setattr),
	/* new namespaces (unprivileged user namespaces are a large kernel attack surface) */
	D(unshare), D(setns),
	/* the kernel keyring: shared per user, it outlives the sandbox */
	D(keyctl), D(add_key), D(request_key),
	/* in-kernel programs, profiling counters, page-fault handling: frequent exploit vectors */
	D(bpf), D(perf_event_open), D(userfaultfd),
	/* io_uring: a second system-call interface that seccomp cannot see into */
	D(io_uring_setup), D(io_uring_enter), D(io_uring_register),
	/* kernel modules and kexec */
	D(init_module), D(finit_module), D(delete_module), D(kexec_load), D(kexec_file_load),
	/* personality (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE weaken the address-space defences) */
	D(personality),
	/* the machine's state */
	D(reboot), D(swapon), D(swapoff), D(settimeofday), D(clock_settime), D(clock_adjtime),
	D(adjtimex), D(acct), D(quotactl), D(syslog), D(vhangup), D(lookup_dcookie),
	D(open_by_handle_at), D(name_to_handle_at),
	/* clone with a namespace flag is handled below; clone3 passes its flags in memory,
	 * which seccomp cannot read, and answers ENOSYS (the C library then uses clone) */
};
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
	memset(&r, 0, sizeof r);
	r.magic = LEAP_RUN_MAGIC;
	r.status = LEAP_RUN_CRASH;
	r.code = sig;
	r.call = LEAP_RUN_CRASH_SYSCALL;
	const char *name = trapped_name(si->si_syscall);
	if (!name && si->si_syscall == SCMP_SYS(clone))
		name = "clone (with a namespace flag)";
	for (size_t i = 0; name && name[i] && i < sizeof r.msg - 1; i++)
		r.msg[i] = name[i];
	ssize_t w = write(LEAP_RUN_FD_REPLY, &r, sizeof r);
	(void)w; /* the wait status still says SIGSYS */
	raise(sig); /* the handler was reset: the runner dies of SIGSYS */
}

/* Adds the filter's rules to ctx. Returns 0 or a negative errno of libseccomp. */
static int add_rules(scmp_filter_ctx ctx)
{
	int rc;
	for (size_t i = 0; i < sizeof trapped / sizeof trapped[0]; i++)
		if (trapped[i].nr >= 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, trapped[i].nr, 0)) < 0)
			return rc;
	const uint64_t ns = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
			    CLONE_NEWCGROUP;
	/* each namespace flag its own rule: a rule's conditions are joined by "and" */
	for (int b = 0; b < 64; b++)
		if ((ns >> b) & 1 &&
		    (rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(clone), 1,
					   SCMP_A0(SCMP_CMP_MASKED_EQ, 1ull << b, 1ull << b))) < 0)
			return rc;
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0 ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				   SCMP_A0(SCMP_CMP_NE, AF_UNIX))) < 0 ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
				   SCMP_A0(SCMP_CMP_NE, AF_UNIX))) < 0)
		return rc;
	return 0;
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
	/* Everything not named is allowed; calls of another architecture's table (int 0x80, x32)
	 * kill the process (libseccomp's default for a foreign architecture). */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(msg, n, "cannot make the system-call filter");
		return -1;
	}
	int rc = add_rules(ctx);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1); /* the driver's threads too */
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		snprintf(msg, n, "cannot install the system-call filter: %s", strerror(-rc));
		return -1;
	}
	return 0;
}
