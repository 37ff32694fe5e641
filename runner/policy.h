/* policy.h - what the runner's system-call filter denies: one list, read twice.
 *
 * build/runner/mkfilter (runner/mkfilter.c) links libseccomp at build time, makes the filter
 * from these rules and writes its BPF program as C (build/runner/filter_bpf.h); the runner
 * (runner/filter.c) installs that program with one seccomp() call and names a trapped call
 * from LEAP_TRAPPED. Compiling the rules in every runner cost more than the rest of its
 * start-up save the exec (bench/README.md section 3), and the rules never change at run time.
 * SECURITY.md lists each call and why.
 *
 * Trapped calls (SIGSYS; the runner's handler names the call in its verdict). SCMP_SYS gives
 * a negative pseudo-number where the architecture has no such call, which libseccomp skips.
 * Besides these: clone with a namespace flag is trapped; clone3, which passes its flags in
 * memory seccomp cannot read, answers ENOSYS (the C library then uses clone); socket and
 * socketpair of a family other than AF_UNIX answer EPERM (runner/mkfilter.c); so do the calls
 * below, and madvise with MADV_PAGEOUT or MADV_COLD; preadv2 and pwritev2 with RWF_NOWAIT
 * answer EOPNOTSUPP (as where a file does not support it). */
#ifndef LEAP_RUNNER_POLICY_H
#define LEAP_RUNNER_POLICY_H

#define LEAP_TRAPPED(D)                                                                                        \
	/* reading or changing other processes' memory and registers */                                       \
	D(ptrace) D(process_vm_readv) D(process_vm_writev) D(kcmp) D(pidfd_getfd)                              \
	/* changing the file system view: the sandbox's mounts are its walls */                               \
	D(mount) D(umount2) D(pivot_root) D(chroot) D(move_mount) D(open_tree) D(fsopen) D(fsconfig)          \
	D(fsmount) D(fspick) D(mount_setattr)                                                                  \
	/* new namespaces (unprivileged user namespaces are a large kernel attack surface) */                 \
	D(unshare) D(setns)                                                                                    \
	/* the kernel keyring: shared per user, it outlives the sandbox */                                    \
	D(keyctl) D(add_key) D(request_key)                                                                    \
	/* in-kernel programs, profiling counters, page-fault handling: frequent exploit vectors */           \
	D(bpf) D(perf_event_open) D(userfaultfd)                                                               \
	/* io_uring: a second system-call interface that seccomp cannot see into */                           \
	D(io_uring_setup) D(io_uring_enter) D(io_uring_register)                                               \
	/* kernel modules and kexec */                                                                         \
	D(init_module) D(finit_module) D(delete_module) D(kexec_load) D(kexec_file_load)                       \
	/* personality (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE weaken the address-space defences) */            \
	D(personality)                                                                                         \
	/* the machine's state */                                                                              \
	D(reboot) D(swapon) D(swapoff) D(settimeofday) D(clock_settime) D(clock_adjtime) D(adjtimex) D(acct)  \
	D(quotactl) D(syslog) D(vhangup) D(lookup_dcookie) D(open_by_handle_at) D(name_to_handle_at)

/* Refused calls (EPERM, quietly: they are hints or queries, and a library that makes one copes
 * with its failure). Each is a way to see or change what of a file is in the page cache, which
 * every sandbox shares: evicting pages (fadvise DONTNEED), loading them ahead (readahead),
 * asking which are resident (mincore, cachestat). A candidate that evicts a page of a library
 * file and another that asks whether it is back pass bits between sandboxes. io_setup: Linux
 * AIO, whose requests carry RWF_NOWAIT in memory seccomp cannot read. */
#define LEAP_REFUSED(D) D(fadvise64) D(readahead) D(mincore) D(cachestat) D(io_setup)

/* cachestat (Linux 6.5) is newer than some kernel headers: its number is 451 on every
 * architecture but alpha (new calls share one table since Linux 5.1). */
#if !defined(__NR_cachestat) && !defined(__alpha__)
#define __NR_cachestat 451
#endif

#endif
