/* unseen.c - what a candidate must not see: one list for the compilers and the runners.
 *
 * The compile namespace (lib/compile/compile.c) and the run sandbox (lib/sandbox/sandbox.c) each cover the
 * directories of this list with an empty read-only tmpfs. They once kept lists of their own,
 * and the lists differed (the runners hid the suite in use and the cache, the compilers eight
 * places), so a place added to one was missing from the other. Both now take this list; what
 * differs between them is said here, with why. */
/*
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The minimal root (with namespaces). The child pivots (`pivot_root`) into an empty tmpfs that
 * holds only what `leap_unseen_root()` (`lib/task/unseen.c`, the same policy module as the hidden
 * list) names: read-only binds of the directories the dynamic loader searches (the C library's
 * directory, the loader's, those of `/etc/ld.so.conf.d` and `LD_LIBRARY_PATH`: libc, libm,
 * libgomp, libstdc++ and the CUDA driver's libraries live there, and the driver opens more of
 * its own by name, so whole directories and not single files), the top-level links `/lib`,
 * `/lib64`... that lead there, `/etc/ld.so.cache`, the device nodes `null`, `zero`, `full`,
 * `random`, `urandom` and `nvidia*` (`/dev/nvidia-uvm` made first with `nvidia-modprobe -u
 * -c=0` where a driver is there without it: it may appear only at a first `cuInit`), the
 * directories the driver's libraries there link into (`libcuda.so.1` -> elsewhere), on a
 * machine with NVIDIA devices `/sys` (the driver reads the PCI topology: without its submounts
 * where the kernel allows; in a user namespace, where a plain bind of it is refused because the
 * mounts under it are locked to it, with them, every mount made read-only, nosuid, nodev and
 * noexec by `mount_setattr` -- tests/cuda.bats "minimal root of an NVIDIA machine: /sys shows,
 * read-only with the mounts under it, as root and in a user namespace"), and its own empty
 * `/tmp`, `/var/tmp`, `/dev/shm`, temp dir and `/proc`. The machine's root is detached. So your
 * checkout, your records, any other copy of the suite, your home and every unix socket
 * reachable by a path (the X server's, a database's, the container runtime's) are gone --
 * security.bats "verify: the minimal root shows neither the checkout nor a unix socket outside"
 * (a world-readable README.md and a listening socket outside /tmp that the same candidates
 * reach with `--no-namespaces`). The runner is executed through a descriptor opened before the
 * pivot. Whether the root can be made is tried once per process (`probe_root()`: the user
 * mapping, a tmpfs, a read-only bind, the bind of `/sys` where the root has it, a new /proc,
 * `pivot_root`); where a kernel or container refuses one of them, leap warns once ("the sandbox
 * cannot make its minimal root here") and runs candidates in the machine's root with the
 * policy's directories hidden, as before, rather than failing every candidate (untested: no way
 * to refuse only those calls here). A failure after a probe that worked fails the sandbox's
 * set-up (an error record), never runs the candidate with more in view.
 *
 * Does not stop:
 * - Reading the library directories: any file there (they hold system libraries, and whatever
 *   else an administrator put in `/usr/local/lib`) is readable. With `--no-namespaces` there is
 *   no minimal root and every file the sandbox user may read is readable.
 * - Unix-domain sockets in the library directories (none on a usual system); abstract sockets
 *   are the network namespace's.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/cache.h"
#include "core/cli.h"
#include "core/files.h"
#include "backend/gpu.h"
#include "unseen.h"
#include "core/util.h"
#include "core/banned.h"

/* Appends `d` (taken over; may be NULL) to the vector v[0..*n), made canonical: the sandbox
 * mounts over it after changing its directory, and a directory reached by two names is one.
 * A path that does not exist (or is named twice) is dropped: there is nothing to hide. */
static void add_dir(char ***v, size_t *n, char *d)
{
	char *real = d ? realpath(d, NULL) : NULL;
	free(d);
	if (!real)
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], real)) {
			free(real);
			return;
		}
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = real;
}

/* Adds the cache `dir` (NULL: none): the whole of it for a runner; its reference builds for a
 * compiler, which writes the candidates' outputs into the rest. */
static void add_cache(char ***v, size_t *n, const char *dir, enum leap_unseen_for who)
{
	if (!dir)
		return;
	if (who == LEAP_UNSEEN_RUNNER) {
		if (leap_mkdirs(dir))
			leap_warn_errno("cannot create %s", dir);
		add_dir(v, n, xstrdup(dir));
		return;
	}
	char *arts = xasprintf("%s/artifacts", dir);
	if (leap_mkdirs(arts))
		leap_warn_errno("cannot create %s", arts);
	add_dir(v, n, arts);
}

char **leap_unseen(const char *cache_dir, const char *tasks_dir, enum leap_unseen_for who, size_t *n)
{
	char **v = NULL;
	*n = 0;
	add_cache(&v, n, cache_dir, who);
	char *def_cache = leap_cache_dir();
	if (def_cache && (!cache_dir || strcmp(def_cache, cache_dir)))
		add_cache(&v, n, def_cache, who);
	free(def_cache);
	if (tasks_dir)
		add_dir(&v, n, xstrdup(tasks_dir));
	add_dir(&v, n, leap_tasks_dir(NULL));
	const char *env_tasks = getenv("LEAP_TASKS");
	if (env_tasks && *env_tasks)
		add_dir(&v, n, xstrdup(env_tasks));
	char *exe = leap_exe_dir();
	if (exe) {
		add_dir(&v, n, xasprintf("%s/../share/leap/tasks", exe));
		add_dir(&v, n, xasprintf("%s/../tasks", exe));
	}
	free(exe);
	return v;
}

void leap_unseen_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* 1 when the canonical path `p` is `d` or lies under it. */
static int is_under(const char *p, const char *d)
{
	size_t n = strlen(d);
	return !strncmp(p, d, n) && (p[n] == '/' || p[n] == 0 || (n == 1 && d[0] == '/'));
}

/* Appends an entry (path and link taken over). */
static void root_add(struct leap_root *r, int kind, char *path, char *link)
{
	r->e = xrealloc(r->e, (r->n + 1) * sizeof *r->e);
	r->e[r->n++] = (struct leap_root_entry){path, link, kind};
}

/* Adds the directory `d` (taken over; may be NULL), unless it lies under an entry already
 * there or meets a directory of `unseen`; entries under it go. A symbolic link at the top
 * (/lib -> usr/lib, merged /usr) is made again as a link, its target reached through other
 * entries; one deeper (/usr/local/cuda/lib64) is bound at its own name from its target. */
static void root_dir(struct leap_root *r, char *d, char *const *unseen, size_t nunseen)
{
	struct stat st;
	if (!d || d[0] != '/' || lstat(d, &st)) {
		free(d);
		return;
	}
	if (S_ISLNK(st.st_mode) && !strchr(d + 1, '/')) {
		char buf[4096];
		ssize_t n = readlink(d, buf, sizeof buf - 1);
		for (size_t i = 0; n > 0 && i < r->n; i++)
			if (!strcmp(r->e[i].path, d))
				n = 0;
		if (n > 0) {
			buf[n] = 0;
			root_add(r, LEAP_ROOT_LINK, d, xstrdup(buf));
		} else {
			free(d);
		}
		return;
	}
	char *real = realpath(d, NULL);
	char *dst = S_ISLNK(st.st_mode) ? d : real;
	int skip = !real || stat(real, &st) || !S_ISDIR(st.st_mode) || !strcmp(real, "/");
	for (size_t i = 0; !skip && i < nunseen; i++)
		skip = is_under(real, unseen[i]) || is_under(unseen[i], real);
	for (size_t i = 0; !skip && i < r->n; i++)
		skip = r->e[i].kind == LEAP_ROOT_DIR && is_under(dst, r->e[i].path);
	if (skip) {
		free(real);
		free(d);
		return;
	}
	for (size_t i = 0; i < r->n;)
		if (r->e[i].kind == LEAP_ROOT_DIR && is_under(r->e[i].path, dst)) {
			free(r->e[i].path);
			free(r->e[i].link);
			r->e[i] = r->e[--r->n];
		} else {
			i++;
		}
	if (dst == d) {
		root_add(r, LEAP_ROOT_DIR, d, real); /* bound at its name, from its target */
	} else {
		free(d);
		root_add(r, LEAP_ROOT_DIR, real, NULL);
	}
}

/* Adds the directories /etc/ld.so.conf.d names (lines that start with '/'). */
static void root_ldconf(struct leap_root *r, char *const *unseen, size_t nunseen)
{
	DIR *d = opendir("/etc/ld.so.conf.d");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".conf"))
			continue;
		char *path = xasprintf("/etc/ld.so.conf.d/%s", e->d_name);
		FILE *f = fopen(path, "r");
		free(path);
		char line[4096];
		while (f && fgets(line, sizeof line, f)) {
			line[strcspn(line, " \t\r\n")] = 0;
			if (line[0] == '/')
				root_dir(r, xstrdup(line), unseen, nunseen);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/* Adds the directories the NVIDIA driver's libraries in the directories shown so far link into
 * (libcuda.so.1 -> /opt/driver/lib/libcuda.so.580...): the loader finds the link, and without
 * its target's directory a runner would find no driver. */
static void root_driver_links(struct leap_root *r, char *const *unseen, size_t nunseen)
{
	char **dirs = NULL;
	size_t nd = 0, shown = r->n;
	for (size_t i = 0; i < shown; i++) {
		if (r->e[i].kind != LEAP_ROOT_DIR)
			continue;
		const char *src = r->e[i].link ? r->e[i].link : r->e[i].path;
		DIR *d = opendir(src);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if ((strncmp(e->d_name, "libcuda.so", 10) && strncmp(e->d_name, "libnvidia-", 10)) ||
			    (e->d_type != DT_LNK && e->d_type != DT_UNKNOWN))
				continue;
			char *path = xasprintf("%s/%s", src, e->d_name), *real = realpath(path, NULL);
			free(path);
			if (!real)
				continue;
			*strrchr(real, '/') = 0;
			dirs = xrealloc(dirs, (nd + 1) * sizeof *dirs);
			dirs[nd++] = real;
		}
		if (d)
			closedir(d);
	}
	for (size_t i = 0; i < nd; i++)
		root_dir(r, dirs[i], unseen, nunseen); /* once each: a directory shown is not added again */
	free(dirs);
}

void leap_unseen_root(struct leap_root *r, char *const *unseen, size_t nunseen)
{
	memset(r, 0, sizeof *r);
	static const char *const links[] = {"/lib", "/lib64", "/lib32", "/libx32", "/usr/lib64"};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		root_dir(r, xstrdup(links[i]), unseen, nunseen);
	Dl_info di; /* the C library's directory: the multiarch one on Debian */
	if (dladdr((void *)(uintptr_t)printf, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
		char *dir = xstrdup(di.dli_fname);
		*strrchr(dir, '/') = 0;
		root_dir(r, dir, unseen, nunseen);
	}
	root_ldconf(r, unseen, nunseen);
	const char *ld = getenv("LD_LIBRARY_PATH");
	for (const char *s = ld ? ld : ""; *s;) {
		size_t n = strcspn(s, ":");
		root_dir(r, xstrndup(s, n), unseen, nunseen);
		s += n + (s[n] == ':');
	}
	root_driver_links(r, unseen, nunseen);
	if (!access("/etc/ld.so.cache", R_OK))
		root_add(r, LEAP_ROOT_FILE, xstrdup("/etc/ld.so.cache"), NULL);
	static const char *const devs[] = {"null", "zero", "full", "random", "urandom"};
	for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
		root_add(r, LEAP_ROOT_DEV, xasprintf("/dev/%s", devs[i]), NULL);
	int nvidia = 0;
	leap_gpu_uvm_node(); /* before the list is taken: it may appear only at a first cuInit */
	DIR *d = opendir("/dev");
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "nvidia", 6) && (e->d_type == DT_CHR || e->d_type == DT_DIR)) {
			/* nvidiactl, nvidia-uvm, nvidia0...; the directory nvidia-caps (MIG) */
			root_add(r, LEAP_ROOT_DEV, xasprintf("/dev/%s", e->d_name), NULL);
			nvidia = 1;
		}
	if (d)
		closedir(d);
	if (nvidia)
		root_add(r, LEAP_ROOT_DIR_FLAT, xstrdup("/sys"), NULL);
}

void leap_root_free(struct leap_root *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].path);
		free(r->e[i].link);
	}
	free(r->e);
	memset(r, 0, sizeof *r);
}

void leap_unseen_set_free(struct leap_unseen_set *u)
{
	leap_unseen_free(u->paths, u->n);
	leap_root_free(&u->root);
	u->paths = NULL;
	u->n = 0;
}
