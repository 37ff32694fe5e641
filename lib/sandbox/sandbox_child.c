/* sandbox_child.c - the sandbox's child: its minimal root, its privileges dropped, its reaper. */
/*
 * Everything here runs in the child that lib/core/child.c forks for a sandbox, after the fork and
 * before the runner's execve, from the hooks that sandbox.c hands to lib/core/child.c
 * (sandbox_int.h): it only makes system calls on what the parent prepared (struct child_plan),
 * and a step that fails is reported through lib/core/child.c as the set-up's, never the
 * candidate's (child_fail, exit 127). In new namespaces the child makes the view the
 * candidate will see (a tmpfs root of the entries unseen.c allows, read-only binds, a new
 * /proc, pivot_root), drops to the sandbox user, and stays as PID 1: a reaper that starts the
 * runner as PID 2, reaps what the candidate leaves, reports how the runner ended in its own
 * exit status, and stops the namespace's processes for leap-bench where no cgroup freezer
 * exists. sb_try_root, the probe's hook, tries the steps of that view a system may refuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "core/banned.h"

/* Reports a set-up failure (lib/core/child.h contract 4) and exits 127. */
static noreturn void child_fail(const struct child_plan *p, const char *what)
{
	leap_child_fail(p->ch, what);
}

/* Creates directory `path` and its parents (mode 0755) in place, allocating nothing: the
 * child runs under its memory limit, where a sanitizer's allocator may fail. Returns 0, or -1
 * with errno set; `path` is unchanged either way. */
static int mkdirs_here(char *path)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = mkdir(path, 0755);
		*s = '/';
		if (r && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* A directory entry as getdents64 returns it. */
struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Calls fn(arg, name) for each numeric entry of the directory `path` (allocating nothing: the
 * sandbox's init runs under the memory limit). Returns the sum of what fn returned, or -1. */
static int each_number(const char *path, int (*fn)(void *, const char *), void *arg)
{
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	char buf[4096];
	int sum = 0;
	long n;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
		for (long i = 0; i < n;) {
			struct dirent64_raw *e = (struct dirent64_raw *)(buf + i);
			i += e->reclen;
			if (e->name[0] >= '0' && e->name[0] <= '9') {
				int r = fn(arg, e->name);
				if (r < 0) {
					close(dfd);
					return -1;
				}
				sum += r;
			}
		}
	close(dfd);
	return n < 0 ? -1 : sum;
}

/* 1 when thread `tid` of the process whose task directory is `dir` is not stopped. */
static int task_running(void *dir, const char *tid)
{
	char path[96], st[512];
	snprintf(path, sizeof path, "%s/%s/stat", (const char *)dir, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* gone */
	ssize_t n = read(fd, st, sizeof st - 1);
	close(fd);
	if (n <= 0)
		return 0;
	st[n] = 0;
	const char *paren = strrchr(st, ')');
	char state = paren && paren[1] == ' ' ? paren[2] : '?';
	return !strchr("TtZXx", state);
}

/* The number of threads of process `pid` (a name in /proc) that are not stopped. */
static int proc_running(void *arg, const char *pid)
{
	(void)arg;
	if (!strcmp(pid, "1"))
		return 0; /* ourselves */
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%s/task", pid);
	int r = each_number(dir, task_running, dir);
	return r < 0 ? 0 : r;
}

/* Stops every other process of our PID namespace and waits (1 s at most) until the kernel
 * shows every thread stopped; signals again each round, for processes forked meanwhile.
 * Returns 0 or -1. */
static int stop_namespace(void)
{
	double until = leap_now() + 1.0;
	for (;;) {
		if (kill(-1, SIGSTOP) && errno != ESRCH)
			return -1;
		int running = each_number("/proc", proc_running, NULL);
		if (running == 0)
			return 0;
		if (running < 0 || leap_now() > until)
			return -1;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
}

/* Overwrites this process's command line and environment with zeros and renames it: PID 1 of
 * the sandbox is a fork of leap-verify or leap-bench, and the candidate reads PID 1's
 * /proc/1/cmdline (a --seed given by the user is the key to the drawn sizes). The addresses
 * come from /proc/self/stat (fields 48 to 51), read without allocating. Best effort. */
static void wipe_cmdline(void)
{
	char st[2048];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, st, sizeof st - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	st[n] = 0;
	char *s = strrchr(st, ')'); /* the name may hold spaces; field 3 follows it */
	unsigned long v[4] = {0, 0, 0, 0};
	for (int field = 2; s && *s && field < 51;) {
		s = strchr(s, ' ');
		if (!s)
			return;
		s++;
		field++;
		if (field >= 48)
			v[field - 48] = strtoul(s, NULL, 10);
	}
	if (v[1] > v[0] && v[1] - v[0] < (1ul << 24))
		memset((void *)v[0], 0, v[1] - v[0]);
	if (v[3] > v[2] && v[3] - v[2] < (1ul << 24))
		memset((void *)v[2], 0, v[3] - v[2]);
	prctl(PR_SET_NAME, "leap-sandbox");
}

/* PID 1 of an isolated sandbox: reaps every process the namespace leaves to it, ends with the
 * runner (reporting how it ended in the exit status: 128 + signal), and, when ctl >= 0,
 * freezes and thaws the namespace for the parent: 'S' -> every process stopped -> 's' (or
 * 'e'), 'C' -> continued -> 'c'. When PID 1 exits the kernel kills whatever is left. */
static noreturn void reaper(pid_t runner, int ctl)
{
	close_range(0, 8, 0);
	close_range(10, ~0U, 0);
	/* leap-verify's memory stays in this copy: no process of the sandbox may read it
	 * (without root, the sandbox's processes share our user) */
	prctl(PR_SET_DUMPABLE, 0);
	int pfd = (int)syscall(SYS_pidfd_open, runner, 0);
	for (;;) {
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == runner)
				_exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
		if (w < 0 && errno == ECHILD)
			_exit(126);
		struct pollfd pf[2] = {{ctl, POLLIN, 0}, {pfd, POLLIN, 0}};
		/* without a pidfd (old kernels) the runner's end is noticed within 10 ms */
		if (poll(pf, 2, pfd >= 0 ? 200 : 10) <= 0 || !(pf[0].revents & (POLLIN | POLLHUP)))
			continue;
		char c, a;
		ssize_t n = read(ctl, &c, 1);
		if (n == 0) { /* the parent is gone */
			ctl = -1;
			continue;
		}
		if (n < 0)
			continue;
		if (c == 'S')
			a = stop_namespace() ? 'e' : 's';
		else if (c == 'C')
			a = kill(-1, SIGCONT) && errno != ESRCH ? 'e' : 'c';
		else
			a = 'e';
		if (write(ctl, &a, 1) != 1)
			ctl = -1;
	}
}

/* Makes `dst` for a bind: its parents, then itself (a directory, or an empty file when
 * `file`). Returns 0 or -1 (errno set). */
static int make_target(char *dst, int file)
{
	char *slash = strrchr(dst, '/');
	*slash = 0;
	int r = mkdirs_here(dst);
	*slash = '/';
	if (r)
		return -1;
	if (!file)
		return mkdirs_here(dst);
	int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Makes the bind at `dst` read-only, keeping the flags a user namespace may not drop
 * (statvfs). Returns 0 or -1. */
static int readonly_top(const char *dst)
{
	struct statvfs sv;
	if (statvfs(dst, &sv))
		return -1;
	unsigned long fl = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
	fl |= (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) | (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
	      (sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) | (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0);
	return mount(NULL, dst, NULL, fl, NULL);
}

/* Makes every mount of the tree at `dst` read-only, nosuid, nodev and noexec
 * (mount_setattr with AT_RECURSIVE, Linux 5.12; it only adds flags, so none that a user
 * namespace may not drop is dropped). Returns 0 or -1 (ENOSYS where the kernel lacks it). */
static int readonly_tree(const char *dst)
{
#ifdef SYS_mount_setattr
	struct mount_attr a;
	memset(&a, 0, sizeof a);
	a.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	return (int)syscall(SYS_mount_setattr, AT_FDCWD, dst, AT_RECURSIVE, &a, sizeof a);
#else
	(void)dst;
	errno = ENOSYS;
	return -1;
#endif
}

/* Binds `src` on `dst` (made first: a directory, or an empty file when `file`) and, unless
 * `rw`, makes the bind read-only, keeping the flags a user namespace may not drop (statvfs).
 * `rec`: with the mounts under src. Returns 0 or -1 (errno set). */
static int bind_at(const char *src, char *dst, int file, int rec, int rw)
{
	if (make_target(dst, file) || mount(src, dst, NULL, MS_BIND | (rec ? MS_REC : 0), NULL))
		return -1;
	return rw ? 0 : readonly_top(dst);
}

int leap_sandbox_bind_flat(const char *src, char *dst, int *recursive)
{
	*recursive = 0;
	if (make_target(dst, 0))
		return -1;
	if (mount(src, dst, NULL, MS_BIND, NULL) == 0)
		return readonly_top(dst);
	if (errno != EINVAL)
		return -1;
	/* In a user namespace the mounts under src came from a more privileged mount namespace
	 * and are locked to it: a bind without them would uncover what they cover, and the
	 * kernel refuses it (mount_namespaces(7), "Restrictions on mount namespaces"). With them,
	 * each made read-only as well. */
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL))
		return -1;
	*recursive = 1;
	if (readonly_tree(dst)) {
		int e = errno;
		umount2(dst, MNT_DETACH);
		errno = e;
		return -1;
	}
	return 0;
}

/* Makes the minimal root (unseen.h) on an empty tmpfs over the private temp dir's path and
 * pivots into it; the machine's root is detached. Fails the child on any error: a sandbox
 * that shows more than it should does not run. */
static void enter_root(const struct child_plan *p, const struct leap_root *root)
{
	const char *top = p->tmpdir;
	if (mount("leap-root", top, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755"))
		child_fail(p, "mounting the minimal root");
	char dst[4096];
	for (size_t i = 0; i < root->n; i++) {
		const struct leap_root_entry *e = &root->e[i];
		if (snprintf(dst, sizeof dst, "%s%s", top, e->path) >= (int)sizeof dst)
			continue;
		int r = 0;
		if (e->kind == LEAP_ROOT_LINK) {
			char *slash = strrchr(dst, '/');
			*slash = 0;
			r = mkdirs_here(dst);
			*slash = '/';
			r = r || symlink(e->link, dst);
		} else if (e->kind == LEAP_ROOT_DEV) {
			struct stat st;
			if (stat(e->path, &st) || !(S_ISCHR(st.st_mode) || S_ISDIR(st.st_mode)))
				continue; /* this machine has no such node */
			r = bind_at(e->path, dst, !S_ISDIR(st.st_mode), 1, 1); /* as it is: nodev would break it */
		} else if (e->kind == LEAP_ROOT_DIR_FLAT) {
			int rec;
			r = leap_sandbox_bind_flat(e->link ? e->link : e->path, dst, &rec);
		} else {
			r = bind_at(e->link ? e->link : e->path, dst, e->kind == LEAP_ROOT_FILE, e->kind == LEAP_ROOT_DIR, 0);
		}
		if (r)
			child_fail(p, e->path);
	}
	/* /proc of our PID namespace now, while the machine's /proc is in view: in a user
	 * namespace the kernel mounts a new proc only beside a fully visible one */
	if (snprintf(dst, sizeof dst, "%s/proc", top) >= (int)sizeof dst || mkdirs_here(dst) ||
	    mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		child_fail(p, "mounting /proc in the minimal root");
	if (snprintf(dst, sizeof dst, "%s/.old", top) >= (int)sizeof dst || mkdir(dst, 0700) ||
	    syscall(SYS_pivot_root, top, dst) || chdir("/") || umount2("/.old", MNT_DETACH) || rmdir("/.old"))
		child_fail(p, "pivoting into the minimal root");
	static const char *const dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(dst, sizeof dst, "%s", dirs[i]);
		if (mkdirs_here(dst))
			child_fail(p, "making the minimal root's directories");
	}
}

/* The file system view of an isolated child, in its own mount namespace, after lib/core/child.c
 * mapped the user (without root) and hid the policy's directories: the minimal root, empty
 * /tmp, /var/tmp and /dev/shm, the private temp dir as a tmpfs, a /proc of its PID namespace.
 * Fails the child on an error (child_fail). */
static void make_view(const struct child_plan *p)
{
	const struct leap_sandbox_opts *o = p->o;
	if (o->root)
		enter_root(p, o->root);
	/* The host's world-writable directories become empty tmpfs of their own, so
	 * that nothing the candidate writes there outlives it or reaches other
	 * processes; the private temp dir's path is made again inside them. */
	static const char *const shared_tmp[] = {"/tmp", "/var/tmp", "/dev/shm"};
	for (size_t i = 0; i < sizeof(shared_tmp) / sizeof(shared_tmp[0]); i++) {
		struct stat st;
		if (stat(shared_tmp[i], &st) || !S_ISDIR(st.st_mode))
			continue;
		char opts[96];
		snprintf(opts, sizeof opts, "size=%llu,mode=1777",
			 (unsigned long long)(o->fsize_bytes ? o->fsize_bytes : (64 << 20)));
		if (mount("leap-shared-tmp", shared_tmp[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts))
			child_fail(p, "mounting an empty /tmp, /var/tmp or /dev/shm");
		if (!strncmp(p->tmpdir, shared_tmp[i], strlen(shared_tmp[i])) &&
		    p->tmpdir[strlen(shared_tmp[i])] == '/' && mkdirs_here(p->tmpdir))
			child_fail(p, "making the private temp dir again");
	}
	/* The private temp dir becomes a small tmpfs of its own: bounded in total, gone
	 * with the namespace (in a user namespace too: lib/core/child.c gave our user a
	 * name there, so that it can own files on it). */
	char opts[128];
	if (o->root && mkdirs_here(p->tmpdir))
		child_fail(p, "making the private temp dir in the minimal root");
	snprintf(opts, sizeof opts, "size=%llu,mode=0700,uid=%u,gid=%u",
		 (unsigned long long)(o->fsize_bytes * 4), (unsigned)p->env->uid, (unsigned)p->env->gid);
	if (mount("leap-tmp", p->tmpdir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) || chdir(p->tmpdir))
		child_fail(p, "mounting the private temp dir");
	if (!o->root && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		/* some containers forbid a new proc: the host's stays (read-only to us) */
	}
}

/* lib/core/child.c's `early` hook: waits until the parent has placed us in our groups, so that
 * everything from here on, the runner and the candidate's constructors included, runs inside
 * them. */
void sb_hold(const struct leap_child *ch, void *arg)
{
	const struct child_plan *p = arg;
	(void)ch;
	if (p->holdfd < 0)
		return;
	char go;
	ssize_t n;
	while ((n = read(p->holdfd, &go, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(127); /* the parent gave up on this sandbox */
}

/* What the runner's side of start_runner needs. */
struct runner_start {
	const struct leap_child *ch;
};

/* The runner's side of start_runner, on PID 1's memory until execve, with every signal
 * blocked: death with PID 1, then lib/core/child.c's execve, which puts every disposition back to
 * its default (its own table: no CLONE_SIGHAND) before it unblocks them, so that no handler of
 * ours ever runs here. */
static int runner_side(void *arg)
{
	const struct runner_start *rs = arg;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		leap_child_fail(rs->ch, "prctl");
	leap_child_exec(rs->ch);
}

/* Starts the runner as PID 2 of the sandbox. It shares PID 1's memory until its execve
 * (CLONE_VM | CLONE_VFORK, as posix_spawn does; PID 1 waits meanwhile): a fork would copy
 * every page table of leap-verify's image a second time, to be thrown away by the execve,
 * about a twentieth of a trivial candidate's cost (bench/README.md section 3). Every signal is
 * blocked across the clone, so that no handler of ours runs on the shared memory. Returns the
 * runner's pid, or -1. */
static pid_t start_runner(const struct leap_child *ch)
{
	/* the runner's stack until its execve: here, so that no limit of ours can refuse it */
	_Alignas(64) char stack[64 * 1024];
	struct runner_start rs = {.ch = ch};
	sigset_t all, mask;
	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &mask))
		return -1;
	pid_t r = clone(runner_side, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &rs);
	int e = errno;
	sigprocmask(SIG_SETMASK, &mask, NULL);
	errno = e;
	return r;
}

/* lib/core/child.c's `late` hook, after the descriptors (the log is 2, the set-up pipe 8 and the
 * freezing control socket 9, both close-on-exec: the runner never holds them), the runner
 * opened, the limits, the temp dir, the user mapping and the hidden directories: the rest of
 * the view, the user, and the reaper. */
void sb_finish_child(const struct leap_child *ch, void *arg)
{
	struct child_plan *p = arg;
	p->ch = ch;
	p->isolated = ch->clone_flags != 0;
	if (p->isolated)
		make_view(p);
	if (p->env->root) {
		if (setgroups(0, NULL) || setgid(p->env->gid) || setuid(p->env->uid))
			child_fail(p, "dropping privileges");
		if (setuid(0) == 0)
			child_fail(p, "privileges could be regained");
		/* Changing the user cleared the parent-death signal: set it again, or the sandbox
		 * would outlive a leap-verify ended by SIGTERM. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			child_fail(p, "prctl");
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (p->isolated) {
		/* We are PID 1 of a new PID namespace, where signals without a handler (abort(),
		 * SIGXFSZ...) are ignored. Run the runner as PID 2 and report how it ended in our
		 * exit code (128 + signal); when we exit the kernel kills whatever it left. */
		wipe_cmdline();
		prctl(PR_SET_DUMPABLE, 0); /* before the runner exists, not after */
		pid_t r = start_runner(ch);
		if (r < 0)
			child_fail(p, "starting the runner");
		reaper(r, ch->nfd > 9 && ch->fd[9] >= 0 ? 9 : -1);
	}
}

/* lib/core/child.c's `late` hook of probe_root, after the user mapping and the private mounts: the
 * steps of enter_root that a kernel or container may refuse (a tmpfs, a read-only bind, the
 * bind of /sys, a new /proc beside the machine's, pivot_root), on a directory of its own. Exits 1 when one is
 * refused; the probe exits 0 when all worked. */
void sb_try_root(const struct leap_child *ch, void *arg)
{
	const struct root_probe *rp = arg;
	const struct leap_root *root = rp->root;
	const char *top = rp->top;
	char dst[4096];
	const char *lib = NULL;
	if (!ch->clone_flags)
		_exit(1);
	for (size_t i = 0; i < root->n && !lib; i++)
		if (root->e[i].kind == LEAP_ROOT_DIR)
			lib = root->e[i].link ? root->e[i].link : root->e[i].path;
	if (mount("leap-root", top, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755"))
		_exit(1);
	if (lib && (snprintf(dst, sizeof dst, "%s/lib", top) >= (int)sizeof dst || bind_at(lib, dst, 0, 1, 0)))
		_exit(1);
	/* /sys on a machine with NVIDIA devices: its bind is the one a user namespace refuses
	 * without the mounts under it */
	for (size_t i = 0; i < root->n; i++) {
		int rec;
		if (root->e[i].kind == LEAP_ROOT_DIR_FLAT &&
		    (snprintf(dst, sizeof dst, "%s/flat%zu", top, i) >= (int)sizeof dst ||
		     leap_sandbox_bind_flat(root->e[i].link ? root->e[i].link : root->e[i].path, dst, &rec)))
			_exit(1);
	}
	if (snprintf(dst, sizeof dst, "%s/proc", top) >= (int)sizeof dst || mkdir(dst, 0755) ||
	    mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		_exit(1);
	if (snprintf(dst, sizeof dst, "%s/.old", top) >= (int)sizeof dst || mkdir(dst, 0700) ||
	    syscall(SYS_pivot_root, top, dst))
		_exit(1);
}
