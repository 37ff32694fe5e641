/* probe.c - the doctor's probes (make doctor, tests/gpu/doctor.sh): try what leap's sandbox and
 * cuda path need on this machine, and say what works. */
/*
 * Why a program: each answer comes from doing the thing, not from a kernel version or a file
 * that says it should work (gVisor reports kernel 4.4.0 and implements what it implements;
 * Firecracker guests differ by their kernel's configuration). So every probe tries: create a
 * user, PID, mount and network namespace; bind /sys into a private mount, plain and
 * recursively; seal a memfd as leap-bench seals its inputs; install a seccomp filter as the
 * runner does; freeze a process tree with the cgroup freezer leap-bench uses (lib/sandbox/cgroup.c);
 * ask leap's own sandbox probe (lib/sandbox/sandbox.c) whether namespaces and the minimal root work;
 * load the CUDA driver, start it, read the device's compute mode, and pass device memory from
 * one process to another in another PID namespace as a POSIX file descriptor. Each try runs in
 * a child of its own (namespaces and filters stay there; CUDA is never started in this
 * process, which forks) under an alarm, so a hang costs seconds, not the session.
 *
 * Output, one line per finding, tab-separated: STATUS NAME DETAIL FALLBACK, where STATUS is
 * ok, fallback (missing, and leap goes on with less: FALLBACK says how, an option such as
 * --no-namespaces or a sentence), fail (missing, and what needs it cannot work here: FALLBACK
 * says what to do) or skip (not tried: DETAIL says why). doctor.sh renders these and adds the
 * toolchain's findings. Exit status 0 once the probes ran (whatever they found), 2 on usage.
 *
 * usage: probe NAME...   (all: every probe; NAME: userns pidns mountns netns sysbind memfd
 *        seccomp freezer sandbox libcuda cuda fdshare)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef LEAP_PROBE_CUDA
#include <cuda.h>
#endif

#include "sandbox/cgroup.h"
#include "backend/gpu.h"
#include "sandbox/sandbox.h"
#include "task/unseen.h"
#include "core/util.h"
#include "core/banned.h"

/* How long one try may take (a CUDA start without persistence mode takes seconds). */
enum { TRY_SECS = 30 };

/* Prints one finding. */
static void say(const char *status, const char *name, const char *detail, const char *fallback)
{
	printf("%s\t%s\t%s\t%s\n", status, name, detail, fallback ? fallback : "");
	fflush(stdout);
}

/* A child's answer: its exit code (0 yes, 1 no, -1 died or hung) and what it wrote. */
struct answer {
	int code;
	char text[1024];
};

/* Runs fn(arg, fd) in a child under an alarm of `secs`; fn writes its detail to fd and
 * returns the exit code. Fills *a. */
static void try_in_child(int (*fn)(void *, int), void *arg, unsigned secs, struct answer *a)
{
	memset(a, 0, sizeof *a);
	a->code = -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(a->text, sizeof a->text, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(a->text, sizeof a->text, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		alarm(secs);
		_exit(fn(arg, p[1]));
	}
	close(p[1]);
	size_t got = 0;
	for (;;) {
		ssize_t k = read(p[0], a->text + got, sizeof a->text - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got == sizeof a->text - 1)
			break;
	}
	a->text[got] = 0;
	while (got && a->text[got - 1] == '\n')
		a->text[--got] = 0;
	close(p[0]);
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return;
	if (WIFEXITED(ws))
		a->code = WEXITSTATUS(ws);
	else if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
		snprintf(a->text + got, sizeof a->text - got, "%shung: no answer in %u s", got ? "; " : "", secs);
	else if (WIFSIGNALED(ws))
		snprintf(a->text + got, sizeof a->text - got, "%sdied of %s", got ? "; " : "", strsignal(WTERMSIG(ws)));
}

/* Writes a formatted detail to fd (a child's pipe). */
static void tell(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tell(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n > sizeof buf - 1 ? sizeof buf - 1 : (size_t)n) < 0)
		return;
}

/* Writes s to a /proc file; 0 or -1. */
static int put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = write(fd, s, strlen(s));
	close(fd);
	return k == (ssize_t)strlen(s) ? 0 : -1;
}

/* Enters new namespaces `flags` as leap's sandbox would: directly as root, inside a new user
 * namespace (mapped to ourselves) otherwise. 0, or -1 with errno set. */
static int enter_ns(int flags)
{
	if (geteuid() == 0)
		return unshare(flags);
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | flags))
		return -1;
	char map[64];
	snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
	if (put("/proc/self/setgroups", "deny") && errno != ENOENT)
		return -1;
	if (put("/proc/self/uid_map", map))
		return -1;
	snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
	return put("/proc/self/gid_map", map);
}

/* ---- namespaces ---- */

static int try_userns(void *arg, int fd)
{
	(void)arg;
	if (unshare(CLONE_NEWUSER)) {
		tell(fd, "unshare(CLONE_NEWUSER): %s", strerror(errno));
		return 1;
	}
	tell(fd, "created");
	return 0;
}

/* In a new PID namespace (and a mount namespace, to mount its /proc as the sandbox does), the
 * first child must be PID 1. */
static int try_pidns(void *arg, int fd)
{
	(void)arg;
	if (enter_ns(CLONE_NEWPID | CLONE_NEWNS)) {
		tell(fd, "unshare(CLONE_NEWPID): %s", strerror(errno));
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		tell(fd, "fork into it: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (getpid() != 1) {
			tell(fd, "the first process is PID %d, not 1", (int)getpid());
			_exit(1);
		}
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
			tell(fd, "PID 1, but its /proc cannot be mounted: %s", strerror(errno));
			_exit(1);
		}
		tell(fd, "created (PID 1, its own /proc)");
		_exit(0);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
}

/* A private mount namespace where a tmpfs can be mounted. */
static int try_mountns(void *arg, int fd)
{
	(void)arg;
	if (enter_ns(CLONE_NEWNS)) {
		tell(fd, "unshare(CLONE_NEWNS): %s", strerror(errno));
		return 1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		tell(fd, "making the mounts private: %s", strerror(errno));
		return 1;
	}
	char dir[] = "/tmp/leap-probe.XXXXXX";
	if (!mkdtemp(dir)) {
		tell(fd, "mkdtemp: %s", strerror(errno));
		return 1;
	}
	int r = mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k");
	int e = errno;
	if (!r)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
	if (r) {
		tell(fd, "mounting a tmpfs: %s", strerror(e));
		return 1;
	}
	tell(fd, "created (private mounts, a tmpfs mounted)");
	return 0;
}

static int try_netns(void *arg, int fd)
{
	(void)arg;
	if (enter_ns(CLONE_NEWNET)) {
		tell(fd, "unshare(CLONE_NEWNET): %s", strerror(errno));
		return 1;
	}
	tell(fd, "created");
	return 0;
}

/* Binds /sys onto a directory in a new mount namespace, first plainly, then recursively (what
 * the kernel allows), then as leap's sandbox binds it (lib/sandbox/sandbox.c, leap_sandbox_bind_flat:
 * plainly where it can, else with the mounts under it, all read-only). Writes "bind: X,
 * recursive bind: Y; leap's sandbox: Z"; exit 0 when leap's bind works, 2 when not. */
static int try_sysbind(void *arg, int fd)
{
	(void)arg;
	if (enter_ns(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		tell(fd, "no private mount namespace: %s", strerror(errno));
		return 2;
	}
	char dir[] = "/tmp/leap-probe.XXXXXX";
	if (!mkdtemp(dir)) {
		tell(fd, "mkdtemp: %s", strerror(errno));
		return 2;
	}
	int plain = mount("/sys", dir, NULL, MS_BIND, NULL);
	int e1 = errno;
	if (!plain)
		umount2(dir, MNT_DETACH);
	int rec = mount("/sys", dir, NULL, MS_BIND | MS_REC, NULL);
	int e2 = errno;
	if (!rec)
		umount2(dir, MNT_DETACH);
	int recursive = 0, leap = leap_sandbox_bind_flat("/sys", dir, &recursive);
	int e3 = errno;
	if (!leap)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
	tell(fd, "bind: %s, recursive bind: %s; leap's sandbox: %s", plain ? strerror(e1) : "ok", rec ? strerror(e2) : "ok",
	     leap ? strerror(e3) : recursive ? "recursive, every mount read-only" : "plain, read-only");
	return leap ? 2 : 0;
}

/* ---- memfd seals, seccomp ---- */

/* Seals a memfd as leap-bench seals a candidate's inputs (lib/sandbox/session.c): after
 * F_SEAL_FUTURE_WRITE no new writable mapping and no write(2), while the mapping made before
 * still writes. */
static int try_memfd(void *arg, int fd)
{
	(void)arg;
	int m = memfd_create("leap-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m < 0) {
		tell(fd, "memfd_create: %s", strerror(errno));
		return 1;
	}
	char *ours = ftruncate(m, 4096) ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (ours == MAP_FAILED) {
		tell(fd, "sizing or mapping it: %s", strerror(errno));
		return 1;
	}
	if (fcntl(m, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)) {
		tell(fd, "F_ADD_SEALS(F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW): %s", strerror(errno));
		return 1;
	}
	void *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	if (w != MAP_FAILED) {
		tell(fd, "sealed, yet a new writable mapping was made");
		return 1;
	}
	if (pwrite(m, "x", 1, 0) == 1) {
		tell(fd, "sealed, yet write(2) wrote");
		return 1;
	}
	ours[0] = 1; /* the mapping made before the seal still writes */
	tell(fd, "sealed: no new writable mapping, no write(2), the earlier mapping writes");
	return 0;
}

/* Installs, with one seccomp() call and TSYNC as the runner does (runner/filter.c), a filter
 * that refuses getppid with EACCES, and checks that it does. */
static int try_seccomp(void *arg, int fd)
{
	(void)arg;
#if defined(__x86_64__)
	const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	const unsigned arch = AUDIT_ARCH_AARCH64;
#else
	tell(fd, "this probe knows no audit arch for this machine");
	return 1;
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		tell(fd, "no_new_privs: %s", strerror(errno));
		return 1;
	}
	long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (rc) {
		tell(fd, "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %s", rc < 0 ? strerror(errno) : "a thread refused");
		return 1;
	}
	errno = 0;
	if (syscall(SYS_getppid) != -1 || errno != EACCES) {
		tell(fd, "installed, but the filtered call was not refused");
		return 1;
	}
	tell(fd, "a filter installed with TSYNC refuses the call it names");
	return 0;
}

/* ---- the cgroup freezer (lib/sandbox/cgroup.c, as leap-bench uses it) ---- */

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Freezes a spinning child through leap's own cgroup code and checks that it stopped. Runs
 * in this process (it forks the spinner itself). Prints its findings. */
static void probe_freezer(void)
{
	struct leap_cgroups cg;
	leap_cgroups_detect(&cg, LEAP_CG_V2);
	char mem[300];
	if (cg.mode[LEAP_CG_MEMORY]) {
		snprintf(mem, sizeof mem, "%s: --memory bounds each sandbox's processes together (leap-verify, leap-bench)",
			 leap_cgroups_mode_name(cg.mode[LEAP_CG_MEMORY]));
		say("ok", "memory cgroup", mem, NULL);
	} else {
		snprintf(mem, sizeof mem, "none this process may use%s%s", cg.note[0] ? ": " : "", cg.note);
		say("fallback", "memory cgroup", mem,
		    "automatic: --memory bounds each cpu process's address space, not a sandbox's processes together; "
		    "a cuda sandbox has no memory limit (leap-verify and leap-bench say so once); run as root, or "
		    "where a memory controller is delegated to this user");
	}
	if (!cg.mode[LEAP_CG_FREEZER]) {
		say("fallback", "cgroup freezer", cg.note[0] ? cg.note : "no cgroup freezer this process may use",
		    "--freezer signals (SIGSTOP to every process of the PID namespace from its init: needs a PID namespace)");
		leap_cgroups_free(&cg);
		return;
	}
	struct leap_cgroup g;
	memset(&g, 0, sizeof g);
	char *err = NULL;
	volatile unsigned long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int hold[2] = {-1, -1};
	pid_t pid = -1;
	char detail[512] = "";
	const char *status = "fail";
	if (count == MAP_FAILED || pipe2(hold, O_CLOEXEC)) {
		snprintf(detail, sizeof detail, "set-up: %s", strerror(errno));
		goto out;
	}
	if (leap_cgroup_make(&cg, &g, 1u << LEAP_CG_FREEZER, NULL, &err)) {
		snprintf(detail, sizeof detail, "cannot make a group: %s", err);
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char go;
		alarm(TRY_SECS);
		if (read(hold[0], &go, 1) != 1)
			_exit(1);
		for (;;)
			(*count)++;
	}
	if (pid < 0 || leap_cgroup_enter(&g, pid, &err) || write(hold[1], "g", 1) != 1) {
		snprintf(detail, sizeof detail, "cannot place a child in it: %s", err ? err : strerror(errno));
		goto out;
	}
	while (*count == 0)
		usleep(1000);
	double t0 = now_ms();
	int r = leap_cgroup_freeze(&g, 2.0);
	double took = now_ms() - t0;
	unsigned long a = *count;
	usleep(50000);
	unsigned long b = *count;
	int thawed = leap_cgroup_thaw(&g) == 0;
	usleep(20000);
	unsigned long c = *count;
	if (r)
		snprintf(detail, sizeof detail, "%s freezer: freezing %s", leap_cgroups_mode_name(g.mode[LEAP_CG_FREEZER]),
			 r == -2 ? "timed out after 2 s" : "failed");
	else if (a != b)
		snprintf(detail, sizeof detail, "%s freezer: said frozen, but the child went on running",
			 leap_cgroups_mode_name(g.mode[LEAP_CG_FREEZER]));
	else if (!thawed || c == b)
		snprintf(detail, sizeof detail, "%s freezer: froze the child, but it did not thaw",
			 leap_cgroups_mode_name(g.mode[LEAP_CG_FREEZER]));
	else {
		snprintf(detail, sizeof detail, "%s freezer: froze a spinning child in %.1f ms, thawed it",
			 leap_cgroups_mode_name(g.mode[LEAP_CG_FREEZER]), took);
		status = "ok";
	}
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	leap_cgroup_remove(&g);
	if (hold[0] >= 0) {
		close(hold[0]);
		close(hold[1]);
	}
	if (count != MAP_FAILED)
		munmap((void *)count, 4096);
	free(err);
	say(status, "cgroup freezer", detail,
	    *status == 'o' ? NULL : "--freezer signals (SIGSTOP to every process of the PID namespace from its init)");
	leap_cgroups_free(&cg);
}

/* ---- leap's own sandbox probe (lib/sandbox/sandbox.c) ---- */

/* The minimal root a runner would get here (as leap-verify computes it). */
static void runner_root(struct leap_root *r, char ***paths, size_t *n)
{
	char cache[] = "/tmp/leap-probe-cache.XXXXXX";
	const char *c = mkdtemp(cache);
	*paths = leap_unseen(c ? c : "/nonexistent", NULL, LEAP_UNSEEN_RUNNER, n);
	leap_unseen_root(r, *paths, *n);
	if (c)
		rmdir(c);
}

/* Asks leap_sandbox_probe, as leap-verify does before it forks its workers, whether namespaces
 * and the minimal root can be made (its own warnings, if any, go to stderr). */
static void probe_sandbox(void)
{
	struct leap_sandbox_env env;
	leap_sandbox_env_init(&env);
	struct leap_root root;
	char **paths;
	size_t n;
	runner_root(&root, &paths, &n);
	struct leap_sandbox_opts o;
	memset(&o, 0, sizeof o);
	o.timeout = 10;
	o.fsize_bytes = 1 << 20;
	o.nproc = 256;
	o.namespaces = 1;
	o.hide = (const char *const *)paths;
	o.nhide = n;
	o.root = &root;
	leap_sandbox_probe(&env, &o);
	if (env.ns_ok == 1)
		say("ok", "sandbox namespaces", "leap's sandbox isolates network, PID view and mounts", NULL);
	else
		say("fallback", "sandbox namespaces", "leap's sandbox cannot make its namespaces here",
		    "--no-namespaces (candidates keep the network and see other processes; leap also falls back by "
		    "itself, with a warning)");
	if (env.root_ok == 1)
		say("ok", "sandbox minimal root", "a runner sees only the loader's libraries, the devices and its temp dir",
		    NULL);
	else if (env.ns_ok == 1)
		say("fallback", "sandbox minimal root", "the minimal root cannot be made here",
		    "automatic: candidates see the machine's files, less the suite and the cache");
	leap_unseen_free(paths, n);
	leap_root_free(&root);
}

/* ---- the CUDA driver ---- */

/* Finds libcuda.so.1 as the loader would, in a child (no CUDA call): its path. */
static int try_libcuda(void *arg, int fd)
{
	(void)arg;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *sym = h ? dlsym(h, "cuInit") : NULL;
	Dl_info di;
	if (!sym || !dladdr(sym, &di) || !di.dli_fname) {
		tell(fd, "%s", h ? "libcuda.so.1 has no cuInit" : dlerror());
		return 1;
	}
	tell(fd, "%s", di.dli_fname);
	return 0;
}

/* 1 when the minimal root shows directory `dir` (bound itself or below a bound directory). */
static int root_shows(const struct leap_root *r, const char *dir)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct leap_root_entry *e = &r->e[i];
		if (e->kind != LEAP_ROOT_DIR && e->kind != LEAP_ROOT_DIR_FLAT)
			continue;
		const char *src = e->link ? e->link : e->path;
		size_t k = strlen(src);
		if (!strcmp(src, dir) || (e->kind == LEAP_ROOT_DIR && !strncmp(src, dir, k) && dir[k] == '/'))
			return 1;
	}
	return 0;
}

/* Where the driver library lives, and whether the runner's minimal root shows the directory
 * its real file is in (a link into another directory, a driver mounted apart). */
static void probe_libcuda(void)
{
	struct answer a;
	try_in_child(try_libcuda, NULL, TRY_SECS, &a);
	if (a.code != 0) {
		say("skip", "libcuda", *a.text ? a.text : "libcuda.so.1 cannot be loaded", NULL);
		return;
	}
	char *real = realpath(a.text, NULL);
	if (!real) {
		say("fail", "libcuda", a.text, "the loader found it, yet realpath fails");
		return;
	}
	char *dir = xstrdup(real);
	*strrchr(dir, '/') = 0;
	struct leap_root root;
	char **paths;
	size_t n;
	runner_root(&root, &paths, &n);
	char detail[1200];
	int linked = strcmp(a.text, real) != 0;
	snprintf(detail, sizeof detail, "%s%s%s", a.text, linked ? " -> " : "", linked ? real : "");
	if (root_shows(&root, dir)) {
		snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "; the runner's minimal root shows %s", dir);
		say("ok", "libcuda", detail, NULL);
	} else {
		snprintf(detail + strlen(detail), sizeof detail - strlen(detail),
			 "; the runner's minimal root does not show %s: a cuda runner would find no driver (no_device)", dir);
		say("fallback", "libcuda", detail,
		    "--no-namespaces (no minimal root: the runner sees the machine's files), or add the directory to "
		    "LD_LIBRARY_PATH, which the minimal root shows");
	}
	leap_unseen_free(paths, n);
	leap_root_free(&root);
	free(dir);
	free(real);
}

#ifdef LEAP_PROBE_CUDA
/* The driver entry points the probes call, looked up by their exported names. */
struct cu {
	void *h;
	CUresult (*init)(unsigned);
	CUresult (*driver_version)(int *);
	CUresult (*device_count)(int *);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*device_name)(char *, int, CUdevice);
	CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set_current)(CUcontext);
	CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*export_handle)(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long);
	CUresult (*import_handle)(CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType);
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*memset32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*copy_out)(void *, CUdeviceptr, size_t);
	CUresult (*sync)(void);
	CUresult (*error_string)(CUresult, const char **);
};

/* Loads the driver and its entry points; NULL (with the reason in why) when one is missing. */
static int cu_load(struct cu *c, char *why, size_t n)
{
	memset(c, 0, sizeof *c);
	c->h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!c->h) {
		snprintf(why, n, "%s", dlerror());
		return -1;
	}
	struct {
		void **fn;
		const char *name;
	} t[] = {
		{(void **)&c->init, "cuInit"},
		{(void **)&c->driver_version, "cuDriverGetVersion"},
		{(void **)&c->device_count, "cuDeviceGetCount"},
		{(void **)&c->device_get, "cuDeviceGet"},
		{(void **)&c->device_name, "cuDeviceGetName"},
		{(void **)&c->attribute, "cuDeviceGetAttribute"},
		{(void **)&c->retain, "cuDevicePrimaryCtxRetain"},
		{(void **)&c->set_current, "cuCtxSetCurrent"},
		{(void **)&c->granularity, "cuMemGetAllocationGranularity"},
		{(void **)&c->create, "cuMemCreate"},
		{(void **)&c->export_handle, "cuMemExportToShareableHandle"},
		{(void **)&c->import_handle, "cuMemImportFromShareableHandle"},
		{(void **)&c->reserve, "cuMemAddressReserve"},
		{(void **)&c->map, "cuMemMap"},
		{(void **)&c->set_access, "cuMemSetAccess"},
		{(void **)&c->memset32, "cuMemsetD32_v2"},
		{(void **)&c->copy_out, "cuMemcpyDtoH_v2"},
		{(void **)&c->sync, "cuCtxSynchronize"},
		{(void **)&c->error_string, "cuGetErrorString"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		*t[i].fn = dlsym(c->h, t[i].name);
		if (!*t[i].fn) {
			snprintf(why, n, "libcuda.so.1 has no %s (a driver too old)", t[i].name);
			return -1;
		}
	}
	return 0;
}

/* "cuCall: CUDA_ERROR_X" for a failed call r. */
static void cu_fail(const struct cu *c, int fd, const char *call, CUresult r)
{
	const char *s = NULL;
	if (r == CUDA_ERROR_STUB_LIBRARY)
		s = "this libcuda.so.1 is the toolkit's stub, not a driver";
	else if (c->error_string(r, &s) || !s)
		s = "unknown error";
	tell(fd, "%s: %s (%d)", call, s, (int)r);
}

/* Starts the driver and makes device 0's primary context current. 0, or 1 with the failure
 * told on fd. */
static int cu_start(struct cu *c, int fd, CUdevice *dev)
{
	char why[256];
	CUcontext ctx;
	CUresult r;
	if (cu_load(c, why, sizeof why)) {
		tell(fd, "%s", why);
		return 1;
	}
	if ((r = c->init(0))) {
		cu_fail(c, fd, "cuInit", r);
		return 1;
	}
	if ((r = c->device_get(dev, 0))) {
		cu_fail(c, fd, "cuDeviceGet(0)", r);
		return 1;
	}
	if ((r = c->retain(&ctx, *dev)) || (r = c->set_current(ctx))) {
		cu_fail(c, fd, "making a context", r);
		return 1;
	}
	return 0;
}

/* leap's own check of the driver against the CUDA runtime its runners link (lib/backend/gpu.c). */
static int try_driver_check(void *arg, int fd)
{
	(void)arg;
	char msg[512];
	int rt = leap_gpu_runtime_version();
	if (leap_gpu_driver_check(msg, sizeof msg)) {
		tell(fd, "%s", msg);
		return 1;
	}
	if (rt)
		tell(fd, "the driver runs the CUDA %d.%d runtime leap links (needs a driver >= %d)", rt / 1000, rt % 1000 / 10,
		     leap_gpu_min_driver(rt));
	else
		tell(fd, "leap was built without nvcc: no CUDA runtime to check");
	return 0;
}

/* The driver's facts, as "key=value" lines: version, devices, name, compute mode, whether
 * memory can be exported to a POSIX file descriptor. */
static int try_cuda(void *arg, int fd)
{
	(void)arg;
	struct cu c;
	char why[256];
	if (cu_load(&c, why, sizeof why)) {
		tell(fd, "error=%s\n", why);
		return 1;
	}
	int v = 0, k = 0, mode = -1, vmm = 0, posix = 0;
	CUdevice dev;
	char name[128] = "?";
	CUresult r = c.init(0);
	if (r) {
		tell(fd, "error=");
		cu_fail(&c, fd, "cuInit", r);
		return 1;
	}
	c.driver_version(&v);
	if (c.device_count(&k) || k < 1 || c.device_get(&dev, 0)) {
		tell(fd, "driver=%d\nerror=the driver sees no device\n", v);
		return 1;
	}
	c.device_name(name, sizeof name, dev);
	c.attribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev);
	c.attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
	c.attribute(&posix, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev);
	tell(fd, "driver=%d\ndevices=%d\nname=%s\nmode=%d\nvmm=%d\nposix_fd=%d\n", v, k, name, mode, vmm, posix);
	return 0;
}

/* What an allocation shareable as a POSIX file descriptor looks like on device `dev`. */
static void fd_prop(CUmemAllocationProp *p, CUdevice dev)
{
	memset(p, 0, sizeof *p);
	p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->location.id = dev;
}

/* Maps handle h (size n) read-write into a new range of the current context; 0 or 1. */
static int cu_map(const struct cu *c, int fd, CUmemGenericAllocationHandle h, size_t n, CUdevice dev,
		  CUdeviceptr *ptr)
{
	CUmemAccessDesc acc;
	memset(&acc, 0, sizeof acc);
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CUresult r;
	if ((r = c->reserve(ptr, n, 0, 0, 0))) {
		cu_fail(c, fd, "cuMemAddressReserve", r);
		return 1;
	}
	if ((r = c->map(*ptr, n, 0, h, 0))) {
		cu_fail(c, fd, "cuMemMap", r);
		return 1;
	}
	if ((r = c->set_access(*ptr, n, &acc, 1))) {
		cu_fail(c, fd, "cuMemSetAccess", r);
		return 1;
	}
	return 0;
}

enum { PATTERN = 0x1eab5eed };

/* The two ends of the sharing probe. */
struct share {
	int sock[2]; /* exporter writes on [0], importer reads on [1] */
};

/* Sends descriptor `d` with one byte over socket s (SCM_RIGHTS); 0 or -1. */
static int send_fd(int s, int d)
{
	char byte = 'm';
	struct iovec iov = {&byte, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &d, sizeof d);
	return sendmsg(s, &m, 0) == 1 ? 0 : -1;
}

/* Receives a descriptor sent by send_fd; the descriptor, or -1. */
static int recv_fd(int s)
{
	char byte;
	struct iovec iov = {&byte, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	int d;
	memcpy(&d, CMSG_DATA(cm), sizeof d);
	return d;
}

/* The owner's side: device memory filled with PATTERN, exported as a POSIX file descriptor and
 * sent; then waits for the importer's verdict byte before releasing it. */
static int try_export(void *arg, int fd)
{
	struct share *sh = arg;
	close(sh->sock[1]);
	struct cu c;
	CUdevice dev;
	if (cu_start(&c, fd, &dev))
		return 1;
	CUmemAllocationProp p;
	fd_prop(&p, dev);
	size_t gran = 0;
	CUresult r;
	CUmemGenericAllocationHandle h;
	CUdeviceptr ptr;
	int shared = -1;
	if ((r = c.granularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM)) || !gran) {
		cu_fail(&c, fd, "cuMemGetAllocationGranularity", r);
		return 1;
	}
	if ((r = c.create(&h, gran, &p, 0))) {
		cu_fail(&c, fd, "cuMemCreate(POSIX file descriptor)", r);
		return 1;
	}
	if (cu_map(&c, fd, h, gran, dev, &ptr))
		return 1;
	if ((r = c.memset32(ptr, PATTERN, gran / 4)) || (r = c.sync())) {
		cu_fail(&c, fd, "filling it", r);
		return 1;
	}
	if ((r = c.export_handle(&shared, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))) {
		cu_fail(&c, fd, "cuMemExportToShareableHandle(POSIX file descriptor)", r);
		return 1;
	}
	if (send_fd(sh->sock[0], shared)) {
		tell(fd, "sending the descriptor: %s", strerror(errno));
		return 1;
	}
	char verdict = 0;
	if (read(sh->sock[0], &verdict, 1) != 1)
		verdict = 0;
	return verdict == 'y' ? 0 : 1;
}

/* The client's side, run in its own PID namespace where one can be made: receives the
 * descriptor, imports and maps it, reads the pattern back. */
static int import_here(struct share *sh, int fd)
{
	int d = recv_fd(sh->sock[1]);
	if (d < 0) {
		tell(fd, "no descriptor came: %s", strerror(errno));
		return 1;
	}
	struct cu c;
	CUdevice dev;
	if (cu_start(&c, fd, &dev))
		return 1;
	CUmemAllocationProp p;
	fd_prop(&p, dev);
	size_t gran = 0;
	CUresult r;
	CUmemGenericAllocationHandle h;
	CUdeviceptr ptr;
	unsigned words[4] = {0};
	if ((r = c.granularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM))) {
		cu_fail(&c, fd, "cuMemGetAllocationGranularity", r);
		return 1;
	}
	if ((r = c.import_handle(&h, (void *)(intptr_t)d, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))) {
		cu_fail(&c, fd, "cuMemImportFromShareableHandle(POSIX file descriptor)", r);
		return 1;
	}
	if (cu_map(&c, fd, h, gran, dev, &ptr))
		return 1;
	if ((r = c.copy_out(words, ptr, sizeof words))) {
		cu_fail(&c, fd, "reading it back", r);
		return 1;
	}
	for (int i = 0; i < 4; i++)
		if (words[i] != PATTERN) {
			tell(fd, "imported, but it holds 0x%x, not the owner's 0x%x", words[i], (unsigned)PATTERN);
			return 1;
		}
	return 0;
}

static int try_import(void *arg, int fd)
{
	struct share *sh = arg;
	close(sh->sock[0]);
	int own_ns = enter_ns(CLONE_NEWPID) == 0;
	int e = errno;
	pid_t pid = own_ns ? fork() : 0;
	if (pid == 0) {
		int r = import_here(sh, fd);
		if (write(sh->sock[1], r ? "n" : "y", 1) != 1)
			r = 1;
		if (!r && own_ns)
			tell(fd, "the client PID %d of a PID namespace of its own", (int)getpid());
		else if (!r)
			tell(fd, "both in one PID namespace (no new one could be made: %s)", strerror(e));
		if (own_ns)
			_exit(r);
		return r;
	}
	int ws;
	while (pid > 0 && waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return 1;
	return pid > 0 && WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
}

/* Owner and client as leap-bench will run them (item 3 of issue 27): device memory passed as
 * a POSIX file descriptor over a Unix socket, imported in another PID namespace. */
static void probe_fdshare(void)
{
	struct answer lib;
	try_in_child(try_libcuda, NULL, TRY_SECS, &lib);
	if (lib.code != 0) {
		say("skip", "device memory by fd", *lib.text ? lib.text : "libcuda.so.1 cannot be loaded", NULL);
		return;
	}
	if (access("/dev/nvidiactl", F_OK)) {
		say("skip", "device memory by fd", "no NVIDIA device nodes (/dev/nvidiactl)", NULL);
		return;
	}
	struct share sh;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sh.sock)) {
		say("fail", "device memory by fd", strerror(errno), NULL);
		return;
	}
	struct answer imp, exp;
	/* the importer first, in the background: try_in_child waits, so run it by hand */
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		say("fail", "device memory by fd", strerror(errno), NULL);
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		alarm(TRY_SECS);
		_exit(try_import(&sh, p[1]));
	}
	close(p[1]);
	close(sh.sock[1]);
	sh.sock[1] = -1;
	try_in_child(try_export, &sh, TRY_SECS, &exp);
	close(sh.sock[0]);
	memset(&imp, 0, sizeof imp);
	ssize_t k = pid > 0 ? read(p[0], imp.text, sizeof imp.text - 1) : -1;
	imp.text[k > 0 ? k : 0] = 0;
	close(p[0]);
	int ws = 0;
	while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	imp.code = pid > 0 && WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	char detail[2200];
	if (exp.code == 0 && imp.code == 0) {
		snprintf(detail, sizeof detail, "exported by one process, imported and read back by another, %s",
			 imp.text);
		say("ok", "device memory by fd", detail, NULL);
		return;
	}
	snprintf(detail, sizeof detail, "owner: %s; client: %s", exp.code == 0 ? "ok" : exp.text[0] ? exp.text : "failed",
		 imp.code == 0 ? "ok" : imp.text[0] ? imp.text : "failed");
	say("fail", "device memory by fd", detail,
	    "leap-bench's owner and client cannot share device memory this way: cuda timings cannot run here");
}

/* The compute mode, the device and the driver, from try_cuda's lines. */
static void probe_cuda(void)
{
	struct answer a;
	try_in_child(try_cuda, NULL, TRY_SECS, &a);
	char *save = NULL, *err = NULL, *name = NULL;
	int drv = 0, mode = -1, posix = -1, vmm = -1, devices = 0;
	for (char *l = strtok_r(a.text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');
		if (!eq)
			continue;
		*eq = 0;
		const char *v = eq + 1;
		int x = 0;
		int num = !leap_parse_int(v, -1, 1 << 30, &x);
		if (!strcmp(l, "error"))
			err = eq + 1;
		else if (!strcmp(l, "name"))
			name = eq + 1;
		else if (num && !strcmp(l, "driver"))
			drv = x;
		else if (num && !strcmp(l, "devices"))
			devices = x;
		else if (num && !strcmp(l, "mode"))
			mode = x;
		else if (num && !strcmp(l, "vmm"))
			vmm = x;
		else if (num && !strcmp(l, "posix_fd"))
			posix = x;
	}
	char detail[1200];
	if (a.code != 0) {
		snprintf(detail, sizeof detail, "%s", err ? err : a.text[0] ? a.text : "the driver probe failed");
		/* with the driver's device nodes there, a driver that does not start is a failure */
		if (access("/dev/nvidiactl", F_OK) == 0)
			say("fail", "cuda driver", detail, "nothing on the cuda backend can run here");
		else
			say("skip", "cuda driver", detail, NULL);
		return;
	}
	snprintf(detail, sizeof detail, "%d device%s, device 0 %s; driver API %d.%d", devices, devices == 1 ? "" : "s",
		 name ? name : "?", drv / 1000, drv % 1000 / 10);
	say("ok", "cuda driver", detail, NULL);
	struct answer d;
	try_in_child(try_driver_check, NULL, TRY_SECS, &d);
	if (d.code == 0)
		say("ok", "driver against runtime", d.text, NULL);
	else
		say("fail", "driver against runtime", d.text, "every cuda record ends in leap's fatal error (exit 2)");
	static const char *const modes[] = {"DEFAULT", "EXCLUSIVE_THREAD", "PROHIBITED", "EXCLUSIVE_PROCESS"};
	const char *m = mode >= 0 && mode <= 3 ? modes[mode] : "unknown";
	snprintf(detail, sizeof detail, "compute mode %s", m);
	if (mode == 0)
		say("ok", "compute mode", detail, NULL);
	else if (mode == 1 || mode == 3)
		say("fail", "compute mode", detail,
		    "one context at a time: leap-verify works (one runner per candidate), but leap-bench's owner and "
		    "client need two processes on the device and its cuda timings fail; set `nvidia-smi -c DEFAULT` (root)");
	else
		say("fail", "compute mode", detail, "no process may make a context: set `nvidia-smi -c DEFAULT` (root)");
	snprintf(detail, sizeof detail, "virtual memory management %s, POSIX file descriptor handles %s",
		 vmm == 1 ? "supported" : "not supported", posix == 1 ? "supported" : "not supported");
	if (vmm == 1 && posix == 1)
		say("ok", "fd handles", detail, NULL);
	else
		say("fail", "fd handles", detail, "leap-bench's owner and client cannot share device memory by descriptor");
}
#endif

/* One probe by name; 0, or -1 when the name is unknown. */
static int run_probe(const char *name)
{
	struct answer a;
	if (!strcmp(name, "userns")) {
		try_in_child(try_userns, NULL, TRY_SECS, &a);
		if (!a.code)
			say("ok", "user namespace", a.text, NULL);
		else if (geteuid() == 0)
			say("ok", "user namespace", "none here, and none needed: as root the sandbox makes its namespaces directly",
			    NULL);
		else
			say("fallback", "user namespace", a.text,
			    "--no-namespaces (without root the sandbox needs a user namespace for the others)");
	} else if (!strcmp(name, "pidns") || !strcmp(name, "mountns") || !strcmp(name, "netns")) {
		int (*fn)(void *, int) = name[0] == 'p' ? try_pidns : name[0] == 'm' ? try_mountns : try_netns;
		const char *what = name[0] == 'p' ? "PID namespace" : name[0] == 'm' ? "mount namespace" : "network namespace";
		try_in_child(fn, NULL, TRY_SECS, &a);
		if (!a.code)
			say("ok", what, a.text, NULL);
		else
			say("fallback", what, a.text, "--no-namespaces");
	} else if (!strcmp(name, "sysbind")) {
		try_in_child(try_sysbind, NULL, TRY_SECS, &a);
		if (a.code == 0)
			say("ok", "/sys bind", a.text, NULL);
		else
			say("fallback", "/sys bind", a.text,
			    "automatic on an NVIDIA machine: leap's sandbox probe finds the minimal root cannot be made, and "
			    "candidates see the machine's files");
	} else if (!strcmp(name, "memfd")) {
		try_in_child(try_memfd, NULL, TRY_SECS, &a);
		if (!a.code)
			say("ok", "memfd seals", a.text, NULL);
		else
			say("fallback", "memfd seals", a.text,
			    "automatic: leap-bench's inputs stay unsealed, a candidate could write them through a new mapping");
	} else if (!strcmp(name, "seccomp")) {
		try_in_child(try_seccomp, NULL, TRY_SECS, &a);
		if (!a.code)
			say("ok", "seccomp", a.text, NULL);
		else
			say("fail", "seccomp", a.text,
			    "none: the runner refuses to load a candidate without its system-call filter (every record an error)");
	} else if (!strcmp(name, "freezer")) {
		probe_freezer();
	} else if (!strcmp(name, "sandbox")) {
		probe_sandbox();
	} else if (!strcmp(name, "libcuda")) {
		probe_libcuda();
	} else if (!strcmp(name, "cuda") || !strcmp(name, "fdshare")) {
#ifdef LEAP_PROBE_CUDA
		if (name[0] == 'c')
			probe_cuda();
		else
			probe_fdshare();
#else
		say("skip", name[0] == 'c' ? "cuda driver" : "device memory by fd",
		    "this probe was built without CUDA's headers (no nvcc where leap was built)", NULL);
#endif
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const all[] = {"userns", "pidns", "mountns", "netns", "sysbind", "memfd", "seccomp",
					  "freezer", "sandbox", "libcuda", "cuda", "fdshare"};
	if (argc < 2) {
		fprintf(stderr, "usage: %s all | NAME...\n", leap_prog());
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "all")) {
			for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
				run_probe(all[k]);
		} else if (run_probe(argv[i])) {
			fprintf(stderr, "%s: unknown probe '%s'\n", leap_prog(), argv[i]);
			return 2;
		}
	}
	return 0;
}
