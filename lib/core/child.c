/* child.c - start a child process the way leap starts its compilers, runners and pipelines,
 * and finish it. */
/*
 * leap starts two kinds of children that hold untrusted input: the compilers of leap-compile
 * (lib/compile/crun.c) and the runner of leap-verify and leap-bench (lib/sandbox/sandbox.c); leap-serve's
 * filter pipelines (lib/serve/serve_pipe.c) start here too. The first two need the same things
 * done in the same careful way, and they used to do each twice: a process group that a
 * timeout can kill whole, death with the parent, exactly the descriptors they should hold,
 * resource limits, a mount namespace where empty read-only tmpfs cover what a candidate must
 * not see, and a set-up failure that can never be mistaken for a verdict on the candidate.
 * This module is that one place, shaped after git's run-command.h: a struct that describes
 * the child, leap_child_start and leap_child_finish, and a numbered contract (child.h).
 *
 * What differs stays with the caller: the sandbox's namespaces at the clone, its minimal root,
 * privilege drop and PID 1 reaper run in its `late` hook; the compilers' capture of output and
 * their wall-clock deadline in lib/compile/crun.c. The steps in the child run in a fixed order (see
 * in_child) so that each caller knows what is already true when its hook runs.
 *
 * Everything between the fork and execve is async-signal-safe and allocates nothing: the
 * compilers are forked from a threaded process, and the child may already be under its
 * memory limit, where a sanitizer's allocator fails.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * A sandbox that cannot start:
 *
 * Should a sandbox still fail to start (out of processes, a runner that cannot be executed),
 * the failure is leap's, not the candidate's: the child reports it on a close-on-exec pipe
 * (descriptor 8, closed by the runner's execve, so a candidate cannot write to it) and the
 * record gets an `error` object, no verdict, and exit status 1; a candidate that itself exits
 * with 127 stays a runtime error. Tests: leap-verify.bats "a sandbox that cannot start the
 * runner is an error record, not a verdict on the candidate (status 1)" (a runner with a
 * missing interpreter via `LEAP_LIBEXEC`, for leap-verify, `leap-verify --jobs 2` and
 * leap-bench) and "exit(127) inside the kernel is still a runtime error (127 is also the status
 * of a failed sandbox set-up)" (exit127.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "util.h"
#include "banned.h"

void leap_child_init(struct leap_child *ch)
{
	memset(ch, 0, sizeof *ch);
	for (int i = 0; i < LEAP_CHILD_FDS; i++)
		ch->fd[i] = -1;
	ch->fail_slot = ch->report_slot = -1;
	ch->pid = -1;
	ch->report_fd = ch->exec_fd = ch->report_w = -1;
}

void leap_child_limit(struct leap_child *ch, int res, uint64_t soft, uint64_t hard)
{
	if (ch->nlimit >= LEAP_CHILD_LIMITS)
		leap_die("child.c: more than %d resource limits", LEAP_CHILD_LIMITS);
	ch->limit[ch->nlimit].res = res;
	ch->limit[ch->nlimit].soft = soft;
	ch->limit[ch->nlimit].hard = hard;
	ch->nlimit++;
}

_Noreturn void leap_child_fail(const struct leap_child *ch, const char *what)
{
	char msg[200], line[256];
	/* strerrordesc_np, not strerror: no locale, no lock another thread of a threaded parent
	 * may have held at the fork */
	const char *why = strerrordesc_np(errno);
	int n = why ? snprintf(msg, sizeof msg, "%s: %s", what, why)
		    : snprintf(msg, sizeof msg, "%s: error %d", what, errno);
	int rep = ch->report_w;
	int log = ch->fail_slot < 0 ? -1 : ch->placed ? ch->fail_slot : ch->fd[ch->fail_slot];
	if (n > 0 && rep >= 0 && write(rep, msg, (size_t)n) < 0) {
		/* nothing more to do: the log below still tells */
	}
	n = snprintf(line, sizeof line, "%s%s\n", ch->fail_prefix ? ch->fail_prefix : "", msg);
	if (n > 0 && log >= 0 && write(log, line, (size_t)n) < 0)
		_exit(127);
	_exit(127);
}

/* Writes `text` to the file `path` (one write, as /proc/self/uid_map wants). Returns 0 or -1. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* In a new user namespace: maps our own user and group to themselves. Unmapped, the user
 * could own no file on a tmpfs made there (EOVERFLOW); mapped to itself and not to 0, the
 * program loses every capability at execve. Returns 0 or -1. */
static int map_self(uid_t uid, gid_t gid)
{
	char line[64];
	snprintf(line, sizeof line, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", line))
		return -1;
	snprintf(line, sizeof line, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/gid_map", line))
		return -1;
	return 0;
}

/* Puts fd[i] at descriptor i for i < nfd (through copies above them, so that no source is
 * overwritten before it is copied) and closes every other descriptor. */
static void place_fds(struct leap_child *c)
{
	int hi[LEAP_CHILD_FDS];
	for (int i = 0; i < c->nfd; i++) {
		hi[i] = c->fd[i] >= 0 ? fcntl(c->fd[i], F_DUPFD_CLOEXEC, 16) : -1;
		if (c->fd[i] >= 0 && hi[i] < 0)
			leap_child_fail(c, "dup");
	}
	/* the failure line and the report pipe use the copies until placed: the loop below
	 * may overwrite where they were */
	if (c->fail_slot >= 0 && c->fail_slot < c->nfd)
		c->fd[c->fail_slot] = hi[c->fail_slot];
	if (c->report_w >= 0 && (c->report_w = fcntl(c->report_w, F_DUPFD_CLOEXEC, 16)) < 0)
		leap_child_fail(c, "dup");
	for (int i = 0; i < c->nfd; i++) {
		if (hi[i] < 0)
			close(i);
		else if (dup3(hi[i], i, (c->cloexec >> i) & 1 ? O_CLOEXEC : 0) < 0)
			leap_child_fail(c, "dup3");
	}
	c->placed = 1; /* the failure line goes to fail_slot from here on */
	if (c->report_w >= 0) {
		if (dup3(c->report_w, c->report_slot, O_CLOEXEC) < 0)
			leap_child_fail(c, "dup3");
		c->report_w = c->report_slot;
	}
	int first = c->report_slot >= c->nfd ? c->report_slot + 1 : c->nfd;
	if ((first > c->nfd + 1 && close_range((unsigned)c->nfd, (unsigned)c->report_slot - 1, 0)) ||
	    close_range((unsigned)first, ~0U, 0))
		leap_child_fail(c, "close_range");
}

/* In a new mount namespace: makes every mount private and covers each existing directory of
 * hide[] (and /proc with hide_proc) with an empty read-only tmpfs (contract 5). */
static void hide_dirs(const struct leap_child *c)
{
	if (!((c->clone_flags | (unsigned long)c->unshare_flags) & CLONE_NEWNS))
		return;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		leap_child_fail(c, "making the mounts private");
	for (size_t i = 0; i < c->nhide + (c->hide_proc ? 1 : 0); i++) {
		const char *d = i < c->nhide ? c->hide[i] : "/proc";
		struct stat st;
		if (stat(d, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (mount("leap-hidden", d, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")) {
			char what[300];
			snprintf(what, sizeof what, "hiding %s (mount namespace)", d);
			leap_child_fail(c, what);
		}
	}
}

/* The child's side, in this order: its process group, death with the parent, the caller's
 * `early` hook, its descriptors, CPU affinity, the program opened (open_early), its limits,
 * its directory, new namespaces, the user mapping, the hidden directories, the caller's
 * `late` hook, execve. Never returns. */
static _Noreturn void in_child(struct leap_child *c, pid_t parent)
{
	if (c->session ? setsid() < 0 : setpgid(0, 0) != 0)
		leap_child_fail(c, "making a process group");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		leap_child_fail(c, "prctl");
	/* the parent may have died before that (in a new PID namespace it is not ours to see) */
	if (!(c->clone_flags & CLONE_NEWPID) && getppid() != parent) {
		errno = ESRCH;
		leap_child_fail(c, "the parent is gone");
	}
	if (c->early)
		c->early(c, c->arg);
	place_fds(c);
	if (c->cpus && sched_setaffinity(0, sizeof *c->cpus, c->cpus))
		leap_child_fail(c, "setting the CPU affinity");
	if (c->open_early && c->argv && (c->exec_fd = open(c->argv[0], O_RDONLY | O_CLOEXEC)) < 0)
		leap_child_fail(c, c->exec_what ? c->exec_what : "cannot execute the program");
	for (int i = 0; i < c->nlimit; i++) {
		struct rlimit rl = {(rlim_t)c->limit[i].soft, (rlim_t)c->limit[i].hard};
		if (setrlimit(c->limit[i].res, &rl))
			leap_child_fail(c, "setrlimit");
	}
	if (c->dir && chdir(c->dir))
		leap_child_fail(c, "chdir");
	if (c->unshare_flags && unshare(c->unshare_flags))
		leap_child_fail(c, "unshare");
	if (c->map_user && ((c->clone_flags | (unsigned long)c->unshare_flags) & CLONE_NEWUSER) &&
	    map_self(c->map_uid, c->map_gid))
		leap_child_fail(c, "mapping the user namespace");
	hide_dirs(c);
	if (c->late)
		c->late(c, c->arg);
	leap_child_exec(c);
}

/* Every child starts as a fresh program would: each signal at its default action and none
 * blocked. execve keeps ignored dispositions and the mask, and leap runs with some of both
 * (SIGPIPE ignored by the filters; SIGINT and SIGQUIT ignored when a non-interactive shell
 * started leap in the background; leap-compile's ending signals blocked for its signal
 * thread), so without this a candidate or a compiler would see a process that depends on how
 * leap was started. Async-signal-safe: sigaction and sigprocmask only. */
static void fresh_signals(void)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;
		if (sig != SIGKILL && sig != SIGSTOP && !sigaction(sig, NULL, &cur) && cur.sa_handler != SIG_DFL)
			sigaction(sig, &dfl, NULL);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

_Noreturn void leap_child_exec(const struct leap_child *c)
{
	if (!c->argv)
		_exit(0);
	fresh_signals();
	if (c->exec_fd >= 0)
		fexecve(c->exec_fd, c->argv, c->env);
	else
		execve(c->argv[0], c->argv, c->env);
	leap_child_fail(c, c->exec_what ? c->exec_what : "cannot execute the program");
}

int leap_child_start(struct leap_child *ch)
{
	int rep[2] = {-1, -1};
	if (ch->report_slot >= 0 && pipe2(rep, O_CLOEXEC))
		return -1;
	ch->report_w = rep[1];
	pid_t parent = getpid();
	pid_t pid;
	if (ch->clone_flags) /* a raw clone without CLONE_VM behaves like fork() */
		pid = (pid_t)syscall(SYS_clone, ch->clone_flags | SIGCHLD, NULL, NULL, NULL, NULL);
	else
		pid = fork();
	if (pid == 0)
		in_child(ch, parent);
	int e = errno;
	if (rep[1] >= 0)
		close(rep[1]);
	ch->report_w = -1;
	if (pid < 0) {
		if (rep[0] >= 0)
			close(rep[0]);
		errno = e;
		return -1;
	}
	/* also here, so that the group exists before we might kill it (a session leader
	 * makes its own: setsid would fail in a group made for it) */
	if (!ch->session)
		setpgid(pid, pid);
	ch->pid = pid;
	ch->report_fd = rep[0];
	return 0;
}

int leap_child_exited(const struct leap_child *ch)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	return waitid(P_PID, (id_t)ch->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == ch->pid;
}

void leap_child_kill(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

int leap_child_finish(struct leap_child *ch, double grace)
{
	ch->status = ch->killed = ch->term_signal = 0;
	ch->exit_code = -1;
	ch->setup_error[0] = '\0';
	int had = ch->pid > 0;
	if (had) {
		if (grace < 0) {
			siginfo_t si;
			while (waitid(P_PID, (id_t)ch->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
				;
		}
		double until = leap_now() + (grace > 0 ? grace : 0);
		int exited;
		while (!(exited = leap_child_exited(ch)) && leap_now() < until) {
			struct timespec ts = {0, 500000};
			nanosleep(&ts, NULL);
		}
		ch->killed = !exited;
		leap_child_kill(ch->pid); /* the child, or what it left behind in its group */
		while (waitpid(ch->pid, &ch->status, 0) < 0 && errno == EINTR)
			;
		ch->exit_code = WIFEXITED(ch->status) ? WEXITSTATUS(ch->status) : -1;
		ch->term_signal = WIFSIGNALED(ch->status) ? WTERMSIG(ch->status) : 0;
		ch->pid = -1;
	}
	/* every writer of the report pipe is gone now (reaped, or past execve): no read blocks */
	if (ch->report_fd >= 0) {
		ssize_t n;
		while ((n = read(ch->report_fd, ch->setup_error, sizeof ch->setup_error - 1)) < 0 && errno == EINTR)
			;
		ch->setup_error[n > 0 ? n : 0] = '\0';
		close(ch->report_fd);
		ch->report_fd = -1;
	}
	return had ? 0 : -1;
}
