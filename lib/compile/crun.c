/* crun.c - run one compiler process under limits, its output captured, the suites hidden from it. */
/*
 * Every program leap-compile starts (cc, nvcc, nm, and the --version and nvidia-smi queries)
 * starts here, so that one place decides what a compiler child may do; how a child is started
 * is lib/core/child.c's, shared with the run sandbox. A child gets a clean environment (PATH, the C
 * locale, TMPDIR and HOME in its job directory), its own process group, stdin from /dev/null,
 * rlimits on address space, file size and CPU time (no core dumps), and a wall-clock deadline
 * after which the whole group is killed: a compiler driver runs cc1, as, ld, ptxas as
 * children, and a timeout must end them all.
 *
 * The groups of the running children are registered in the compiler (under run_lock, from
 * the fork until the reap) rather than in a global, so that leap_compiler_abort, called from
 * a signal path of the program, can kill them and stop new forks. The child is reaped only
 * after its output closed and it exited (waitid WNOWAIT), so a group id is never reused while
 * it might be killed.
 *
 * A run that reads a candidate's code is isolated: before execve the child makes a mount
 * namespace of its own and mounts empty read-only tmpfs over the task suites and /proc
 * (describe). Whether the system allows that is probed once at start (leap_crun_hiding), so
 * that a refusal is one warning then, not a failed compile per record; a child that cannot
 * hide what was promised reports a set-up failure (lib/core/child.h contract 4) and never runs the
 * compiler, which leap_crun turns into an error of leap's own, never into a verdict on the
 * candidate.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The compile namespace and the compilers' limits (leap-compile):
 *
 * - The compile namespace (`lib/compile/crun.c`: `leap_crun_hiding()`, `describe()`; the mounts are
 *   `hide_dirs()` of `lib/core/child.c`, shared with the run sandbox): every compiler run that reads
 *   a candidate's code (the candidate's, the task shim's, a batch's, the `nm` check of a batch)
 *   starts in a mount namespace of its own -- `unshare(CLONE_NEWNS)` as root, otherwise an
 *   unprivileged user namespace with a mount namespace (the compiler keeps the user's own file
 *   access outside) -- where every mount is private and an empty read-only tmpfs covers: the
 *   task suite in use (`--tasks`, `LEAP_TASKS`), the other places a suite is looked for (the
 *   bundled suite beside the program, `$DATADIR/tasks`), the reference builds of leap-verify
 *   and leap-bench (`CACHE/artifacts` of this cache and of the default one; made at start, so
 *   that one leap-verify makes later is hidden too), and `/proc` (its `/proc/PID/root` links
 *   lead into other processes' view of the files, where nothing is hidden). This stops what the
 *   dependency list cannot show: a candidate that embeds the reference with `.incbin`, or
 *   embeds a reference build (a loadable `.so`) to `dlopen` it from a memfd at run time. A
 *   compile that fails on a hidden path (a compiler line saying it could not be read: "No such
 *   file", "file not found", "cannot open"...) also gets `forbidden_include` with the output
 *   withheld; other errors keep their diagnostics. Tests: "compile: .incbin of a task's
 *   reference.c is refused (the compilers do not see the suite)", "compile: .incbin of a
 *   reference build in the cache is refused", "compile: .incbin through /proc/PID/root (another
 *   process's view of the files) is refused", "compile: without root the compilers hide the
 *   suite in a user namespace" (runs leap-compile as nobody; needs root to switch), "compile:
 *   an ordinary error on a line that names /proc keeps its diagnostics (only unreadable paths
 *   are forbidden)". The namespace costs 0.2 to 0.4 ms per compiler run on this machine (20
 *   mounts; making them private walks all of them): 20 cold cpu compiles with `-j 1` took 757
 *   ms (median of 10) before and 736 ms after, within the noise. The `--version` and
 *   `nvidia-smi` queries, which read no candidate, run outside it.
 * - Wall-clock limit (`--timeout`, default 120 s) after which the compiler's whole process
 *   group is killed -- leap-compile.bats "limits: a compiler that hangs is stopped at
 *   --timeout"; `#include "/dev/zero"` ends as an error, not a hang -- "limits: #include
 *   \"/dev/zero\" ends as a compile error, not a hang". SIGTERM, SIGINT or SIGHUP of
 *   leap-compile kill every running compiler's process group -- faults.bats "compile: SIGTERM
 *   mid-run ends the running compilers with their process groups, removes the work directory
 *   and cache temporaries"; the compiler driver also has `PR_SET_PDEATHSIG` = SIGKILL, so
 *   SIGKILL of leap-compile ends the driver; its own children (cc1, as, ld, cicc) have no such
 *   signal and run on until they finish or reach their CPU limit (untested). faults.bats
 *   "compile: killed halfway (SIGKILL), a later run compiles every record and the artifacts
 *   load" shows the cache stays sound.
 * - Address-space limit (`--memory`, default 8 GiB), CPU-time limit (timeout + 5 s), no core
 *   files, file-size limit (1 GiB) -- faults.bats "compile: ulimit -f below the artifact size:
 *   output_limit verdicts, no artifact, a later run recompiles". (The address-space limit has
 *   no test of its own; the diag fuzz corpus holds a real nvcc run that hit it,
 *   `nvcc-template.txt`.)
 * - A clean environment: PATH, LD_LIBRARY_PATH, LC_ALL=C, LANG=C, and TMPDIR/HOME in the job's
 *   own directory (untested).
 * - Bounded output: at most 1 MiB of compiler output is kept (CAPTURE_MAX) (the rest is counted
 *   as dropped), machine paths are scrubbed from it (leap-compile.bats "logs: no path of this
 *   machine; --max-log cuts the log and keeps the first error"), `--max-log` (4096) bytes are
 *   stored in the record.
 * - Diagnostics parsing survives any output: `make fuzz` (fuzz_diag) and leap-compile.bats
 *   "diagnostics: every compiler output of the fuzz corpus (real nvcc, gcc, ld, ptxas logs and
 *   fuzz finds) becomes a verdict"; a NUL byte does not hide later errors -- "diagnostics: a
 *   NUL byte in the compiler output does not cut the log or hide the errors after it".
 *
 * What the compile step does not stop:
 *
 * - Embedding any other readable file. `asm(".incbin \"/path\"")` copies any file the compiling
 *   user can read and the namespace does not hide into the shared object; at verify time the
 *   candidate can print it (it lands in `verify.output`) or encode it in its outputs
 *   (`verify.mismatch.got`). The verify sandbox cannot help: the data was taken at compile
 *   time. Shown by "verify: data the compiler embedded (.incbin) from a file outside the suite
 *   reaches verify.output". This covers SSH keys, tokens and, when leap-compile runs as root,
 *   every file on the machine; another copy of the suite (a checkout elsewhere, a bind mount of
 *   the suite's directory under another path, a hard link) is not hidden either (untested).
 * - Whether a file exists. `__has_include("/path")` is not in the dependency list, so a
 *   candidate learns one bit per compile about any path outside the hidden directories (inside
 *   them the answer is always no). Shown by "compile: __has_include tells a candidate whether a
 *   file outside the suite exists (one bit; a documented limit)".
 * - Systems without namespaces. When neither `unshare(CLONE_NEWNS)` nor an unprivileged user
 *   namespace is allowed (a container without CAP_SYS_ADMIN, `user.max_user_namespaces=0`, some
 *   hardened kernels), leap-compile warns once ("no mount namespace for the compilers") and
 *   compiles without hiding: `.incbin` of the suite then works again. Shown by "compile: with
 *   no mount namespace at all, one warning, and .incbin of the suite is the documented limit".
 *   A suite directory that holds the work directory, the cache, a `-I` directory of the flags
 *   or a system directory also stays visible (with a warning; untested), and so does a suite
 *   file under a `-I` directory of the flags when there is no namespace.
 * - The ad-hoc modes. `leap-verify --task T FILE` and `leap-bench --task T FILE` build FILE
 *   with `lib/task/build.c` (`leap_build_artifact()`), which has neither the include guard nor the
 *   namespace nor limits: use them on your own code; feed model output through leap-compile.
 * - Compiler bugs (crashes are reported as `compiler_crash`; exploits are out of scope).
 *
 * Mitigation for the rest: run leap-compile as an unprivileged user that can read nothing
 * secret (not root, no SSH keys or tokens readable).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"
#include "crun.h"
#include "incguard.h"
#include "core/util.h"
#include "core/banned.h"

#define CAPTURE_MAX (1 << 20)   /* compiler output kept per run */

/* Searches PATH for `name` (or checks it when it holds a '/'). Newly allocated absolute
 * path, or NULL. */
/* The environment of every compiler run: PATH (and LD_LIBRARY_PATH) from ours, the C locale
 * for stable messages, TMPDIR and HOME in the job's directory. Newly allocated. */
static char **child_env(const char *dir)
{
	char **env = xcalloc(8, sizeof(char *));
	int n = 0;
	const char *path = getenv("PATH");
	env[n++] = xasprintf("PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	const char *ld = getenv("LD_LIBRARY_PATH");
	if (ld && *ld)
		env[n++] = xasprintf("LD_LIBRARY_PATH=%s", ld);
	env[n++] = xstrdup("LC_ALL=C");
	env[n++] = xstrdup("LANG=C");
	env[n++] = xasprintf("TMPDIR=%s", dir);
	env[n++] = xasprintf("HOME=%s", dir);
	env[n] = NULL;
	return env;
}

/*
 * Describes the child of one run in *ch (lib/core/child.h): argv in `dir` with env, stdin from
 * /dev/null `nul`, stdout and stderr on `out`, the limits, and with `ns` (c->ns or 0) a
 * mount namespace of its own where c->hide and /proc are hidden (/proc/PID/root links lead
 * into the mount namespaces of other processes, where nothing is hidden; the compilers do
 * not need it): mode 1 unshare(CLONE_NEWNS) (root), mode 2 with a user namespace too (an
 * unprivileged user; the compiler keeps the caller's file access outside).
 */
static void describe(const struct leap_compiler *c, int ns, char *const argv[], char *const env[],
		     const char *dir, double timeout, int64_t mem, int64_t fsize, int nul, int out,
		     struct leap_child *ch)
{
	leap_child_init(ch);
	ch->argv = argv;
	ch->env = env;
	ch->dir = dir;
	ch->fd[0] = nul;
	ch->fd[1] = ch->fd[2] = out;
	ch->nfd = 3;
	ch->report_slot = 3;
	ch->fail_slot = 2;
	ch->fail_prefix = "leap-compile: compiler set-up: ";
	ch->exec_what = "cannot run the compiler";
	if (mem > 0)
		leap_child_limit(ch, RLIMIT_AS, (uint64_t)mem, (uint64_t)mem);
	if (fsize > 0)
		leap_child_limit(ch, RLIMIT_FSIZE, (uint64_t)fsize, (uint64_t)fsize);
	leap_child_limit(ch, RLIMIT_CPU, (uint64_t)timeout + 5, (uint64_t)timeout + 10);
	leap_child_limit(ch, RLIMIT_CORE, 0, 0);
	if (ns) {
		/* never run the compiler where the suite is visible once hiding was promised */
		ch->unshare_flags = ns == 1 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS;
		ch->hide = (const char *const *)c->hide;
		ch->nhide = c->nhide;
		ch->hide_proc = 1;
	}
}

/* Starts ch and registers its group in c (leap_compiler_abort kills it) under run_lock: an
 * abort either sees this group or stops the fork. Returns 0, or -1 with errno set. */
static int start_registered(struct leap_compiler *c, struct leap_child *ch)
{
	pthread_mutex_lock(&c->run_lock);
	int r = c->aborting ? (errno = ECANCELED, -1) : leap_child_start(ch);
	if (!r) {
		xgrow((void **)&c->groups, &c->groups_cap, c->ngroups + 1, sizeof *c->groups);
		c->groups[c->ngroups++] = ch->pid;
	}
	pthread_mutex_unlock(&c->run_lock);
	return r;
}

/* Reaps ch (its group killed first: the timeout, or stragglers) and unregisters its group. */
static void reap_registered(struct leap_compiler *c, struct leap_child *ch)
{
	pid_t pid = ch->pid;
	leap_child_finish(ch, 0);
	pthread_mutex_lock(&c->run_lock);
	for (size_t i = 0; i < c->ngroups; i++)
		if (c->groups[i] == pid) {
			c->groups[i] = c->groups[--c->ngroups];
			break;
		}
	pthread_mutex_unlock(&c->run_lock);
}

/* Reads the child's output from `fd` into r->out (at most CAPTURE_MAX, the rest counted in
 * r->dropped) until it closed its output and exited, or `deadline` passed (r->timed_out). The
 * child is not reaped, so that its group id stays ours. */
static void capture(const struct leap_child *ch, int fd, double deadline, struct leap_crun *r)
{
	int open_pipe = 1;
	char chunk[8192];
	for (;;) {
		double left = deadline - leap_now();
		if (left <= 0) {
			r->timed_out = 1;
			return;
		}
		if (open_pipe) {
			struct pollfd p = {fd, POLLIN, 0};
			int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
			int n = poll(&p, 1, ms);
			if (n < 0 && errno != EINTR) {
				open_pipe = 0;
				continue;
			}
			if (n > 0) {
				ssize_t k = read(fd, chunk, sizeof(chunk));
				if (k > 0) {
					size_t keep = r->out.len < CAPTURE_MAX ? CAPTURE_MAX - r->out.len : 0;
					if (keep > (size_t)k)
						keep = (size_t)k;
					leap_buf_add(&r->out, chunk, keep);
					r->dropped += (size_t)k - keep;
				} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
					open_pipe = 0;
				}
			}
			continue;
		}
		/* output closed: wait for the exit without reaping */
		if (leap_child_exited(ch))
			return;
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
}

/*
 * Runs argv[0] (an absolute path) in directory `dir` with a clean environment, its own
 * process group, stdin from /dev/null, stdout and stderr captured together, and limits:
 * address space `mem`, file size `fsize`, CPU time and `timeout` seconds of wall time, after
 * which the whole group is killed. The group is registered in c (leap_compiler_abort kills
 * it) from the fork until it is reaped. With `isolate` (every run that reads a candidate's
 * code) and c->ns set, the program runs in a mount namespace of its own where c->hide is
 * hidden (describe). Returns 0 with *r filled, or -1 with a new message in *err when the
 * program could not be started at all (a set-up failure in the child: lib/core/child.h contract
 * 4; or the compiler is being aborted).
 */
int leap_crun(struct leap_compiler *c, int isolate, char *const argv[], const char *dir, double timeout,
	      int64_t mem, int64_t fsize, struct leap_crun *r, char **err)
{
	memset(r, 0, sizeof(*r));
	leap_buf_add(&r->out, "", 0);
	int pfd[2];
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0 || pipe2(pfd, O_CLOEXEC)) {
		*err = xasprintf("%s: %s", nul < 0 ? "/dev/null" : "pipe", strerror(errno));
		if (nul >= 0)
			close(nul);
		return -1;
	}
	char **env = child_env(dir);
	struct leap_child ch;
	describe(c, isolate ? c->ns : 0, argv, env, dir, timeout, mem, fsize, nul, pfd[1], &ch);
	double t0 = leap_now();
	int started = start_registered(c, &ch);
	if (started)
		*err = xasprintf("fork: %s", strerror(errno));
	close(nul);
	close(pfd[1]);
	leap_strv_free(env);
	if (started) {
		close(pfd[0]);
		return -1;
	}
	capture(&ch, pfd[0], t0 + timeout, r);
	reap_registered(c, &ch);
	close(pfd[0]);
	r->status = ch.status;
	r->ms = (leap_now() - t0) * 1000.0;
	if (ch.setup_error[0]) {
		*err = xasprintf("compiler set-up: %s", ch.setup_error);
		leap_buf_free(&r->out);
		return -1;
	}
	return 0;
}

/* Runs a short query (--version, nvidia-smi) and returns its output, or NULL. */
char *leap_crun_query(struct leap_compiler *c, char *const argv[], const char *dir)
{
	struct leap_crun r;
	char *err = NULL;
	/* not isolated: nvidia-smi needs /proc, and no candidate is involved */
	if (leap_crun(c, 0, argv, dir, 30.0, 0, 0, &r, &err)) {
		free(err);
		return NULL;
	}
	if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status)) {
		leap_buf_free(&r.out);
		return NULL;
	}
	return leap_buf_detach(&r.out);
}

/* The limit `want` (bytes; 0: none) as a child can really get it: no more than the hard limit
 * `res` this process already runs under (`ulimit -f`, `ulimit -v`), which an unprivileged
 * child cannot raise. Never fails: an unreadable limit leaves `want` as it is. */
int64_t leap_crun_limit(int res, int64_t want)
{
	struct rlimit rl;
	if (getrlimit(res, &rl) || rl.rlim_max == RLIM_INFINITY)
		return want;
	if (want == 0 || (uint64_t)want > (uint64_t)rl.rlim_max)
		return (int64_t)rl.rlim_max;
	return want;
}

/* 1 if a compiler child can make a mount namespace the way `mode` says and hide c->hide in
 * it: a probe of its own (lib/core/child.h), so this process is left as it is. */
static int ns_works(const struct leap_compiler *c, int mode)
{
	struct leap_child ch;
	describe(c, mode, NULL, NULL, NULL, 0, 0, 0, -1, -1, &ch);
	ch.nlimit = 0;
	ch.report_slot = ch.fail_slot = -1;
	ch.nfd = 0;
	if (leap_child_start(&ch))
		return 0;
	leap_child_finish(&ch, -1);
	return ch.exit_code == 0;
}

/* 1 if hiding the canonical directory `d` would hide `p` (made canonical first; a path that
 * does not exist is never hidden). */
static int would_hide(const char *d, const char *p)
{
	char *real = p ? realpath(p, NULL) : NULL;
	int r = real && leap_path_under(real, d);
	free(real);
	return r;
}

/* Fills c->hide with the canonical, existing directories of o->hide that can be hidden without
 * breaking the compilers, and c->ns with the kind of namespace this system allows. Never
 * fails: a directory left visible, or no namespace at all, is a warning. */
void leap_crun_hiding(struct leap_compiler *c, const struct leap_compile_opts *o)
{
	/* what the compilers need: their work, the cache, their headers, programs and libraries */
	const char *cuda = getenv("CUDA_HOME");
	const char *need[] = {c->workdir, c->cache->dir, cuda && *cuda ? cuda : NULL, "/usr/local/cuda",
			      "/usr/bin", "/usr/lib", "/usr/include", "/usr/local/bin", "/usr/local/include",
			      "/bin", "/lib", "/lib64", "/etc", "/proc", "/dev"};
	for (size_t i = 0; i < o->nhide; i++) {
		char *d = o->hide[i] ? realpath(o->hide[i], NULL) : NULL;
		int keep = d && strcmp(d, "/");
		for (size_t k = 0; keep && k < c->nhide; k++)
			keep = strcmp(c->hide[k], d) != 0;
		const char *why = NULL;
		for (size_t k = 0; keep && !why && k < sizeof(need) / sizeof(need[0]); k++)
			if (would_hide(d, need[k]))
				why = need[k];
		for (int b = 0; keep && !why && b < LEAP_NBACKENDS; b++) {
			size_t nf;
			char **fl = leap_backend_of((enum leap_backend)b)->user_flags(o, &nf);
			for (size_t k = 0; !why && k < nf; k++) {
				const char *f = fl[k];
				if (!strncmp(f, "-I", 2) && f[2])
					f += 2;
				if (would_hide(d, f))
					why = fl[k];
			}
		}
		if (keep && why) {
			leap_warn("%s stays visible to the compilers: it holds %s, which they need", d, why);
			keep = 0;
		}
		if (keep) {
			c->hide = xrealloc(c->hide, (c->nhide + 1) * sizeof(*c->hide));
			c->hide[c->nhide++] = d;
		} else {
			free(d);
		}
	}
	if (!c->nhide)
		return;
	if (geteuid() == 0 && ns_works(c, 1))
		c->ns = 1;
	else if (ns_works(c, 2))
		c->ns = 2;
	else
		leap_warn("no mount namespace for the compilers (the system refuses unshare(CLONE_NEWNS) and "
			  "user namespaces): candidates can read the task suite with .incbin; run leap-compile "
			  "as a user that cannot read it (SECURITY.md)");
}
