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
#include "files.h"
#include "shim.h"
#include "toolchain.h"
#include "util.h"
#include "banned.h"

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

char *leap_build_artifact(const struct leap_task *t, enum leap_backend b, const char *source, size_t len,
			  const char *cache, char **err)
{
	int cuda = b == LEAP_BACKEND_CUDA;
	/* the compiler as named enters the key: a cache built elsewhere with the same nvcc
	 * named the same way is reused without running it */
	char *nvcc = cuda ? leap_nvcc_name(NULL) : NULL;
	const char *cc = nvcc;
	if (!cuda) {
		cc = getenv("CC");
		if (!cc || !*cc)
			cc = "cc";
	}
	const char *flags = cuda ? "-O3 -shared -Xcompiler -fPIC sm_80 sm_90 compute_90" : "-O2 -shared -fPIC";
	char *pre = leap_shim_prelude(t, b), *shim = leap_shim_source(t, b);
	/* a vendor baseline links its libraries (task.json baseline_libraries: -lcublas, -lcudnn) */
	char libs[LEAP_LIB_COUNT][24];
	size_t nlibs = 0;
	struct leap_buf libs_key = {0};
	for (unsigned i = 0; cuda && i < LEAP_LIB_COUNT; i++)
		if (t->baseline_libraries & (1u << i)) {
			snprintf(libs[nlibs], sizeof libs[nlibs], "-l%s", leap_library_name(1u << i));
			leap_buf_addf(&libs_key, " %s", libs[nlibs++]);
		}
	leap_buf_adds(&libs_key, "");
	const char *parts[] = {cc, flags, pre, shim, source, libs_key.s};
	size_t lens[] = {strlen(cc), strlen(flags), strlen(pre), strlen(shim), len, libs_key.len};
	char hex[65];
	leap_sha256_hex(hex, parts, lens, nlibs ? 6 : 5);
	leap_buf_free(&libs_key);
	char *dir = xasprintf("%s/artifacts", cache);
	char *so = xasprintf("%s/%s.so", dir, hex);
	char *result = NULL, *work = NULL;
	struct stat st;
	if (stat(so, &st) == 0) {
		result = so;
		so = NULL;
		goto out;
	}
	if (leap_mkdirs(dir)) {
		*err = xasprintf("cannot create the cache directory %s: %s", dir, strerror(errno));
		goto out;
	}
	work = xasprintf("%s/build.XXXXXX", dir);
	if (!mkdtemp(work)) {
		*err = xasprintf("cannot create a build directory in %s: %s", dir, strerror(errno));
		free(work);
		work = NULL;
		goto out;
	}
	const char *ext = cuda ? "cu" : "c";
	char *pre_p = xasprintf("%s/prelude.h", work), *shim_p = xasprintf("%s/shim.%s", work, ext),
	     *src_p = xasprintf("%s/source.%s", work, ext), *out_p = xasprintf("%s/out.so", work),
	     *log_p = xasprintf("%s/log", work);
	if (leap_write_file(pre_p, pre, strlen(pre), NULL) || leap_write_file(shim_p, shim, strlen(shim), NULL) ||
	    leap_write_file(src_p, source, len, NULL)) {
		*err = xasprintf("cannot write the build files: %s", strerror(errno));
	} else {
		char *cpu_argv[] = {(char *)cc, "-O2", "-shared", "-fPIC", "-include", pre_p, "-o", out_p, src_p, shim_p, "-lm", NULL};
		char *cuda_argv[24 + LEAP_LIB_COUNT] = {(char *)cc, "-O3", "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_80,code=sm_80",
				     "-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_90,code=compute_90",
				     "-include", pre_p, "-o", out_p, src_p, shim_p, NULL};
		size_t at = 0;
		while (cuda_argv[at])
			at++;
		for (size_t i = 0; i < nlibs; i++) /* after the sources: the libraries, then the NULL */
			cuda_argv[at + i] = libs[i];
		int ws = run_compiler(cuda ? cuda_argv : cpu_argv, log_p);
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
		} else if (rename(out_p, so)) {
			*err = xasprintf("cannot store the artifact in %s: %s", dir, strerror(errno));
		} else {
			result = so;
			so = NULL;
		}
	}
	unlink(pre_p);
	unlink(shim_p);
	unlink(src_p);
	unlink(out_p);
	unlink(log_p);
	rmdir(work);
	free(pre_p);
	free(shim_p);
	free(src_p);
	free(out_p);
	free(log_p);
out:
	free(work);
	free(dir);
	free(so);
	free(pre);
	free(shim);
	free(nvcc);
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
