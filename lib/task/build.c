/* build.c - build a task's trusted sources (reference.c, baseline.cu) into cached artifacts.
 * Candidates, by hand too, are built by compile.c (see hand.h). */
/*
 * The reference and the baseline are leap's own code from the suite: they need none of what
 * guards a candidate's compile (the include guard, hidden directories, limits, diagnostics for
 * a model), so they are built here by one plain compiler run rather than by compile.c. The same
 * prelude and shim as a candidate's (shim.c) give them the same ABI, so that the referee calls
 * them exactly as it calls a candidate. An artifact is cached under CACHE/artifacts/ by the
 * SHA-256 of what made it and published by rename, so that processes share one build and none
 * loads half an object.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "build.h"
#include "core/files.h"
#include "compile/shim.h"
#include "compile/toolchain.h"
#include "core/util.h"
#include "core/banned.h"

extern char **environ;

void leap_sha256_hex(char out[65], const char *const *parts, const size_t *lens, int n)
{
	unsigned char md[32];
	unsigned mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		leap_die("cannot initialise SHA-256");
	for (int i = 0; i < n; i++)
		if (!EVP_DigestUpdate(ctx, parts[i], lens[i]) || !EVP_DigestUpdate(ctx, "", 1))
			leap_die("SHA-256 failed");
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen))
		leap_die("SHA-256 failed");
	EVP_MD_CTX_free(ctx);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Runs argv with stdout+stderr into `logpath`; returns the wait status or -1. */
static int run_compiler(char *const *argv, const char *logpath)
{
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r) {
		errno = r;
		return -1;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* The files of one build: in its build directory, or bare names for the cache key. */
struct build_files {
	char *pre, *shim, *src, *out;
};

/* The files' paths under `dir` ("" for bare names, else ending in '/'). */
static void files_in(struct build_files *f, const char *dir, const struct leap_backend_ops *be)
{
	const char *ext = be->ext;
	f->pre = xasprintf("%sprelude.h", dir);
	f->shim = xasprintf("%sshim.%s", dir, ext);
	f->src = xasprintf("%ssource.%s", dir, ext);
	f->out = xasprintf("%sout.so", dir);
}

static void files_free(struct build_files *f)
{
	free(f->pre);
	free(f->shim);
	free(f->src);
	free(f->out);
}

/* The command line that builds the artifact of t from files f with compiler cc: the backend's
 * flags (cpu: -O2; cuda: -O3 with code for sm_80 and sm_90 and PTX for later GPUs), the
 * prelude force-included, the backend's libraries (cpu: -lm), then a vendor baseline's
 * (task.json baseline_libraries: -lcublas, -lcudnn) where the backend links them. New
 * (leap_strv_free). */
static char **command(const char *cc, const struct leap_backend_ops *be, const struct build_files *f,
		      const struct leap_task *t)
{
	struct leap_argv a = {0};
	leap_argv_push(&a, cc);
	for (const char *const *x = be->trusted_flags; *x; x++)
		leap_argv_push(&a, *x);
	const char *files[] = {"-include", f->pre, "-o", f->out, f->src, f->shim};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		leap_argv_push(&a, files[i]);
	for (const char *const *x = be->trusted_libs; *x; x++)
		leap_argv_push(&a, *x);
	for (unsigned i = 0; (be->flags & LEAP_BK_LIBRARIES) && i < LEAP_LIB_COUNT; i++)
		if (t->baseline_libraries & (1u << i)) {
			char *l = xasprintf("-l%s", leap_library_name(1u << i));
			leap_argv_push(&a, l);
			free(l);
		}
	return a.v;
}

/* The cache key of an artifact: the command line that builds it (with the files' bare names:
 * the build directory's name is random and shapes nothing), then the prelude, shim and source.
 * The key is taken from the command itself, not from a description of it kept beside, so a
 * flag changed in command() cannot be missed by the key. */
static void artifact_key(char hex[65], const char *cc, const struct leap_backend_ops *be, const struct leap_task *t,
			 const char *pre, const char *shim, const char *source, size_t len)
{
	struct build_files names;
	files_in(&names, "", be);
	char **argv = command(cc, be, &names, t);
	size_t n = 0;
	while (argv[n])
		n++;
	const char **parts = xcalloc(n + 3, sizeof *parts);
	size_t *lens = xcalloc(n + 3, sizeof *lens);
	for (size_t i = 0; i < n; i++)
		parts[i] = argv[i];
	parts[n] = pre;
	parts[n + 1] = shim;
	for (size_t i = 0; i < n + 2; i++)
		lens[i] = strlen(parts[i]);
	parts[n + 2] = source;
	lens[n + 2] = len;
	leap_sha256_hex(hex, parts, lens, (int)(n + 3));
	free(parts);
	free(lens);
	leap_strv_free(argv);
	files_free(&names);
}

/* Builds in a new directory under `dir`: writes the files, runs the compiler and moves the
 * artifact to `so`. Returns 0, or -1 with a new message in *err. */
static int build_in(const char *dir, const char *so, const char *cc, const struct leap_backend_ops *be,
		    const struct leap_task *t, const char *pre, const char *shim, const char *source, size_t len, char **err)
{
	char *work = xasprintf("%s/build.XXXXXX", dir);
	if (!mkdtemp(work)) {
		*err = xasprintf("cannot create a build directory in %s: %s", dir, strerror(errno));
		free(work);
		return -1;
	}
	char *wdir = xasprintf("%s/", work), *log_p = xasprintf("%s/log", work);
	struct build_files f;
	files_in(&f, wdir, be);
	int rc = -1;
	if (leap_write_file(f.pre, pre, strlen(pre), NULL) || leap_write_file(f.shim, shim, strlen(shim), NULL) ||
	    leap_write_file(f.src, source, len, NULL)) {
		*err = xasprintf("cannot write the build files: %s", strerror(errno));
	} else {
		char **argv = command(cc, be, &f, t);
		int ws = run_compiler(argv, log_p);
		leap_strv_free(argv);
		if (ws < 0) {
			*err = xasprintf("cannot run %s: %s", cc, strerror(errno));
		} else if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			size_t n = 0;
			char *e2 = NULL, *log = leap_read_file(log_p, &n, &e2);
			free(e2);
			struct leap_buf m = {0};
			leap_buf_addf(&m, "%s failed:\n", cc);
			if (log)
				leap_buf_add(&m, log, n > 4096 ? 4096 : n);
			free(log);
			*err = leap_buf_detach(&m);
		} else if (rename(f.out, so)) {
			*err = xasprintf("cannot store the artifact in %s: %s", dir, strerror(errno));
		} else {
			rc = 0;
		}
	}
	unlink(f.pre);
	unlink(f.shim);
	unlink(f.src);
	unlink(f.out);
	unlink(log_p);
	rmdir(work);
	files_free(&f);
	free(log_p);
	free(wdir);
	free(work);
	return rc;
}

/* The cached build of `source` with the given prelude and shim (both freed here). */
static char *build_cached(const struct leap_task *t, enum leap_backend b, char *pre, char *shim, const char *source,
			  size_t len, const char *cache, char **err)
{
	const struct leap_backend_ops *be = leap_backend_of(b);
	/* the compiler as named enters the key: a cache built elsewhere with the same compiler
	 * named the same way is reused without running it */
	char *cc = be->trusted_cc();
	char hex[65];
	artifact_key(hex, cc, be, t, pre, shim, source, len);
	char *dir = xasprintf("%s/artifacts", cache);
	char *so = xasprintf("%s/%s.so", dir, hex);
	char *result = NULL;
	struct stat st;
	if (stat(so, &st) == 0) {
		result = so;
		so = NULL;
	} else if (leap_mkdirs(dir)) {
		*err = xasprintf("cannot create the cache directory %s: %s", dir, strerror(errno));
	} else if (build_in(dir, so, cc, be, t, pre, shim, source, len, err) == 0) {
		result = so;
		so = NULL;
	}
	free(dir);
	free(so);
	free(pre);
	free(shim);
	free(cc);
	if (result && result[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		if (cwd) {
			char *abs = xasprintf("%s/%s", cwd, result);
			free(result);
			result = abs;
			free(cwd);
		}
	}
	return result;
}

char *leap_build_artifact(const struct leap_task *t, enum leap_backend b, const char *source, size_t len,
			  const char *cache, char **err)
{
	return build_cached(t, b, leap_shim_prelude(t, b), leap_shim_source(t, b), source, len, cache, err);
}

char *leap_build_plain(const struct leap_task *t, const char *source, size_t len, const char *cache, char **err)
{
	/* an empty prelude, and a shim that declares nothing the source could meet */
	return build_cached(t, leap_backend_reference(), xstrdup(""), xstrdup("typedef int leap_no_shim;\n"), source, len,
			    cache, err);
}
