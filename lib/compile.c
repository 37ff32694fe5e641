/* compile.c - build a candidate into an artifact (abi.h) with cc or nvcc, under limits, through the cache. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile.h"
#include "diag.h"
#include "build.h"
#include "extract.h"
#include "gpu.h"
#include "jsonl.h"
#include "shim.h"
#include "util.h"
#include "banned.h"

#define CAPTURE_MAX (1 << 20)   /* compiler output kept per run */
#define STORED_LOG (64 << 10)   /* log kept in a cached result */

static const char *const cand_name[2] = {"kernel.cu", "kernel.c"};
static const char *const shim_name[2] = {"leap_shim.cu", "leap_shim.c"};
static const char *const prelude_name = "leap_prelude.h";
static const char *const deps_name = "leap_deps.d"; /* the -MMD list of files the compiler read */

/* ---- running a program ---- */

struct run {
	int status;        /* wait status */
	int timed_out;
	double ms;
	struct leap_buf out; /* stdout and stderr together, at most CAPTURE_MAX bytes */
	size_t dropped;      /* bytes beyond that */
};

/* Searches PATH for `name` (or checks it when it holds a '/'). Newly allocated absolute
 * path, or NULL. */
static char *find_program(const char *name)
{
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? realpath(name, NULL) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *e = strchr(path, ':');
		size_t n = e ? (size_t)(e - path) : strlen(path);
		char *p = xasprintf("%.*s/%s", (int)n, n ? path : ".", name);
		if (access(p, X_OK) == 0) {
			char *real = realpath(p, NULL);
			free(p);
			return real;
		}
		free(p);
		path += n + (e ? 1 : 0);
	}
	return NULL;
}

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

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Written first by a compiler child whose set-up failed (exit 127): a fault of the machine,
 * not of the candidate, which run_program turns into an error of its own. */
static const char setup_mark[] = "leap-compile: compiler set-up: ";

/*
 * Puts the calling process (a compiler child: single-threaded, async-signal-safe calls only)
 * in a mount namespace of its own, mode 1 with unshare(CLONE_NEWNS) (root), mode 2 with a user
 * namespace too (an unprivileged user; the compiler keeps the caller's file access outside),
 * makes every mount private and mounts an empty read-only tmpfs over each directory of
 * hide[0..n) that exists and over /proc (whose /proc/PID/root links lead into the mount
 * namespaces of other processes, where nothing is hidden; the compilers do not need it).
 * Returns 0, or -1 with errno set (the mounts may be half done: the caller must not run the
 * compiler then).
 */
static int hide_dirs(int mode, char *const *hide, size_t n)
{
	if (unshare(mode == 1 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS))
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(hide[i], &st) || !S_ISDIR(st.st_mode))
			continue;
		if (mount("leap-hidden", hide[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=4k,mode=0555"))
			return -1;
	}
	if (mount("leap-hidden", "/proc", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555"))
		return -1;
	return 0;
}

/*
 * Runs argv[0] (an absolute path) in directory `dir` with a clean environment, its own
 * process group, stdin from /dev/null, stdout and stderr captured together, and limits:
 * address space `mem`, file size `fsize`, CPU time and `timeout` seconds of wall time, after
 * which the whole group is killed. The group is registered in c (leap_compiler_abort kills
 * it) from the fork until it is reaped. With `isolate` (every run that reads a candidate's
 * code) and c->ns set, the program runs in a mount namespace of its own where c->hide is
 * hidden (hide_dirs). Returns 0 with *r filled, or -1 with a new message in *err when the
 * program could not be started at all (the namespace could not be made, or the compiler is
 * being aborted).
 */
static int run_program(struct leap_compiler *c, int isolate, char *const argv[], const char *dir, double timeout,
		       int64_t mem, int64_t fsize, struct run *r, char **err)
{
	memset(r, 0, sizeof(*r));
	leap_buf_add(&r->out, "", 0);
	char **env = child_env(dir);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		*err = xasprintf("pipe: %s", strerror(errno));
		free_strv(env);
		return -1;
	}
	struct rlimit cpu = {(rlim_t)timeout + 5, (rlim_t)timeout + 10};
	struct rlimit as = {(rlim_t)mem, (rlim_t)mem};
	struct rlimit fs = {(rlim_t)fsize, (rlim_t)fsize};
	struct rlimit core = {0, 0};
	double t0 = leap_now();
	pid_t parent = getpid();
	/* fork and register under run_lock: an abort either sees this group or stops the fork */
	pthread_mutex_lock(&c->run_lock);
	pid_t pid = c->aborting ? (errno = ECANCELED, -1) : fork();
	if (pid > 0) {
		xgrow((void **)&c->groups, &c->groups_cap, c->ngroups + 1, sizeof *c->groups);
		c->groups[c->ngroups++] = pid;
	}
	if (pid != 0)
		pthread_mutex_unlock(&c->run_lock);
	if (pid < 0) {
		*err = xasprintf("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		free_strv(env);
		return -1;
	}
	if (pid == 0) {
		/* only async-signal-safe calls from here to execve */
		setpgid(0, 0);
		/* the compiler dies with leap-compile (its own process group hears no ^C) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(pfd[1], 2) < 0 || chdir(dir))
			_exit(127);
		if (isolate && c->ns && hide_dirs(c->ns, c->hide, c->nhide)) {
			/* never run the compiler where the suite is visible once hiding was promised */
			static const char ns_fail[] = "cannot hide the task suites from the compiler (mount namespace)\n";
			if (write(2, setup_mark, sizeof(setup_mark) - 1) < 0 || write(2, ns_fail, sizeof(ns_fail) - 1) < 0)
				_exit(127);
			_exit(127);
		}
		if ((mem > 0 && setrlimit(RLIMIT_AS, &as)) || (fsize > 0 && setrlimit(RLIMIT_FSIZE, &fs)) ||
		    setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_CORE, &core)) {
			static const char lim[] = "leap-compile: cannot set the compiler's resource limits\n";
			if (write(2, lim, sizeof(lim) - 1) < 0)
				_exit(127);
			_exit(127);
		}
		execve(argv[0], argv, env);
		static const char msg[] = "leap-compile: cannot run the compiler\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid); /* also here, so the group exists before we might kill it */
	close(pfd[1]);
	free_strv(env);
	double deadline = t0 + timeout;
	int open_pipe = 1, exited = 0;
	char chunk[8192];
	while (!exited) {
		double left = deadline - leap_now();
		if (left <= 0) {
			r->timed_out = 1;
			break;
		}
		if (open_pipe) {
			struct pollfd p = {pfd[0], POLLIN, 0};
			int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
			int n = poll(&p, 1, ms);
			if (n < 0 && errno != EINTR) {
				open_pipe = 0;
				continue;
			}
			if (n > 0) {
				ssize_t k = read(pfd[0], chunk, sizeof(chunk));
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
		/* output closed: wait for the exit without reaping, so the group id stays ours */
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
			exited = 1;
			break;
		}
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	kill(-pid, SIGKILL); /* the timeout, or stragglers of the group */
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&c->run_lock);
	for (size_t i = 0; i < c->ngroups; i++)
		if (c->groups[i] == pid) {
			c->groups[i] = c->groups[--c->ngroups];
			break;
		}
	pthread_mutex_unlock(&c->run_lock);
	close(pfd[0]);
	r->status = st;
	r->ms = (leap_now() - t0) * 1000.0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && r->out.len >= sizeof(setup_mark) - 1 &&
	    !memcmp(r->out.s, setup_mark, sizeof(setup_mark) - 1)) {
		size_t n = strcspn(r->out.s, "\n");
		*err = xasprintf("%.*s", (int)n, r->out.s);
		leap_buf_free(&r->out);
		return -1;
	}
	return 0;
}

/* Runs a short query (--version, nvidia-smi) and returns its output, or NULL. */
static char *query(struct leap_compiler *c, char *const argv[], const char *dir)
{
	struct run r;
	char *err = NULL;
	/* not isolated: nvidia-smi needs /proc, and no candidate is involved */
	if (run_program(c, 0, argv, dir, 30.0, 0, 0, &r, &err)) {
		free(err);
		return NULL;
	}
	if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status)) {
		leap_buf_free(&r.out);
		return NULL;
	}
	return leap_buf_detach(&r.out);
}

/* ---- files ---- */

static int write_file(const char *path, const char *data, size_t n, char **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		*err = xasprintf("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	while (n) {
		ssize_t k = write(fd, data, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			*err = xasprintf("cannot write %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		data += k;
		n -= (size_t)k;
	}
	if (close(fd)) {
		*err = xasprintf("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int copy_file(const char *from, const char *to, char **err)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		*err = xasprintf("cannot open %s: %s", from, strerror(errno));
		return -1;
	}
	struct leap_buf b = {0};
	char chunk[65536];
	ssize_t k;
	while ((k = read(in, chunk, sizeof(chunk))) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			*err = xasprintf("cannot read %s: %s", from, strerror(errno));
			close(in);
			leap_buf_free(&b);
			return -1;
		}
		leap_buf_add(&b, chunk, (size_t)k);
	}
	close(in);
	int rc = write_file(to, b.s ? b.s : "", b.len, err);
	leap_buf_free(&b);
	return rc;
}

/* rm -r of a directory this process made; symbolic links are removed, never followed.
 * Failures are ignored (the work directory is temporary). */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p = xasprintf("%s/%s", path, e->d_name);
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				remove_tree(p);
			else
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

/* ---- toolchains ---- */

/* ---- the include guard: a candidate may read only system and toolkit headers ---- */

/* Adds the canonical path of directory `d` to the tool's allowed roots, if it exists. */
static void add_root(struct leap_tool *t, const char *d)
{
	char *real = realpath(d, NULL);
	if (!real)
		return;
	t->roots = xrealloc(t->roots, (t->nroots + 1) * sizeof(*t->roots));
	t->roots[t->nroots++] = real;
}

/* Computes the directories whose files a candidate may include with backend b's compiler: the
 * system include directories, the compiler's own headers, the toolkit's include directories
 * (nvcc: <toolkit>/include and <toolkit>/targets) and every directory the user's own compiler
 * flags name with -I, -isystem, -idirafter or -iquote. Never fails: a directory that does not
 * exist is left out. */
static void resolve_roots(struct leap_compiler *c, enum leap_backend b)
{
	struct leap_tool *t = &c->tools[b];
	static const char *const sys[] = {"/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib/clang",
					  "/usr/lib/nvidia-cuda-toolkit"};
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		add_root(t, sys[i]);
	glob_t g;
	if (glob("/usr/lib/llvm-*/lib/clang", GLOB_NOSORT, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			add_root(t, g.gl_pathv[i]);
	globfree(&g);
	if (b == LEAP_BACKEND_CUDA) {
		/* <toolkit>/bin/nvcc: the toolkit's headers, not the whole prefix (nvcc in /usr/bin
		 * must not make all of /usr readable) */
		char *real = realpath(t->path, NULL);
		char *bin = real ? strrchr(real, '/') : NULL;
		if (bin) {
			*bin = '\0';
			char *top = strrchr(real, '/');
			if (top) {
				*top = '\0';
				char *inc = xasprintf("%s/include", *real ? real : "");
				char *tg = xasprintf("%s/targets", *real ? real : "");
				add_root(t, inc);
				add_root(t, tg);
				free(inc);
				free(tg);
			}
		}
		free(real);
	}
	size_t nf = b == LEAP_BACKEND_CUDA ? c->o.n_nvcc_flags : c->o.n_cc_flags;
	char **fl = b == LEAP_BACKEND_CUDA ? c->o.nvcc_flags : c->o.cc_flags;
	static const char *const inc[] = {"-I", "-isystem", "-idirafter", "-iquote"};
	for (size_t i = 0; i < nf; i++)
		for (size_t k = 0; k < sizeof(inc) / sizeof(inc[0]); k++) {
			size_t l = strlen(inc[k]);
			if (strncmp(fl[i], inc[k], l))
				continue;
			if (fl[i][l])
				add_root(t, fl[i] + l);
			else if (i + 1 < nf)
				add_root(t, fl[i + 1]);
			break;
		}
}

/* 1 if the canonical path p lies in directory `root` (canonical) or is it. */
static int under(const char *p, const char *root)
{
	size_t l = strlen(root);
	if (l == 1 && root[0] == '/')
		return 1;
	return !strncmp(p, root, l) && (p[l] == '/' || p[l] == '\0');
}

/* Reads one word of a make dependency list from *s into `out` (reset first): backslash-newline
 * is a blank, a backslash quotes the next character, $$ is $. Returns 0 at the end of the
 * list, 1 with out->s the word (NUL-terminated). */
static int deps_word(const char **s, struct leap_buf *out)
{
	const char *p = *s;
	out->len = 0;
	for (;;) { /* skip blanks, newlines and line continuations (a backslash before a newline or the end) */
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		else if (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r' || p[1] == '\0'))
			p += p[1] ? 2 : 1;
		else
			break;
	}
	while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
		if (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r' || p[1] == '\0'))
			break;
		if (p[0] == '$' && p[1] == '$')
			p++; /* $$ */
		else if (p[0] == '\\')
			p++; /* \x */
		leap_buf_add(out, p, 1);
		p++;
	}
	*s = p;
	return out->len > 0;
}

/* Checks the dependency list the compiler wrote in job directory `dir`: every file it read
 * must be in the job directory or under one of backend b's allowed roots, and no header of a
 * vendor library outside `allowed` (task.json "libraries", LEAP_LIB_*). Returns 0 when all
 * is well, 1 with *bad set to the first other file (newly allocated), 2 with *bad set to the
 * name of the first library not allowed ("cublas"), and -1 when no list was written or it
 * cannot be read. */
static int deps_check(const struct leap_compiler *c, enum leap_backend b, const char *dir, unsigned allowed,
		      char **bad)
{
	const struct leap_tool *t = &c->tools[b];
	char *path = xasprintf("%s/%s", dir, deps_name), *err = NULL;
	size_t len;
	char *text = leap_read_file(path, &len, &err);
	free(path);
	free(err);
	if (!text)
		return -1;
	char *jd = realpath(dir, NULL);
	struct leap_buf w = {0};
	const char *s = text;
	int target = 1, vendor = 0; /* the first words name the target: "out.so:" or "out.so :" */
	while (!*bad && deps_word(&s, &w)) {
		if (target) {
			if (!strcmp(w.s, ":") || w.s[w.len - 1] == ':')
				target = 0;
			continue;
		}
		char *full = w.s[0] == '/' ? xstrdup(w.s) : xasprintf("%s/%s", dir, w.s);
		char *real = realpath(full, NULL);
		const char *p = real ? real : full;
		int ok = jd && under(p, jd);
		for (size_t i = 0; i < t->nroots && !ok; i++)
			ok = under(p, t->roots[i]);
		const char *base = strrchr(p, '/');
		unsigned lib = ok && !(jd && under(p, jd)) ? leap_library_of_header(base ? base + 1 : p) : 0;
		if (!ok) {
			*bad = xstrdup(w.s);
		} else if (lib && !(allowed & lib)) {
			*bad = xstrdup(leap_library_name(lib));
			vendor = 1;
		}
		free(real);
		free(full);
	}
	free(jd);
	leap_buf_free(&w);
	free(text);
	return *bad ? 1 + vendor : 0;
}

/* The first vendor library outside `allowed` whose file name the candidate spells
 * ("libcublas" for a dlopen), or NULL. Static. */
static const char *named_library(const char *code, unsigned allowed)
{
	for (unsigned i = 0; i < LEAP_LIB_COUNT; i++) {
		const char *name = leap_library_name(1u << i);
		char lib[32];
		snprintf(lib, sizeof lib, "lib%s", name);
		for (const char *p = code; (p = strstr(p, lib)); p++) {
			/* libcublas names cublas, not cublasLt (libcublasLt) */
			unsigned bit = !strncmp(p + 3, "cublasLt", 8) ? LEAP_LIB_CUBLASLT : 1u << i;
			if (!(allowed & bit))
				return leap_library_name(bit);
		}
	}
	return NULL;
}

/* Writes "-lcublas"... for each library task t allows into libs and points at[0], at[1]...
 * to them, then a NULL (at has room for LEAP_LIB_COUNT + 1). */
static void allowed_libs(const struct leap_task *t, char libs[][24], const char **at)
{
	size_t n = 0;
	for (unsigned i = 0; i < LEAP_LIB_COUNT; i++)
		if (t->libraries & (1u << i)) {
			snprintf(libs[n], 24, "-l%s", leap_library_name(1u << i));
			at[n] = libs[n];
			n++;
		}
	at[n] = NULL;
}

/* A compile_error for a vendor library `lib` the task does not allow. */
static void forbid_library(struct leap_cresult *r, const struct leap_task *t, const char *lib, const char *how)
{
	r->status = LEAP_C_ERROR;
	r->reason = xstrdup("library_not_allowed");
	struct leap_buf m = {0};
	leap_buf_addf(&m, "the candidate %s %s, a library that is not allowed for this task (task %s allows ", how, lib,
		      t->id);
	int any = 0;
	for (unsigned i = 0; i < LEAP_LIB_COUNT; i++)
		if (t->libraries & (1u << i))
			leap_buf_addf(&m, "%s%s", any++ ? ", " : "", leap_library_name(1u << i));
	leap_buf_adds(&m, any ? "); write the kernel yourself" : "none: the CUDA runtime only); write the kernel yourself");
	r->message = leap_buf_detach(&m);
}

static void resolve_tool(struct leap_compiler *c, enum leap_backend b)
{
	struct leap_tool *t = &c->tools[b];
	if (t->resolved)
		return;
	t->resolved = 1;
	struct leap_buf id = {0};
	if (b == LEAP_BACKEND_CUDA) {
		const char *want = c->o.nvcc;
		char *home_nvcc = NULL;
		if (!want) {
			const char *home = getenv("CUDA_HOME");
			home_nvcc = xasprintf("%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
			want = access(home_nvcc, X_OK) == 0 ? home_nvcc : "nvcc";
		}
		t->path = find_program(want);
		if (!t->path)
			t->err = xasprintf("the cuda backend needs nvcc, and '%s' was not found (use --nvcc or set "
					   "CUDA_HOME)", want);
		free(home_nvcc);
	} else {
		const char *want = c->o.cc;
		if (!want) {
			const char *env = getenv("CC");
			want = env && *env ? env : "cc";
		}
		t->path = find_program(want);
		if (!t->path)
			t->err = xasprintf("the cpu backend needs a C compiler, and '%s' was not found (use --cc)", want);
	}
	if (!t->path)
		return;
	char *const argv[] = {t->path, (char *)"--version", NULL};
	char *v = query(c, argv, c->workdir);
	if (!v) {
		t->err = xasprintf("%s --version failed: the compiler does not run", t->path);
		free(t->path);
		t->path = NULL;
		return;
	}
	leap_buf_addf(&id, "%s\n%s", t->path, v);
	free(v);
	if (b == LEAP_BACKEND_CUDA) {
		/* nvcc compiles host code with the gcc on PATH: it is part of the toolchain */
		char *gcc = find_program("gcc");
		if (gcc) {
			char *const gv[] = {gcc, (char *)"--version", NULL};
			char *hv = query(c, gv, c->workdir);
			leap_buf_addf(&id, "\n%s\n%s", gcc, hv ? hv : "");
			free(hv);
			free(gcc);
		}
		if (c->o.arch) {
			t->arch = xstrdup(c->o.arch);
		} else {
			/* the first visible GPU's exact architecture (sm_90a on Hopper: see gpu.h) */
			struct leap_gpu g;
			leap_gpu_query(&g);
			const struct leap_gpu_dev *d = leap_gpu_device(&g, 0);
			char arch[32];
			if (d && d->cc_major) {
				leap_gpu_arch(d->cc_major, d->cc_minor, arch, sizeof arch);
				t->arch = xstrdup(arch);
			} else {
				t->arch = xstrdup(LEAP_DEFAULT_ARCH);
			}
			leap_gpu_free(&g);
		}
	}
	t->ident = leap_buf_detach(&id);
	resolve_roots(c, b);
}

/* The limit `want` (bytes; 0: none) as a child can really get it: no more than the hard limit
 * `res` this process already runs under (`ulimit -f`, `ulimit -v`), which an unprivileged
 * child cannot raise. Never fails: an unreadable limit leaves `want` as it is. */
static int64_t effective_limit(int res, int64_t want)
{
	struct rlimit rl;
	if (getrlimit(res, &rl) || rl.rlim_max == RLIM_INFINITY)
		return want;
	if (want == 0 || (uint64_t)want > (uint64_t)rl.rlim_max)
		return (int64_t)rl.rlim_max;
	return want;
}

/* 1 if a compiler child can make a mount namespace the way `mode` says and hide c->hide in
 * it (hide_dirs): tried in a child of its own, so this process is left as it is. */
static int ns_works(const struct leap_compiler *c, int mode)
{
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0)
		_exit(hide_dirs(mode, c->hide, c->nhide) ? 1 : 0);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* 1 if hiding the canonical directory `d` would hide `p` (made canonical first; a path that
 * does not exist is never hidden). */
static int would_hide(const char *d, const char *p)
{
	char *real = p ? realpath(p, NULL) : NULL;
	int r = real && under(real, d);
	free(real);
	return r;
}

/* Fills c->hide with the canonical, existing directories of o->hide that can be hidden without
 * breaking the compilers, and c->ns with the kind of namespace this system allows. Never
 * fails: a directory left visible, or no namespace at all, is a warning. */
static void setup_hiding(struct leap_compiler *c, const struct leap_compile_opts *o)
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
		for (int b = 0; keep && !why && b < 2; b++) {
			size_t nf = b == LEAP_BACKEND_CUDA ? o->n_nvcc_flags : o->n_cc_flags;
			char **fl = b == LEAP_BACKEND_CUDA ? o->nvcc_flags : o->cc_flags;
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

int leap_compiler_init(struct leap_compiler *c, const struct leap_compile_opts *o, struct leap_cache *cache,
		       char **err)
{
	memset(c, 0, sizeof(*c));
	c->o = *o;
	/* Limits inherited from the shell bound ours: the verdicts, their messages and the cache
	 * (a limit verdict is reused only under limits no larger) name the limit really applied. */
	c->o.mem_limit = effective_limit(RLIMIT_AS, c->o.mem_limit);
	c->o.out_limit = effective_limit(RLIMIT_FSIZE, c->o.out_limit);
	c->cache = cache;
	const char *tmp = getenv("TMPDIR");
	char *templ = xasprintf("%s/leap-compile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(templ)) {
		*err = xasprintf("cannot create a work directory %s: %s", templ, strerror(errno));
		free(templ);
		return -1;
	}
	c->workdir = templ;
	c->o.hide = NULL; /* the caller's; c->hide is our own copy */
	c->o.nhide = 0;
	setup_hiding(c, o);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->run_lock, NULL);
	pthread_cond_init(&c->cv, NULL);
	return 0;
}

void leap_compiler_abort(struct leap_compiler *c)
{
	pthread_mutex_lock(&c->run_lock);
	c->aborting = 1;
	for (size_t i = 0; i < c->ngroups; i++)
		kill(-c->groups[i], SIGKILL); /* cc1, as, ld, ptxas... the whole group of each compiler */
	pthread_mutex_unlock(&c->run_lock);
	if (c->workdir)
		remove_tree(c->workdir);
	if (c->cache)
		leap_cache_remove_own_tmp(c->cache);
}

void leap_compiler_free(struct leap_compiler *c)
{
	if (c->workdir)
		remove_tree(c->workdir);
	free(c->workdir);
	for (int b = 0; b < 2; b++) {
		free(c->tools[b].path);
		free(c->tools[b].ident);
		free(c->tools[b].arch);
		free(c->tools[b].err);
		for (size_t i = 0; i < c->tools[b].nroots; i++)
			free(c->tools[b].roots[i]);
		free(c->tools[b].roots);
	}
	for (size_t i = 0; i < c->nvariants; i++) {
		struct leap_variant *v = c->variants[i];
		free(v->prelude);
		free(v->shim);
		free(v->proto);
		free(v->shim_obj);
		free(v->shim_err);
		free(v);
	}
	free(c->variants);
	for (size_t i = 0; i < c->nhide; i++)
		free(c->hide[i]);
	free(c->hide);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->run_lock);
	free(c->groups);
	pthread_cond_destroy(&c->cv);
	memset(c, 0, sizeof(*c));
}

/* Appends a copy of s to the NULL-terminated vector *v of *n strings. */
static void push(char ***v, size_t *n, size_t *cap, const char *s)
{
	xgrow((void **)v, cap, *n + 2, sizeof(char *));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

/* The compiler's fixed options, then the user's (see the man page). `shared`: link a shared
 * object; otherwise compile an object (-c). */
static void base_flags(const struct leap_compiler *c, enum leap_backend b, int shared, char ***v, size_t *n,
		       size_t *cap)
{
	if (b == LEAP_BACKEND_CUDA) {
		push(v, n, cap, shared ? "-shared" : "-c");
		push(v, n, cap, "-Xcompiler");
		push(v, n, cap, "-fPIC");
		push(v, n, cap, "-O3");
		char *a = leap_gpu_arch_flag(c->tools[b].arch);
		push(v, n, cap, a);
		free(a);
		for (size_t i = 0; i < c->o.n_nvcc_flags; i++)
			push(v, n, cap, c->o.nvcc_flags[i]);
	} else {
		/* -g1: line tables, so that a crash names the candidate's line (crash.h); the code
		 * is the same as without it */
		static const char *const fixed[] = {"-std=gnu11", "-O2", "-g1", "-fPIC", "-fopenmp", "-fmax-errors=20", "-Werror=implicit-function-declaration",
						    "-fdiagnostics-color=never", "-fdiagnostics-column-unit=byte"};
		push(v, n, cap, shared ? "-shared" : "-c");
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			push(v, n, cap, fixed[i]);
		for (size_t i = 0; i < c->o.n_cc_flags; i++)
			push(v, n, cap, c->o.cc_flags[i]);
	}
}

/* The full argv of a compiler run: the compiler, base flags, then `tail` (NULL-terminated). */
static char **make_argv(const struct leap_compiler *c, enum leap_backend b, int shared, const char *const *tail)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	push(&v, &n, &cap, c->tools[b].path);
	base_flags(c, b, shared, &v, &n, &cap);
	for (size_t i = 0; tail[i]; i++)
		push(&v, &n, &cap, tail[i]);
	return v;
}

/* Hashes the toolchain and flags of backend b. */
static void hash_toolchain(const struct leap_compiler *c, enum leap_backend b, struct leap_hash *h)
{
	leap_hash_str(h, leap_backend_name(b));
	leap_hash_str(h, c->tools[b].ident);
	leap_hash_str(h, c->tools[b].arch);
	leap_hash_str(h, "include guard 1"); /* results from before the guard are not reused */
	/* nor results from compilers that could read the suite, where these cannot */
	leap_hash_str(h, c->ns && c->nhide ? "suite and /proc hidden 2" : "suite visible");
	char **v = NULL;
	size_t n = 0, cap = 0;
	base_flags(c, b, 1, &v, &n, &cap);
	for (size_t i = 0; i < n; i++)
		leap_hash_str(h, v[i]);
	free_strv(v);
}

struct leap_variant *leap_compiler_variant(struct leap_compiler *c, const struct leap_task *t, enum leap_backend b,
					   char **err)
{
	for (size_t i = 0; i < c->nvariants; i++)
		if (c->variants[i]->task == t && c->variants[i]->backend == b)
			return c->variants[i];
	resolve_tool(c, b);
	if (c->tools[b].err) {
		*err = xstrdup(c->tools[b].err);
		return NULL;
	}
	struct leap_variant *v = xcalloc(1, sizeof(*v));
	v->task = t;
	v->backend = b;
	v->prelude = leap_shim_prelude(t, b);
	v->shim = leap_shim_source(t, b);
	v->proto = leap_task_prototype(t, b);
	struct leap_hash h;
	leap_hash_init(&h);
	leap_hash_str(&h, "leap-compile shim object 1");
	hash_toolchain(c, b, &h);
	leap_hash_str(&h, v->prelude);
	leap_hash_str(&h, v->shim);
	leap_hash_final(&h, v->shim_key);
	xgrow((void **)&c->variants, &c->cap, c->nvariants + 1, sizeof(*c->variants));
	c->variants[c->nvariants++] = v;
	return v;
}

void leap_compile_key(const struct leap_compiler *c, const struct leap_variant *v, const char *code, char hex[65])
{
	struct leap_hash h;
	leap_hash_init(&h);
	leap_hash_str(&h, "leap-compile artifact 1");
	hash_toolchain(c, v->backend, &h);
	leap_hash_str(&h, v->prelude);
	leap_hash_str(&h, v->shim);
	if (v->task->libraries) { /* what the candidate may include */
		char libs[32];
		snprintf(libs, sizeof libs, "libraries %x", v->task->libraries);
		leap_hash_str(&h, libs);
	}
	leap_hash_str(&h, code);
	leap_hash_final(&h, hex);
}

/* ---- results ---- */

int leap_compile_toolchain(enum leap_backend b, const struct leap_compile_opts *o, struct leap_toolchain *tc,
			   char **err)
{
	memset(tc, 0, sizeof(*tc));
	struct leap_compiler c;
	memset(&c, 0, sizeof(c));
	c.o = *o;
	c.workdir = (char *)"/"; /* the queries read no file of ours */
	pthread_mutex_init(&c.run_lock, NULL);
	resolve_tool(&c, b);
	struct leap_tool *t = &c.tools[b];
	int rc = 0;
	if (t->err) {
		*err = t->err;
		t->err = NULL;
		rc = -1;
	} else {
		/* the version line: after the path, the first line (gcc) or nvcc's "release" line */
		const char *v = strchr(t->ident, '\n');
		v = v ? v + 1 : t->ident;
		const char *rel = b == LEAP_BACKEND_CUDA ? strstr(v, "release") : NULL;
		if (rel)
			while (rel > v && rel[-1] != '\n')
				rel--;
		tc->version = xstrndup(rel ? rel : v, strcspn(rel ? rel : v, "\n"));
		tc->arch = t->arch ? xstrdup(t->arch) : NULL;
		char **fl = NULL;
		size_t n = 0, cap = 0;
		base_flags(&c, b, 1, &fl, &n, &cap);
		struct leap_buf f = {0};
		leap_buf_add(&f, "", 0);
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(fl[i], "-shared") || !strncmp(fl[i], "-fdiagnostics", 13) || !strncmp(fl[i], "-fmax-errors", 12))
				continue;
			leap_buf_addf(&f, "%s%s", f.len ? " " : "", fl[i]);
		}
		free_strv(fl);
		tc->flags = leap_buf_detach(&f);
	}
	free(t->path);
	free(t->ident);
	free(t->arch);
	free(t->err);
	for (size_t i = 0; i < t->nroots; i++)
		free(t->roots[i]);
	free(t->roots);
	pthread_mutex_destroy(&c.run_lock);
	free(c.groups);
	return rc;
}

void leap_toolchain_free(struct leap_toolchain *tc)
{
	free(tc->version);
	free(tc->arch);
	free(tc->flags);
	memset(tc, 0, sizeof(*tc));
}

const char *leap_compile_source_name(enum leap_backend b)
{
	return cand_name[b];
}

const char *leap_cstatus_name(enum leap_cstatus s)
{
	switch (s) {
	case LEAP_C_OK: return "ok";
	case LEAP_C_ERROR: return "error";
	case LEAP_C_TIMEOUT: return "timeout";
	default: return "internal";
	}
}

void leap_cresult_free(struct leap_cresult *r)
{
	free(r->reason);
	free(r->message);
	free(r->artifact);
	free(r->log);
	free(r->arch);
	json_decref(r->diagnostics);
	memset(r, 0, sizeof(*r));
}

void leap_cresult_copy(struct leap_cresult *dst, const struct leap_cresult *src)
{
	*dst = *src;
	dst->reason = src->reason ? xstrdup(src->reason) : NULL;
	dst->message = src->message ? xstrdup(src->message) : NULL;
	dst->artifact = src->artifact ? xstrdup(src->artifact) : NULL;
	dst->log = src->log ? xstrdup(src->log) : NULL;
	dst->arch = src->arch ? xstrdup(src->arch) : NULL;
	dst->diagnostics = src->diagnostics ? json_deep_copy(src->diagnostics) : NULL;
}

static void internal(struct leap_cresult *r, char *msg)
{
	r->status = LEAP_C_INTERNAL;
	r->reason = xstrdup("internal");
	r->message = msg;
}

json_t *leap_cresult_json(const struct leap_cresult *r, size_t max_log)
{
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(leap_cstatus_name(r->status)));
	if (r->reason)
		json_object_set_new(o, "reason", json_string(r->reason));
	if (r->message)
		json_object_set_new(o, "message", json_string(r->message));
	json_object_set_new(o, "ms", json_real(r->ms));
	json_object_set_new(o, "cached", json_boolean(r->cached));
	if (r->cached)
		json_object_set_new(o, "compiled_ms", json_real(r->compiled_ms));
	if (r->hash[0])
		json_object_set_new(o, "hash", json_string(r->hash));
	if (r->artifact)
		json_object_set_new(o, "artifact", json_string(r->artifact));
	if (r->arch)
		json_object_set_new(o, "arch", json_string(r->arch));
	if (r->batch > 1)
		json_object_set_new(o, "batch", json_integer(r->batch));
	json_object_set_new(o, "diagnostics", r->diagnostics ? json_incref(r->diagnostics) : json_array());
	char *log = leap_log_cut(r->log ? r->log : "", max_log);
	json_object_set_new(o, "log", json_string(log));
	free(log);
	return o;
}

/* Rounds to 0.01 ms, so that records stay short. */
static double round_ms(double ms)
{
	return (double)(long long)(ms * 100.0 + 0.5) / 100.0;
}

static enum leap_cstatus parse_cstatus(const char *s)
{
	if (!strcmp(s, "ok"))
		return LEAP_C_OK;
	if (!strcmp(s, "timeout"))
		return LEAP_C_TIMEOUT;
	return LEAP_C_ERROR;
}

int leap_compile_lookup(struct leap_compiler *c, const struct leap_variant *v, const char *key,
			struct leap_cresult *r)
{
	if (!c->o.reuse)
		return 0;
	double t0 = leap_now();
	json_t *m = leap_cache_get(c->cache, key, "so");
	if (!m)
		return 0;
	enum leap_cstatus st = parse_cstatus(leap_get_str(m, "status", "error"));
	/* a limit verdict is only reused under limits no larger than those that produced it */
	const char *why = leap_get_str(m, "reason", "");
	if (((st == LEAP_C_TIMEOUT || !strcmp(why, "cpu_limit")) && leap_get_num(m, "timeout", 0) < c->o.timeout) ||
	    (!strcmp(why, "memory_limit") && leap_get_num(m, "memory", 0) < (double)c->o.mem_limit) ||
	    (!strcmp(why, "output_limit") && leap_get_num(m, "output", 0) < (double)c->o.out_limit)) {
		json_decref(m);
		return 0;
	}
	memset(r, 0, sizeof(*r));
	r->status = st;
	const char *s;
	if ((s = leap_get_str(m, "reason", NULL)))
		r->reason = xstrdup(s);
	if ((s = leap_get_str(m, "message", NULL)))
		r->message = xstrdup(s);
	if ((s = leap_get_str(m, "log", NULL)))
		r->log = xstrdup(s);
	if ((s = leap_get_str(m, "arch", NULL)))
		r->arch = xstrdup(s);
	json_t *d = json_object_get(m, "diagnostics");
	r->diagnostics = json_is_array(d) ? json_incref(d) : json_array();
	r->compiled_ms = leap_get_num(m, "ms", 0);
	r->cached = 1;
	memcpy(r->hash, key, 65);
	if (st == LEAP_C_OK)
		r->artifact = leap_cache_path(c->cache, key, "so");
	json_decref(m);
	(void)v;
	r->ms = round_ms((leap_now() - t0) * 1000.0);
	return 1;
}

/* Makes a new job directory under the work directory. */
static char *job_dir(struct leap_compiler *c, char **err)
{
	pthread_mutex_lock(&c->lock);
	unsigned long n = ++c->jobs;
	pthread_mutex_unlock(&c->lock);
	char *d = xasprintf("%s/j%lu", c->workdir, n);
	if (mkdir(d, 0700)) {
		*err = xasprintf("cannot create %s: %s", d, strerror(errno));
		free(d);
		return NULL;
	}
	return d;
}

/* Scrubs a compiler's output of this machine's paths. */
static char *scrub(const struct leap_compiler *c, const char *dir, const struct leap_buf *out)
{
	const char *home = getenv("HOME");
	const char *cuda = getenv("CUDA_HOME");
	char *cache_root = xstrdup(c->cache->dir);
	char *slash = strrchr(cache_root, '/');
	if (slash)
		*slash = '\0';
	const char *dirs[] = {dir, c->workdir, cache_root, cuda && *cuda ? cuda : "/usr/local/cuda",
			      home && *home && strcmp(home, "/") ? home : NULL};
	const char *repl[] = {"", "", "$LEAP_CACHE", "$CUDA_HOME", "~"};
	char *s = leap_log_scrub(out->s ? out->s : "", out->len, dirs, repl, sizeof(dirs) / sizeof(dirs[0]));
	free(cache_root);
	return s;
}

/* Makes sure v's shim object is built (once per process, shared through the cache). Returns
 * its private path (owned by v), or NULL with *err set. A failure is remembered for the rest
 * of the run, except one caused by a full disk, which the next call tries again. */
static const char *ensure_shim(struct leap_compiler *c, struct leap_variant *v, char **err)
{
	pthread_mutex_lock(&c->lock);
	while (v->shim_state == 1)
		pthread_cond_wait(&c->cv, &c->lock);
	if (v->shim_state == 2 || v->shim_state == 3) {
		const char *p = v->shim_obj;
		if (!p)
			*err = xstrdup(v->shim_err);
		pthread_mutex_unlock(&c->lock);
		return p;
	}
	v->shim_state = 1;
	pthread_mutex_unlock(&c->lock);

	enum leap_backend b = v->backend;
	char *priv = xasprintf("%s/shim-%s.o", c->workdir, v->shim_key);
	char *fail = NULL;
	int transient = 0; /* the failure is the machine's (a full disk): not remembered */
	/* the shim is leap's own generated code: its object is reused even under --no-cache */
	json_t *m = leap_cache_get(c->cache, v->shim_key, "o");
	if (m && !strcmp(leap_get_str(m, "status", ""), "ok")) {
		char *cached = leap_cache_path(c->cache, v->shim_key, "o");
		if (copy_file(cached, priv, &fail)) {
			free(fail);
			fail = NULL;
			json_decref(m);
			m = NULL; /* evicted meanwhile: build it */
		}
		free(cached);
	} else {
		json_decref(m);
		m = NULL;
	}
	if (!m) {
		char *dir = job_dir(c, &fail);
		if (dir) {
			char *pre = xasprintf("%s/%s", dir, prelude_name), *src = xasprintf("%s/%s", dir, shim_name[b]);
			char *obj = leap_cache_tmp(c->cache, "o");
			if (!write_file(pre, v->prelude, strlen(v->prelude), &fail) &&
			    !write_file(src, v->shim, strlen(v->shim), &fail)) {
				const char *tail[] = {"-include", prelude_name, shim_name[b], "-o", obj, NULL};
				char **argv = make_argv(c, b, 0, tail);
				struct run r;
				if (!run_program(c, 1, argv, dir, c->o.timeout, c->o.mem_limit, c->o.out_limit, &r, &fail)) {
					if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status)) {
						char *log = scrub(c, dir, &r.out);
						int sig = WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0;
						if (r.timed_out)
							fail = xasprintf("the compiler ran longer than %g s on the generated "
									 "shim of task '%s'", c->o.timeout, v->task->id);
						else if (sig == SIGXFSZ)
							fail = xasprintf("the compiler could not write the shim of task '%s': "
									 "file size limit of %lld bytes exceeded (`ulimit -f`?)",
									 v->task->id, (long long)c->o.out_limit);
						else if (sig)
							fail = xasprintf("the compiler died of signal %d (%s) on the generated "
									 "shim of task '%s'", sig, strsignal(sig), v->task->id);
						else if (strstr(log, "No space left on device") ||
							 strstr(log, "Disk quota exceeded")) {
							fail = xasprintf("the compiler could not write the shim of task '%s': "
									 "no space left on the device (is the cache "
									 "directory full?)", v->task->id);
							transient = 1;
						} else
							fail = xasprintf("the generated shim of task '%s' does not compile with "
									 "these %s flags: %s",
									 v->task->id, leap_backend_name(b), log);
						free(log);
						unlink(obj);
					} else if (copy_file(obj, priv, &fail)) {
						unlink(obj);
					} else {
						json_t *meta = json_pack("{s:s,s:s,s:s,s:f}", "status", "ok", "kind",
									 "shim", "task", v->task->id, "ms", r.ms);
						char *perr = NULL;
						if (leap_cache_put(c->cache, v->shim_key, obj, "o", meta, &perr)) {
							leap_warn("%s", perr);
							free(perr);
						}
						json_decref(meta);
					}
					leap_buf_free(&r.out);
				}
				free_strv(argv);
			}
			free(obj);
			free(pre);
			free(src);
			remove_tree(dir);
			free(dir);
		}
	}
	json_decref(m);
	pthread_mutex_lock(&c->lock);
	if (fail && transient) {
		v->shim_state = 0; /* the next record tries again: space may have been freed */
		*err = fail;
		free(priv);
	} else if (fail) {
		v->shim_state = 3;
		v->shim_err = fail;
		*err = xstrdup(fail);
		free(priv);
	} else {
		v->shim_state = 2;
		v->shim_obj = priv;
	}
	pthread_cond_broadcast(&c->cv);
	const char *p = v->shim_obj;
	pthread_mutex_unlock(&c->lock);
	return p;
}

/* 1 if some diagnostic's message contains `needle`. */
static int diag_has(const struct leap_diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].message, needle))
			return 1;
	return 0;
}

/* Classifies a failed compile and writes the one-line message; `c_out_limit` is the file-size
 * limit the compiler ran under. A machine fault (a full disk) makes the result internal. */
static void classify(struct leap_variant *v, const char *code, const struct leap_diags *d, const char *log,
		     int64_t c_out_limit, struct leap_cresult *r)
{
	const char *entry = v->task->entry;
	char *undef1 = xasprintf("undefined reference to `%s'", entry);
	char *undef2 = xasprintf("undefined reference to '%s'", entry);
	char *conflict = xasprintf("conflicting types for '%s'", entry);
	char *overload = xasprintf("overloaded function \"%s\" has \"C\" linkage", entry);
	char *incompat = xasprintf("declaration is incompatible with previous \"%s\"", entry);
	int undefined = diag_has(d, undef1) || diag_has(d, undef2);
	if ((undefined && leap_defines(code, entry)) || diag_has(d, conflict) || diag_has(d, overload) ||
	    diag_has(d, incompat)) {
		r->reason = xstrdup("wrong_signature");
		r->message = xasprintf("%s() is defined with another signature than the required prototype: %s",
				       entry, v->proto);
	} else if (undefined) {
		r->reason = xstrdup("missing_entry");
		r->message = xasprintf("the entry point %s() is not defined; define exactly: %s", entry, v->proto);
	} else if (strstr(log, "File size limit exceeded") || strstr(log, "File too large")) {
		/* a tool under the driver (ld, cc1, as) hit the file-size limit: a limit verdict,
		 * recompiled later under a larger limit, never cached as the candidate's fault */
		r->reason = xstrdup("output_limit");
		r->message = xasprintf("the compiler wrote a file larger than the limit of %lld bytes",
				       (long long)c_out_limit);
	} else if (strstr(log, "No space left on device") || strstr(log, "Disk quota exceeded")) {
		/* the machine's fault, not the candidate's: not cached, a later run compiles again */
		r->status = LEAP_C_INTERNAL;
		r->reason = xstrdup("internal");
		r->message = xstrdup("the compiler could not write its output: no space left on the device");
	} else if (strstr(log, "out of memory") || strstr(log, "virtual memory exhausted") ||
		   strstr(log, "bad_alloc") || strstr(log, "Cannot allocate memory")) {
		r->reason = xstrdup("memory_limit");
		r->message = xstrdup("the compiler ran out of its memory limit (a huge include, template or "
				     "unrolled loop?)");
	} else {
		const struct leap_diag *first = NULL;
		int link = 0;
		for (size_t i = 0; i < d->n && !first; i++)
			if (!strcmp(d->v[i].severity, "error"))
				first = &d->v[i];
		for (size_t i = 0; i < d->n; i++)
			link |= d->v[i].where && !strcmp(d->v[i].where, "link");
		r->reason = xstrdup(link && (!first || (first->where && !strcmp(first->where, "link"))) ? "link"
												: "compile");
		if (first && first->line > 0)
			r->message = first->col > 0 ? xasprintf("line %d, column %d: %s", first->line, first->col,
								first->message)
						    : xasprintf("line %d: %s", first->line, first->message);
		else if (first)
			r->message = first->where ? xasprintf("%s: %s", first->where, first->message)
						  : xstrdup(first->message);
		else
			r->message = xstrdup("the compiler failed without a diagnostic (see log)");
	}
	free(undef1);
	free(undef2);
	free(conflict);
	free(overload);
	free(incompat);
}

/* Stores the result in the cache (failures too, except internal ones). */
static void publish(struct leap_compiler *c, const char *key, const char *tmp_artifact, struct leap_cresult *r,
		    const char *full_log)
{
	json_t *m = json_pack("{s:s,s:f,s:f,s:f,s:f}", "status", leap_cstatus_name(r->status), "ms", r->ms, "timeout",
			      c->o.timeout, "memory", (double)c->o.mem_limit, "output", (double)c->o.out_limit);
	if (r->reason)
		json_object_set_new(m, "reason", json_string(r->reason));
	if (r->message)
		json_object_set_new(m, "message", json_string(r->message));
	if (r->arch)
		json_object_set_new(m, "arch", json_string(r->arch));
	json_object_set(m, "diagnostics", r->diagnostics);
	char *log = leap_log_cut(full_log, STORED_LOG);
	json_object_set_new(m, "log", json_string(log));
	free(log);
	char *err = NULL;
	if (leap_cache_put(c->cache, key, tmp_artifact, "so", m, &err)) {
		if (r->status == LEAP_C_OK) {
			leap_cresult_free(r);
			internal(r, err);
			memcpy(r->hash, key, 65);
		} else {
			leap_warn("%s", err);
			free(err);
		}
	} else if (r->status == LEAP_C_OK) {
		r->artifact = leap_cache_path(c->cache, key, "so");
	}
	json_decref(m);
}

/* 1 if the output line around p says a file could not be read (the C locale's messages of
 * gcc, gas, ld and nvcc's front end). */
static int unreadable_line(const char *start, const char *p)
{
	static const char *const says[] = {"No such file", "file not found", "cannot open", "Is a directory",
					   "Permission denied", "can't open"};
	const char *b = p;
	while (b > start && b[-1] != '\n')
		b--;
	size_t n = strcspn(b, "\n");
	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		size_t l = strlen(says[i]);
		for (const char *q = b; q + l <= b + n; q++)
			if (!memcmp(q, says[i], l))
				return 1;
	}
	return 0;
}

/* The first path in a compiler's raw output that lies in a directory hidden from it (c->hide
 * or /proc) on a line saying it could not be read ("No such file", "file not found"...),
 * newly allocated, or NULL. The path ends at a blank, quote, colon or control character. */
static char *hidden_named(const struct leap_compiler *c, const struct leap_buf *out)
{
	if (!c->ns || !out->s)
		return NULL;
	for (size_t i = 0; i <= c->nhide; i++) {
		const char *h = i < c->nhide ? c->hide[i] : "/proc";
		size_t l = strlen(h);
		for (const char *p = out->s; (p = strstr(p, h)); p += l)
			if ((p == out->s || strchr(" \t\r\n'\":`", p[-1])) &&
			    (p[l] == '/' || p[l] == '\0' || strchr(" \t\r\n'\":`", p[l])) &&
			    unreadable_line(out->s, p)) {
				size_t n = strcspn(p, " \t\r\n'\":`");
				return xasprintf("%.*s", (int)n, p);
			}
	}
	return NULL;
}

/* Makes r the verdict on a candidate that read a file it may not (`message`, taken over):
 * compile_error forbidden_include, no diagnostics, and *log replaced by a note naming `path`
 * (the compiler's output may quote the file). Never fails. */
static void forbid(struct leap_cresult *r, char **log, char *message, const char *verb, const char *path)
{
	r->status = LEAP_C_ERROR;
	r->reason = xstrdup("forbidden_include");
	r->message = message;
	json_decref(r->diagnostics);
	r->diagnostics = json_array();
	free(*log);
	*log = xasprintf("[leap: the compiler's output is withheld: the candidate %s '%s']\n", verb, path);
}

void leap_compile_run(struct leap_compiler *c, struct leap_variant *v, const char *code, const char *key,
		      struct leap_cresult *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->hash, key, 65);
	enum leap_backend b = v->backend;
	if (b == LEAP_BACKEND_CUDA)
		r->arch = xstrdup(c->tools[b].arch);
	char *err = NULL;
	const char *shim_obj = ensure_shim(c, v, &err);
	if (!shim_obj) {
		internal(r, err);
		return;
	}
	char *dir = job_dir(c, &err);
	if (!dir) {
		internal(r, err);
		return;
	}
	char *pre = xasprintf("%s/%s", dir, prelude_name), *src = xasprintf("%s/%s", dir, cand_name[b]);
	char *out = leap_cache_tmp(c->cache, "so");
	if (write_file(pre, v->prelude, strlen(v->prelude), &err) || write_file(src, code, strlen(code), &err)) {
		internal(r, err);
		goto done;
	}
	char libs[LEAP_LIB_COUNT][24];
	const char *tail_cuda[12 + LEAP_LIB_COUNT] = {"-MMD", "-MF", deps_name, "-include", prelude_name, cand_name[b], shim_obj,
						      "-o", out, "-Xlinker", "-z,defs", NULL};
	allowed_libs(v->task, libs, tail_cuda + 11);
	const char *tail_cpu[] = {"-MMD", "-MF", deps_name, "-include", prelude_name, cand_name[b], shim_obj, "-o",
				  out, "-Wl,-z,defs", "-lm", NULL};
	char **argv = make_argv(c, b, 1, b == LEAP_BACKEND_CUDA ? tail_cuda : tail_cpu);
	struct run run;
	int started = run_program(c, 1, argv, dir, c->o.timeout, c->o.mem_limit, c->o.out_limit, &run, &err);
	free_strv(argv);
	if (started) {
		internal(r, err);
		goto done;
	}
	pthread_mutex_lock(&c->lock);
	c->runs++;
	pthread_mutex_unlock(&c->lock);
	r->ms = round_ms(run.ms);
	char *hidden = hidden_named(c, &run.out);
	char *log = scrub(c, dir, &run.out);
	if (run.dropped) {
		char *more = xasprintf("%s\n[leap: %zu more bytes of compiler output dropped]\n", log, run.dropped);
		free(log);
		log = more;
	}
	leap_buf_free(&run.out);
	struct leap_diags d = {0};
	struct leap_diag_files files = {cand_name[b], prelude_name, shim_name[b]};
	leap_diag_parse(log, strlen(log), &files, &d, c->o.max_diags ? c->o.max_diags : 50);
	r->diagnostics = leap_diags_json(&d);
	struct stat st;
	int built = WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0 && stat(out, &st) == 0 && st.st_size > 0;
	char *bad = NULL;
	int deps = run.timed_out ? -1 : deps_check(c, b, dir, v->task->libraries, &bad);
	const char *named = b == LEAP_BACKEND_CUDA ? named_library(code, v->task->libraries) : NULL;
	if (deps == 2 || (named && deps >= 0 && deps != 1)) {
		forbid_library(r, v->task, deps == 2 ? bad : named, deps == 2 ? "includes the headers of" : "names");
		free(bad);
	} else if (deps == 1) {
		/* the candidate read a file outside the system headers (a task's reference.c, a
		 * secret): no artifact, and no compiler output, which may quote that file */
		forbid(r, &log,
		       xasprintf("the candidate includes '%s', which is not a system or CUDA header: only those "
				 "may be included",
				 bad),
		       "included", bad);
		free(bad);
	} else if (!built && !run.timed_out && hidden) {
		/* it tried to read (#include, .incbin) a file the compiler cannot see: the same
		 * verdict as the include guard's, and the output is withheld likewise */
		forbid(r, &log,
		       xasprintf("the candidate reads '%s', which is hidden from the compiler (a task suite or "
				 "the reference builds): only system and CUDA headers may be included",
				 hidden),
		       "read", hidden);
	} else if (built && deps < 0) {
		r->status = LEAP_C_INTERNAL;
		r->reason = xstrdup("internal");
		r->message = xasprintf("the compiler wrote no dependency list (-MMD -MF %s): the include guard "
				       "cannot check the candidate",
				       deps_name);
	} else if (run.timed_out) {
		r->status = LEAP_C_TIMEOUT;
		r->reason = xstrdup("timeout");
		r->message = xasprintf("the compiler ran longer than %g s and was stopped (a template, "
				       "unrolling or include bomb?)", c->o.timeout);
	} else if (built) {
		r->status = LEAP_C_OK;
	} else if (WIFSIGNALED(run.status)) {
		int sig = WTERMSIG(run.status);
		r->status = LEAP_C_ERROR;
		if (sig == SIGXCPU) {
			r->reason = xstrdup("cpu_limit");
			r->message = xasprintf("the compiler used more than %g s of CPU time", c->o.timeout + 5);
		} else if (sig == SIGXFSZ) {
			r->reason = xstrdup("output_limit");
			r->message = xasprintf("the compiler wrote a file larger than %lld bytes",
					       (long long)c->o.out_limit);
		} else {
			r->reason = xstrdup("compiler_crash");
			r->message = xasprintf("the compiler died of signal %d (%s)", sig, strsignal(sig));
		}
	} else {
		r->status = LEAP_C_ERROR;
		classify(v, code, &d, log, c->o.out_limit, r);
	}
	leap_diags_free(&d);
	free(hidden);
	r->log = log;
	if (r->status != LEAP_C_INTERNAL) /* a machine fault is not the candidate's verdict */
		publish(c, key, r->status == LEAP_C_OK ? out : NULL, r, log);
	if (r->log && strlen(r->log) > STORED_LOG) {
		char *cut = leap_log_cut(r->log, STORED_LOG);
		free(r->log);
		r->log = cut;
	}
done:
	unlink(out);
	free(out);
	free(pre);
	free(src);
	remove_tree(dir);
	free(dir);
}

/* ---- batches: several cuda candidates in one translation unit ---- */

/* 1 if `word` occurs in s as a whole identifier. */
static int has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
		int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

/* The batch screen (see leap_compile_batchable). Appends "#undef NAME" for each macro the
 * code defines to `undefs` when not NULL. */
static int screen(const char *code, struct leap_buf *undefs)
{
	static const char *const banned[] = {"constructor", "destructor", "asm", "__asm", "__asm__", "section",
					     "_Pragma", "__COUNTER__", "__LINE__", "__FILE__", "init_priority",
					     "leap_entry", "leap_abi_version"};
	for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
		if (has_word(code, banned[i]))
			return 0;
	int defined = 0, cont = 0;
	for (const char *p = code; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int was_cont = cont;
		cont = n && p[n - 1] == '\\';
		const char *q = p;
		while (q < p + n && (*q == ' ' || *q == '\t'))
			q++;
		if (!was_cont && q < p + n && *q == '#') {
			q++;
			while (q < p + n && (*q == ' ' || *q == '\t'))
				q++;
			if (!strncmp(q, "include", 7)) {
				const char *r = q + 7;
				while (r < p + n && (*r == ' ' || *r == '\t'))
					r++;
				if (defined || *r != '<')
					return 0;
			} else if (!strncmp(q, "define", 6) && (q[6] == ' ' || q[6] == '\t')) {
				const char *r = q + 6;
				while (*r == ' ' || *r == '\t')
					r++;
				const char *s = r;
				while (isalnum((unsigned char)*s) || *s == '_')
					s++;
				if (s == r)
					return 0;
				if (undefs)
					leap_buf_addf(undefs, "#undef %.*s\n", (int)(s - r), r);
				defined = 1;
			} else if (!strncmp(q, "pragma", 6)) {
				const char *r = q + 6;
				while (*r == ' ' || *r == '\t')
					r++;
				if (strncmp(r, "unroll", 6) && strncmp(r, "nounroll", 8))
					return 0;
			} else {
				return 0;
			}
		}
		p = e ? e + 1 : p + n;
	}
	return 1;
}

int leap_compile_batchable(const char *code)
{
	return screen(code, NULL);
}

/* The prototype of v with the entry point renamed to leap_bI_ENTRY. */
static char *renamed_proto(const struct leap_variant *v, size_t i)
{
	const char *entry = v->task->entry;
	size_t n = strlen(entry);
	for (const char *p = strstr(v->proto, entry); p; p = strstr(p + 1, entry))
		if ((p == v->proto || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) && p[n] == '(')
			return xasprintf("%.*sleap_b%zu_%s", (int)(p - v->proto), v->proto, i, p);
	return xstrdup(v->proto);
}

/* Writes the batch translation unit of the candidates idx[0..n). */
static char *batch_source(const struct leap_variant *v, const char *const *codes, const size_t *idx, size_t n)
{
	struct leap_buf s = {0}, inc = {0};
	leap_buf_add(&inc, "", 0);
	for (size_t k = 0; k < n; k++)
		for (const char *p = codes[idx[k]]; *p;) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			const char *q = p;
			while (q < p + len && (*q == ' ' || *q == '\t' || *q == '#'))
				q++;
			if (q > p && memchr(p, '#', (size_t)(q - p)) && !strncmp(q, "include", 7)) {
				char *line = xasprintf("%.*s\n", (int)len, p);
				if (!strstr(inc.s, line))
					leap_buf_adds(&inc, line);
				free(line);
			}
			p = e ? e + 1 : p + len;
		}
	leap_buf_adds(&s, "/* leap batch */\n");
	leap_buf_adds(&s, inc.s);
	leap_buf_free(&inc);
	const char *entry = v->task->entry;
	for (size_t k = 0; k < n; k++) {
		char *proto = renamed_proto(v, k);
		struct leap_buf undefs = {0};
		leap_buf_add(&undefs, "", 0);
		screen(codes[idx[k]], &undefs);
		leap_buf_addf(&s, "%s\nnamespace leap_b%zu {\n%s\n#define %s leap_b%zu_%s\n#line 1 \"c%zu.cu\"\n", proto, k,
			      proto, entry, k, entry, k);
		for (const char *p = codes[idx[k]]; *p;) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			const char *q = p;
			while (q < p + len && (*q == ' ' || *q == '\t' || *q == '#'))
				q++;
			if (!(q > p && memchr(p, '#', (size_t)(q - p)) && !strncmp(q, "include", 7)))
				leap_buf_add(&s, p, len); /* includes were hoisted; keep the line count */
			leap_buf_add(&s, "\n", 1);
			p = e ? e + 1 : p + len;
		}
		leap_buf_addf(&s, "}\n#undef %s\n%s", entry, undefs.s);
		leap_buf_free(&undefs);
		free(proto);
	}
	return leap_buf_detach(&s);
}

/* Runs a compiler command in `dir`; returns 1 when it exited 0 within the limits, with the
 * scrubbed output in *log (may be NULL) and the wall time in *ms. */
static int run_ok(struct leap_compiler *c, char **argv, const char *dir, char **log, double *ms)
{
	struct run r;
	char *err = NULL;
	if (run_program(c, 1, argv, dir, c->o.timeout, c->o.mem_limit, c->o.out_limit, &r, &err)) {
		free(err);
		return 0;
	}
	int ok = !r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
	if (log)
		*log = scrub(c, dir, &r.out);
	if (ms)
		*ms = r.ms;
	leap_buf_free(&r.out);
	return ok;
}

void leap_compile_batch(struct leap_compiler *c, struct leap_variant *v, size_t n, const char *const *codes,
			const char *const *keys, struct leap_cresult *r, int *done)
{
	enum leap_backend b = v->backend;
	for (size_t i = 0; i < n; i++)
		done[i] = 0;
	if (b != LEAP_BACKEND_CUDA || n < 2)
		return;
	char *err = NULL;
	const char *shim_obj = ensure_shim(c, v, &err);
	char *nm = find_program("nm");
	char *dir = shim_obj && nm ? job_dir(c, &err) : NULL;
	free(err);
	if (!dir) {
		free(nm);
		return;
	}
	size_t *idx = xcalloc(n, sizeof(size_t)), m = 0;
	for (size_t i = 0; i < n; i++) /* one naming a library the task forbids: alone, where it is refused */
		if (screen(codes[i], NULL) && !named_library(codes[i], v->task->libraries))
			idx[m++] = i;
	char *pre = xasprintf("%s/%s", dir, prelude_name), *src = xasprintf("%s/batch.cu", dir);
	char *obj = xasprintf("%s/batch.o", dir);
	char *werr = NULL;
	if (write_file(pre, v->prelude, strlen(v->prelude), &werr)) {
		free(werr);
		m = 0;
	}
	for (int attempt = 0; attempt < 2 && m >= 2; attempt++) {
		char *text = batch_source(v, codes, idx, m);
		if (write_file(src, text, strlen(text), &werr)) {
			free(werr);
			free(text);
			break;
		}
		free(text);
		const char *tail[] = {"-MMD", "-MF", deps_name, "-include", prelude_name, "batch.cu", "-o", obj, NULL};
		char **argv = make_argv(c, b, 0, tail);
		char *log = NULL;
		double ms = 0;
		int ok = run_ok(c, argv, dir, &log, &ms);
		free_strv(argv);
		if (!ok) {
			/* drop the candidates the errors name and try the rest once more */
			struct leap_diags d = {0};
			struct leap_diag_files f = {NULL, prelude_name, NULL};
			leap_diag_parse(log, strlen(log), &f, &d, 1000);
			size_t keep = 0, named = 0;
			for (size_t k = 0; k < m; k++) {
				char *name = xasprintf("c%zu.cu", k);
				int bad = 0;
				for (size_t j = 0; j < d.n; j++)
					bad |= d.v[j].where && !strcmp(d.v[j].where, name) &&
					       !strcmp(d.v[j].severity, "error");
				free(name);
				named += bad;
				if (!bad)
					idx[keep++] = idx[k];
			}
			leap_diags_free(&d);
			free(log);
			if (!named)
				break; /* errors the batch cannot attribute: everyone alone */
			m = keep;
			continue;
		}
		free(log);
		/* a file outside the system headers: everyone alone, where the guard names the culprit */
		char *bad = NULL;
		if (deps_check(c, b, dir, v->task->libraries, &bad)) {
			free(bad);
			break;
		}
		/* a dynamic initializer of one candidate would run in every artifact: not batched */
		char *const nmv[] = {nm, (char *)"-P", obj, NULL};
		struct run nr;
		char *nerr = NULL;
		int clean = 0;
		if (!run_program(c, 1, nmv, dir, 60, 0, 0, &nr, &nerr)) {
			clean = !nr.timed_out && WIFEXITED(nr.status) && WEXITSTATUS(nr.status) == 0 &&
				!strstr(nr.out.s, "_GLOBAL__sub_I") && !strstr(nr.out.s, ".init_array");
			leap_buf_free(&nr.out);
		} else {
			free(nerr);
		}
		if (!clean)
			break;
		pthread_mutex_lock(&c->lock);
		c->runs++;
		pthread_mutex_unlock(&c->lock);
		for (size_t k = 0; k < m; k++) {
			size_t i = idx[k];
			char *out = leap_cache_tmp(c->cache, "so");
			char *defsym = xasprintf("--defsym=%s=leap_b%zu_%s", v->task->entry, k, v->task->entry);
			char libs[LEAP_LIB_COUNT][24];
			const char *lt[9 + LEAP_LIB_COUNT] = {"batch.o", shim_obj, "-o", out, "-Xlinker", "-z,defs", "-Xlinker", defsym,
							      NULL};
			allowed_libs(v->task, libs, lt + 8);
			char **lv = make_argv(c, b, 1, lt);
			double lms = 0;
			int linked = run_ok(c, lv, dir, NULL, &lms);
			free_strv(lv);
			free(defsym);
			if (linked) {
				memset(&r[i], 0, sizeof(r[i]));
				memcpy(r[i].hash, keys[i], 65);
				r[i].arch = xstrdup(c->tools[b].arch);
				r[i].status = LEAP_C_OK;
				r[i].ms = round_ms(ms / (double)m + lms);
				r[i].batch = (int)m;
				r[i].diagnostics = json_array();
				r[i].log = xstrdup("");
				publish(c, keys[i], out, &r[i], "");
				done[i] = r[i].status == LEAP_C_OK;
				if (!done[i])
					leap_cresult_free(&r[i]);
			}
			unlink(out);
			free(out);
		}
		break;
	}
	free(idx);
	free(pre);
	free(src);
	free(obj);
	free(nm);
	remove_tree(dir);
	free(dir);
}
