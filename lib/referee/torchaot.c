/* torchaot.c - the torch-compile baseline's module compiled ahead of time: once per content,
 * outside any sandbox, never timed. */
/*
 * torch.compile builds a module with a C++ compiler (inductor; triton on a GPU) at its first
 * call, and a runner's minimal root holds no compiler; the first call also takes tens of
 * seconds, which must belong to no timed block. So the compile is a step of its own, before the
 * baseline's artifact is built: `$LEAP_TORCH_PYTHON libexec/leap-torchbase.py compile ...`
 * exports the module at the bench case's sizes (torch.export, its parameters and buffers lifted
 * to inputs) and compiles it with AOTInductor into one shared object, which torchbase.c embeds
 * in the artifact and runner/torchbase.py loads in the sandbox (no compiler there).
 *
 * Trust: the step runs the task's module and torch, as the reference's process does
 * (torchref.c), in leap's own process tree; what it reads is the task's files and leap's
 * scripts, all in the key, and nothing a candidate writes (candidates run in sandboxes that
 * cannot reach the cache). Its scratch (inductor's cache, TMPDIR) is a directory of its own
 * under CACHE/torch-compile/, removed after: nothing of another compile feeds this one.
 *
 * Cache: the result is CACHE/torch-compile/KEY.so, published by rename (two processes that
 * compile one key at once both publish the same thing; the last rename wins whole), with
 * KEY.json beside it saying what the compile took. A module torch cannot export or compile is
 * kept as KEY.refused (its reason): the task is refused at once after, not compiled again.
 *
 * Load: the step is a compiler run on the cpu, so it holds the timing lock shared (tlock.h) as
 * leap-compile's compiles do: it waits while another leap-bench of this cache times a record,
 * and gives the lock up after LEAP_TORCH_AOT_LOCK_S so that a long compile holds no timing back.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/child.h"
#include "core/files.h"
#include "core/jsonl.h"
#include "core/sig.h"
#include "core/util.h"
#include "task/build.h"
#include "tlock.h"
#include "torchaot.h"
#include "torchref.h"
#include "core/banned.h"

/* How long the compile holds the timing lock before it runs on beside timings (leap-compile's
 * --lock-hold default). */
#define LEAP_TORCH_AOT_LOCK_S 5.0

extern char **environ;

/* This CPU's model name and flags lines of /proc/cpuinfo (new; "" where it has none): inductor
 * builds with -march=native, and a cache may be shared by machines. */
static char *cpu_identity(void)
{
	size_t n = 0;
	char *e = NULL, *info = leap_read_file("/proc/cpuinfo", &n, &e);
	free(e);
	struct leap_buf id = {0};
	const char *want[] = {"model name", "flags"};
	for (size_t i = 0; info && i < 2; i++) {
		char *p = strstr(info, want[i]);
		if (p) {
			size_t len = strcspn(p, "\n");
			leap_buf_add(&id, p, len);
			leap_buf_adds(&id, "\n");
		}
	}
	free(info);
	return id.s ? leap_buf_detach(&id) : xstrdup("");
}

/* The key of t's compile: every input of it, each by content. Returns 0, or -1 with *err. */
static int key_of(const struct leap_torch_aot *a, const struct leap_task *t, char hex[65], char **err)
{
	char *paths[4] = {xasprintf("%s/%s", t->dir, t->module), xasprintf("%s/task.json", t->dir),
			  xasprintf("%s/leap-torchbase.py", a->libexec), xasprintf("%s/leap-torchref.py", a->libexec)};
	char *text[4] = {0};
	size_t lens[12] = {0};
	int rc = 0;
	for (int i = 0; i < 4 && !rc; i++)
		if (!(text[i] = leap_read_file(paths[i], &lens[i], err)))
			rc = -1;
	if (!rc) { /* of task.json, what the step reads: its parameters (another field compiles nothing new) */
		json_error_t je;
		json_t *tj = json_loads(text[1], 0, &je);
		char *params = json_dumps(json_object_get(tj, "params"), JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(tj);
		if (!params) {
			*err = xasprintf("%s has no parameters", paths[1]);
			rc = -1;
		} else {
			free(text[1]);
			text[1] = params;
			lens[1] = strlen(params);
		}
	}
	if (!rc) {
		char *cpu = cpu_identity(), threads[24];
		snprintf(threads, sizeof threads, "%d", a->threads);
		const char *parts[12] = {text[0], text[1], text[2], text[3], "leap torch-compile 1", a->python,
					 a->torch, a->device, a->values, threads, cpu, a->gpu ? a->gpu : ""};
		for (int i = 4; i < 12; i++)
			lens[i] = strlen(parts[i]);
		leap_sha256_hex(hex, parts, lens, 12);
		free(cpu);
	}
	for (int i = 0; i < 4; i++) {
		free(paths[i]);
		free(text[i]);
	}
	return rc;
}

/* environ without TMPDIR and TORCHINDUCTOR_CACHE_DIR, then both set into `work`, and
 * CUDA_VISIBLE_DEVICES `visible` when given. New array; its last *nnew strings are new. */
static char **compile_env(const char *work, const char *visible, size_t *nnew)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + 4, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "TMPDIR=", 7) && strncmp(environ[i], "TORCHINDUCTOR_CACHE_DIR=", 24) &&
		    (!visible || strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21)))
			env[k++] = environ[i];
	size_t first = k;
	env[k++] = xasprintf("TMPDIR=%s", work);
	env[k++] = xasprintf("TORCHINDUCTOR_CACHE_DIR=%s/inductor", work);
	if (visible)
		env[k++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", visible);
	*nnew = k - first;
	return env;
}

/* Runs the compile step with its stdout into *out and its stderr into work/log, before the
 * deadline. Returns 0 when it exited 0, or -1 with a new message in *err. */
static int run_step(const struct leap_torch_aot *a, const struct leap_task *t, const char *work,
		    struct leap_buf *out, char **err)
{
	char *script = xasprintf("%s/leap-torchbase.py", a->libexec), *mp = xasprintf("%s/%s", t->dir, t->module);
	char *tj = xasprintf("%s/task.json", t->dir), *logp = xasprintf("%s/log", work);
	char threads[24];
	snprintf(threads, sizeof threads, "%d", a->threads);
	char *argv[] = {(char *)a->python, script, "compile", mp, tj, (char *)a->device, (char *)a->values,
			threads, (char *)work, NULL};
	size_t nnew = 0;
	char **env = compile_env(work, a->visible, &nnew);
	int p[2] = {-1, -1}, log = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc = -1;
	struct leap_child ch;
	leap_child_init(&ch);
	if (log < 0 || pipe2(p, O_CLOEXEC)) {
		*err = xasprintf("cannot set up the torch-compile step in %s: %s", work, strerror(errno));
		goto out;
	}
	ch.argv = argv;
	ch.env = env;
	ch.exec_what = "cannot start the torch-compile step ($LEAP_TORCH_PYTHON)";
	ch.fd[0] = -1;
	ch.fd[1] = p[1];
	ch.fd[2] = log;
	ch.nfd = 3;
	ch.fail_slot = 2;
	ch.fail_prefix = "leap torch-compile: ";
	leap_child_limit(&ch, RLIMIT_DATA, LEAP_TORCH_DATA_BYTES, LEAP_TORCH_DATA_BYTES);
	int tl = leap_timing_share(a->cache, 1); /* a compiler run on the cpu (tlock.h) */
	double t0 = leap_now();
	int started = !leap_child_start(&ch), timed_out = 0, stopped = 0;
	int e = errno;
	close(p[1]);
	p[1] = -1;
	while (started) {
		double now = leap_now();
		if (tl >= 0 && now - t0 > LEAP_TORCH_AOT_LOCK_S) {
			leap_timing_unshare(tl);
			tl = -1;
		}
		if (now - t0 > LEAP_TORCH_AOT_TIMEOUT_S) {
			timed_out = 1;
			break;
		}
		if (leap_signal_caught()) {
			stopped = 1;
			break;
		}
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int r = poll(&pf, 1, 500);
		if (r < 0 && errno != EINTR) { /* the step is ended: it could block on a pipe nobody reads */
			e = errno;
			stopped = 1;
			break;
		}
		if (r <= 0)
			continue;
		char buf[4096];
		ssize_t n = read(p[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		leap_buf_add(out, buf, (size_t)n);
	}
	leap_timing_unshare(tl);
	if (ch.pid > 0)
		leap_child_finish(&ch, timed_out || stopped ? 0 : -1);
	if (!started) {
		*err = xasprintf("cannot start the torch-compile step: %s", strerror(e));
	} else if (ch.setup_error[0]) {
		*err = xasprintf("cannot start the torch-compile step: %s", ch.setup_error);
	} else if (timed_out || stopped) {
		if (timed_out)
			*err = xasprintf("the torch-compile step took over %.0f s", LEAP_TORCH_AOT_TIMEOUT_S);
		else if (leap_signal_caught())
			*err = xstrdup("the torch-compile step was interrupted");
		else
			*err = xasprintf("waiting for the torch-compile step: %s", strerror(e));
	} else if (ch.exit_code != 0) {
		size_t n = 0;
		char *e2 = NULL, *text = leap_read_file(logp, &n, &e2);
		free(e2);
		const char *tail = text ? text + (n > 2000 ? n - 2000 : 0) : "";
		*err = ch.exit_code < 0 ? xasprintf("the torch-compile step was ended by signal %d:\n%s", ch.term_signal,
						    tail)
					: xasprintf("the torch-compile step failed (exit %d):\n%s", ch.exit_code, tail);
		free(text);
	} else {
		rc = 0;
	}
out:
	if (log >= 0)
		close(log);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	size_t n = 0;
	while (env[n])
		n++;
	for (size_t i = n - nnew; i < n; i++)
		free(env[i]);
	free(env);
	free(script);
	free(mp);
	free(tj);
	free(logp);
	return rc;
}

/* Writes `text` to `path` by a rename from `tmp`. Returns 0, or -1 with a new message in *err. */
static int publish_text(const char *tmp, const char *path, const char *text, char **err)
{
	if (leap_write_file(tmp, text, strlen(text), err))
		return -1;
	if (rename(tmp, path)) {
		*err = xasprintf("cannot store %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Compiles into a new directory under `dir` and publishes KEY.so (and KEY.json) or
 * KEY.refused. Returns 0, or -1 with *err (and *refused when torch refused the module). */
static int compile_into(const struct leap_torch_aot *a, const struct leap_task *t, const char *dir,
			const char *hex, int *refused, char **err)
{
	char *work = xasprintf("%s/tmp.XXXXXX", dir);
	if (!mkdtemp(work)) {
		*err = xasprintf("cannot create a directory in %s: %s", dir, strerror(errno));
		free(work);
		return -1;
	}
	struct leap_buf out = {0};
	double t0 = leap_now();
	int rc = run_step(a, t, work, &out, err);
	double wall = leap_now() - t0;
	json_t *j = NULL;
	if (!rc) {
		/* the answer is its last line: torch may print before it */
		char *s = out.s ? out.s : "";
		size_t len = strlen(s);
		while (len && s[len - 1] == '\n')
			s[--len] = 0;
		char *last = strrchr(s, '\n');
		json_error_t je;
		j = json_loads(last ? last + 1 : s, 0, &je);
		if (!json_is_object(j)) {
			*err = xstrdup("the torch-compile step answered no result");
			rc = -1;
		}
	}
	const char *why = rc ? NULL : leap_get_str(j, "refused", NULL);
	char *tmp = xasprintf("%s/answer", work);
	if (why) {
		*refused = 1;
		*err = xstrdup(why);
		char *path = xasprintf("%s/%s.refused", dir, hex), *e2 = NULL;
		if (publish_text(tmp, path, why, &e2)) /* not kept: the next record tries again */
			free(e2);
		free(path);
		rc = -1;
	} else if (!rc) {
		char *so = xasprintf("%s/model.so", work), *dst = xasprintf("%s/%s.so", dir, hex);
		char *meta = xasprintf("%s/%s.json", dir, hex);
		json_object_set_new(j, "wall_s", json_real(wall));
		json_object_set_new(j, "task", json_string(t->id));
		json_object_set_new(j, "torch", json_string(a->torch));
		char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
		if (!text || publish_text(tmp, meta, text, err)) {
			if (!text)
				*err = xstrdup("out of memory");
			rc = -1;
		} else if (rename(so, dst)) {
			*err = xasprintf("the torch-compile step left no %s: %s", so, strerror(errno));
			rc = -1;
		}
		free(text);
		free(so);
		free(dst);
		free(meta);
	}
	free(tmp);
	json_decref(j);
	leap_buf_free(&out);
	leap_remove_tree(work);
	free(work);
	return rc;
}

char *leap_torch_aot(const struct leap_torch_aot *a, const struct leap_task *t, int *refused, char **err)
{
	*refused = 0;
	*err = NULL;
	char hex[65];
	if (key_of(a, t, hex, err))
		return NULL;
	char *dir = xasprintf("%s/torch-compile", a->cache), *so = xasprintf("%s/%s.so", dir, hex);
	char *no = xasprintf("%s/%s.refused", dir, hex);
	struct stat st;
	int rc = 0;
	if (!stat(so, &st)) {
		/* compiled before: not again */
	} else if (!access(no, F_OK)) { /* refused before: at once, with the reason kept */
		size_t n = 0;
		char *why = leap_read_file(no, &n, err); /* else *err says why not */
		if (why) {
			*err = why;
			*refused = 1;
		}
		rc = -1;
	} else if (leap_mkdirs(dir)) {
		*err = xasprintf("cannot create the cache directory %s: %s", dir, strerror(errno));
		rc = -1;
	} else {
		rc = compile_into(a, t, dir, hex, refused, err);
	}
	if (*refused && !access(no, F_OK)) { /* say where, so that a fixed machine can try again */
		char *e = xasprintf("%s (kept in %s: remove it to compile again)", *err, no);
		free(*err);
		*err = e;
	}
	free(dir);
	free(no);
	if (rc) {
		free(so);
		return NULL;
	}
	return so;
}
