/* torchbase.c - the torch baseline of a module task in leap-bench: the artifact, the kind, and
 * the sandbox it runs in. */
/*
 * A module task (leap-task(5), MODULE TASKS) has no C baseline: its baseline is torch, the
 * module run as KernelBench times it (torch-eager: the module on the backend's device in the
 * task's precision). The referee must time it as it times any baseline -- in a runner of its
 * own, on the same sealed input sets, by its own clock, in paired blocks -- so the baseline is
 * an artifact the unchanged runner loads: runner/torchbase.c, a C shared object that embeds
 * CPython (the libpython of $LEAP_TORCH_PYTHON, opened at run time) and runs
 * runner/torchbase.py's per-call function. This file writes the data that object needs in front
 * of its source (the Python's paths, the kind, the device, the helper sources, the module file,
 * task.json), builds it with the trusted build (leap_build_plain, cached by content), and says
 * what the baseline's sandbox is exempt from.
 *
 * The exemptions (the one place they are decided; SECURITY.md says the same): the baseline is
 * trusted code (torch, the task's module), not a candidate's, and it needs
 * - the Python's directories (its prefix, the virtual environment's, its sys.path, libpython's)
 *   bound read-only into the minimal root, which otherwise holds only the loader's directories;
 * - no address-space limit: importing torch maps more than 4 GiB (the CUDA build's libraries),
 *   over --memory's RLIMIT_AS. The memory group, where there is one, still bounds the whole tree
 *   at --memory.
 * - on cpu, no heap check after its blocks (the runner's "trusted" role, runner/cpu.c): it walks
 *   every live allocation, hundreds of thousands with torch loaded, and can only fail code.
 * Everything else is the candidates': the namespaces, the system-call filter, the freezer, the
 * process and file limits, the cores. A candidate never runs with these exemptions: only the
 * baseline's session is opened with leap_torch_session's options (refsession.c).
 *
 * torch-compile (torch.compile's code for the module) needs a compiler, which no runner's root
 * holds, so it is compiled ahead of time, untimed and outside any sandbox, by torchaot.c (cached
 * by content): the shared object AOTInductor makes is embedded in the artifact (.incbin) and
 * loaded from a memfd by runner/torchbase.py. Its exemptions are torch-eager's: the object is
 * in the artifact, so nothing more is bound into the root. A module torch cannot compile is no
 * error of the candidate's: its records are `skipped`, saying why (leap_torch_baseline's *skip).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/files.h"
#include "core/jsonl.h"
#include "core/util.h"
#include "task/build.h"
#include "torchaot.h"
#include "torchbase.h"
#include "torchref.h"
#include "verify.h"
#include "core/banned.h"

extern char **environ;

/* What is learnt of $LEAP_TORCH_PYTHON once per process. */
struct ref_torch {
	char *python;     /* $LEAP_TORCH_PYTHON as it was */
	char *libpython;  /* its shared library (absolute) */
	char *home;       /* sys.base_prefix */
	char *path;       /* sys.path, one entry a line */
	char *torch;      /* torch's version, as its distribution says ("" when it does not) */
	char **dirs;      /* what its sandbox binds read-only (real paths, none under another) */
	size_t ndirs;
	struct leap_root root; /* the candidates' minimal root with those directories */
	struct leap_sandbox_opts sb;
	int have_sb;
};

/* Asks the Python where it lives: its shared library, prefixes and sys.path, and torch's version
 * (from its distribution's metadata: no torch import). */
static const char probe_py[] =
	"import json, os, sys, sysconfig\n"
	"try:\n"
	"    import importlib.metadata as md; tv = md.version('torch')\n"
	"except Exception:\n"
	"    tv = ''\n"
	"lib = os.path.join(sysconfig.get_config_var('LIBDIR') or '', sysconfig.get_config_var('INSTSONAME') or '')\n"
	"print(json.dumps({'lib': lib, 'shared': bool(sysconfig.get_config_var('Py_ENABLE_SHARED')),\n"
	"                  'home': sys.base_prefix, 'prefix': sys.prefix, 'path': [p for p in sys.path if p],\n"
	"                  'torch': tv}))\n";

/* Runs `python -c probe_py`; returns its stdout (new), or NULL with *err. */
static char *run_probe(const char *python, char **err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		*err = xasprintf("pipe: %s", strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int r = posix_spawn_file_actions_init(&fa);
	if (!r && !(r = posix_spawn_file_actions_adddup2(&fa, p[1], 1))) {
		char *argv[] = {(char *)python, "-c", (char *)probe_py, NULL};
		r = posix_spawn(&pid, python, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(p[1]);
	if (r) {
		close(p[0]);
		*err = xasprintf("cannot run %s ($LEAP_TORCH_PYTHON): %s", python, strerror(r));
		return NULL;
	}
	struct leap_buf out = {0};
	char buf[4096];
	ssize_t n;
	while ((n = read(p[0], buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		leap_buf_add(&out, buf, (size_t)n);
	}
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) || !out.s) {
		leap_buf_free(&out);
		*err = xasprintf("%s ($LEAP_TORCH_PYTHON) could not say where it lives", python);
		return NULL;
	}
	return leap_buf_detach(&out);
}

/* Adds the real path of `dir` to tp->dirs unless it is there, under one there, or no directory;
 * drops the entries under it. */
static void add_dir(struct ref_torch *tp, const char *dir)
{
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(dir, real) || stat(real, &st) || !S_ISDIR(st.st_mode))
		return;
	size_t len = strlen(real);
	for (size_t i = 0; i < tp->ndirs; i++) {
		size_t l = strlen(tp->dirs[i]);
		if (!strncmp(real, tp->dirs[i], l) && (real[l] == '/' || real[l] == 0))
			return;
	}
	size_t k = 0;
	for (size_t i = 0; i < tp->ndirs; i++) {
		if (!strncmp(tp->dirs[i], real, len) && tp->dirs[i][len] == '/')
			free(tp->dirs[i]);
		else
			tp->dirs[k++] = tp->dirs[i];
	}
	tp->dirs = xrealloc(tp->dirs, (k + 1) * sizeof *tp->dirs);
	tp->dirs[k] = xstrdup(real);
	tp->ndirs = k + 1;
}

/* Learns where the Python lives. Returns 0, or -1 with *err. */
static int probe(struct ref_torch *tp, const char *python, char **err)
{
	char *out = run_probe(python, err);
	if (!out)
		return -1;
	json_error_t je;
	json_t *j = json_loads(out, 0, &je), *path = json_object_get(j, "path");
	free(out);
	const char *lib = leap_get_str(j, "lib", NULL), *home = leap_get_str(j, "home", NULL);
	if (!lib || !home || !json_is_array(path) || !json_is_true(json_object_get(j, "shared")) || access(lib, R_OK)) {
		*err = xasprintf("%s ($LEAP_TORCH_PYTHON) has no shared libpython (built without --enable-shared?): "
				 "the torch baseline embeds it", python);
		json_decref(j);
		return -1;
	}
	tp->python = xstrdup(python);
	tp->libpython = xstrdup(lib);
	tp->home = xstrdup(home);
	tp->torch = xstrdup(leap_get_str(j, "torch", ""));
	struct leap_buf pb = {0};
	size_t i;
	json_t *e;
	json_array_foreach(path, i, e)
		if (json_is_string(e)) {
			leap_buf_addf(&pb, "%s\n", json_string_value(e));
			add_dir(tp, json_string_value(e));
		}
	tp->path = pb.s ? leap_buf_detach(&pb) : xstrdup("");
	char *libdir = xstrdup(lib), *slash = strrchr(libdir, '/');
	if (slash)
		*slash = 0;
	add_dir(tp, home);
	add_dir(tp, leap_get_str(j, "prefix", home));
	add_dir(tp, libdir);
	free(libdir);
	json_decref(j);
	return 0;
}

/* `name` = the bytes p[0..n) as a C array (with a NUL after them when `nul`). */
static void emit(struct leap_buf *s, const char *type, const char *name, const void *p, size_t n, int nul)
{
	const unsigned char *b = p;
	leap_buf_addf(s, "static const %s %s[] = {", type, name);
	for (size_t i = 0; i < n; i++)
		leap_buf_addf(s, "%s%d,", i % 24 ? "" : "\n", b[i]);
	leap_buf_adds(s, nul ? "0};\n" : "};\n");
}

/* Reads libexec/name into an emitted array. Returns 0, or -1 with *err. */
static int emit_file(struct leap_buf *s, const char *name, const char *path, char **err)
{
	size_t len = 0;
	char *text = leap_read_file(path, &len, err);
	if (!text)
		return -1;
	if (!len) {
		*err = xasprintf("%s is empty", path);
		free(text);
		return -1;
	}
	emit(s, "unsigned char", name, text, len, 0);
	free(text);
	return 0;
}

/* leap_tb_aoti[] up to leap_tb_aoti_end[]: the bytes of the file at `so` (none when NULL), read
 * by the assembler when the artifact is built (a compiled module is megabytes: as C text it
 * would be four times that). Returns 0, or -1 with *err. */
static int emit_aoti(struct leap_buf *s, const char *so, char **err)
{
	char real[PATH_MAX];
	if (so && !realpath(so, real)) {
		*err = xasprintf("%s: %s", so, strerror(errno));
		return -1;
	}
	if (so && (strpbrk(real, "\"\\\n") || strstr(real, "??"))) { /* it goes into a C string literal */
		*err = xasprintf("the cache's path %s holds a character the build cannot quote", real);
		return -1;
	}
	leap_buf_adds(s, "__asm__(\".section .rodata\\n.balign 64\\n.globl leap_tb_aoti\\n.hidden leap_tb_aoti\\n"
			 "leap_tb_aoti:\\n");
	if (so)
		leap_buf_addf(s, ".incbin \\\"%s\\\"\\n", real);
	leap_buf_adds(s, ".globl leap_tb_aoti_end\\n.hidden leap_tb_aoti_end\\nleap_tb_aoti_end:\\n.previous\\n\");\n"
			 "__attribute__((visibility(\"hidden\"))) extern const unsigned char leap_tb_aoti[], leap_tb_aoti_end[];\n");
	return 0;
}

/* The artifact's source: the data, then runner/torchbase.c. New, or NULL with *err. */
static char *source_of(const struct ref_torch *tp, const struct leap_verifier *v, const struct leap_task *t,
		       const char *device, const char *kind, const char *values, const char *aoti, size_t *len,
		       char **err)
{
	struct leap_buf s = {0};
	leap_buf_adds(&s, "/* generated by leap (lib/referee/torchbase.c): the torch baseline of a module task */\n");
	emit(&s, "char", "leap_tb_libpython", tp->libpython, strlen(tp->libpython), 1);
	emit(&s, "char", "leap_tb_home", tp->home, strlen(tp->home), 1);
	emit(&s, "char", "leap_tb_path", tp->path, strlen(tp->path), 1);
	emit(&s, "char", "leap_tb_kind", kind, strlen(kind), 1);
	emit(&s, "char", "leap_tb_device", device, strlen(device), 1);
	emit(&s, "char", "leap_tb_values", values, strlen(values), 1);
	if (emit_aoti(&s, aoti, err))
		goto fail;
	const char *files[][2] = {{"leap_tb_ref", "leap-torchref.py"}, {"leap_tb_base", "leap-torchbase.py"}};
	for (size_t i = 0; i < 2; i++) {
		char *p = xasprintf("%s/%s", v->o.libexec, files[i][1]);
		int r = emit_file(&s, files[i][0], p, err);
		free(p);
		if (r)
			goto fail;
	}
	char *mp = xasprintf("%s/%s", t->dir, t->module), *tj = xasprintf("%s/task.json", t->dir);
	int r = emit_file(&s, "leap_tb_module", mp, err) || emit_file(&s, "leap_tb_task", tj, err);
	free(mp);
	free(tj);
	char *shim = r ? NULL : xasprintf("%s/leap-torchbase.c", v->o.libexec);
	size_t n = 0;
	char *text = shim ? leap_read_file(shim, &n, err) : NULL;
	free(shim);
	if (!text)
		goto fail;
	leap_buf_add(&s, text, n);
	free(text);
	*len = s.len;
	return leap_buf_detach(&s);
fail:
	leap_buf_free(&s);
	return NULL;
}

const char *leap_torch_kind(const struct leap_task *t, const char *forced)
{
	if (forced)
		return forced;
	return t->baseline_torch == 2 ? LEAP_TORCH_COMPILE : LEAP_TORCH_EAGER;
}

char *leap_torch_baseline(struct ref_torch **tpp, struct leap_verifier *v, const struct leap_task *t,
			  enum leap_backend b, const char *kind, int cores, int *skip, char **err)
{
	*skip = 0;
	const char *python = leap_torch_python(err);
	if (!python || !v->o.libexec) {
		if (python)
			*err = xstrdup("cannot find libexec (set LEAP_LIBEXEC): the torch baseline's sources live there");
		return NULL;
	}
	if (!*tpp) {
		struct ref_torch *tp = xcalloc(1, sizeof *tp);
		if (probe(tp, python, err)) {
			leap_torch_free(tp);
			return NULL;
		}
		*tpp = tp;
	}
	const char *device = leap_backend_has(b, LEAP_BK_HOST) ? "cpu" : leap_backend_name(b);
	json_t *vj = leap_case_json(t, leap_task_bench_case(t, b));
	char *values = json_dumps(vj, JSON_COMPACT | JSON_SORT_KEYS), *aoti = NULL;
	json_decref(vj);
	if (!values) {
		*err = xstrdup("out of memory");
		return NULL;
	}
	if (!strcmp(kind, LEAP_TORCH_COMPILE)) {
		/* cuda (not yet run on a GPU): the step runs on the baseline's device alone, and its
		 * name and compute capability are in the key (triton builds for it) */
		char *gpu = xstrdup(""), *visible = NULL;
		const struct leap_backend_ops *be = leap_backend_of(b);
		const struct leap_gpu *g = NULL;
		if (!leap_backend_has(b, LEAP_BK_HOST) && be->first_use)
			g = be->first_use(&v->gpu);
		int idx = 0;
		if (g && v->o.device && !leap_parse_int(v->o.device, 0, 1 << 20, &idx)) {
			const struct leap_gpu_dev *d = leap_gpu_device(g, idx);
			if (d) {
				free(gpu);
				gpu = xasprintf("%s %d.%d", d->name, d->cc_major, d->cc_minor);
			}
			visible = be->visible ? be->visible(g, v->o.device) : NULL;
		}
		struct leap_torch_aot a = {python, (*tpp)->torch, v->o.libexec, v->o.cache, device, values, cores,
					   gpu, visible};
		aoti = leap_torch_aot(&a, t, skip, err);
		free(gpu);
		free(visible);
		if (!aoti) {
			char *e = xasprintf("the torch-compile baseline of task '%s' %s: %s", t->id,
					    *skip ? "cannot be made" : "failed", *err);
			free(*err);
			*err = e;
			free(values);
			return NULL;
		}
	}
	size_t len = 0;
	char *src = source_of(*tpp, v, t, device, kind, values, aoti, &len, err);
	free(values);
	free(aoti);
	if (!src)
		return NULL;
	char *art = leap_build_plain(t, src, len, v->o.cache, err);
	free(src);
	if (!art) {
		char *e = xasprintf("the torch baseline of task '%s' does not build: %s", t->id, *err);
		free(*err);
		*err = e;
	}
	return art;
}

/* The candidates' sandbox `sb` with the torch baseline's exemptions (made once). */
static const struct leap_sandbox_opts *torch_sandbox(struct ref_torch *tp, const struct leap_sandbox_opts *sb)
{
	if (!tp->have_sb) {
		tp->sb = *sb;
		if (sb->root) { /* the candidates' entries, then the Python's directories */
			tp->root.n = sb->root->n + tp->ndirs;
			tp->root.e = xcalloc(tp->root.n, sizeof *tp->root.e);
			for (size_t i = 0; i < sb->root->n; i++) {
				const struct leap_root_entry *e = &sb->root->e[i];
				tp->root.e[i] = (struct leap_root_entry){xstrdup(e->path), e->link ? xstrdup(e->link) : NULL,
									 e->kind};
			}
			for (size_t i = 0; i < tp->ndirs; i++)
				tp->root.e[sb->root->n + i] = (struct leap_root_entry){xstrdup(tp->dirs[i]), NULL, LEAP_ROOT_DIR};
			tp->sb.root = &tp->root;
		}
		/* no RLIMIT_AS (torch maps more than 4 GiB); the memory group keeps --memory */
		if (!tp->sb.cg_mem_bytes && !tp->sb.cg_mem_none)
			tp->sb.cg_mem_bytes = tp->sb.mem_bytes;
		tp->sb.mem_bytes = 0;
		tp->have_sb = 1;
	}
	return &tp->sb;
}

void leap_torch_session(struct ref_torch *tp, const struct leap_sandbox_opts *sb, int host,
			struct leap_session_opts *so)
{
	if (!tp)
		return;
	so->sb = torch_sandbox(tp, sb);
	if (host)
		so->role = "trusted"; /* the cpu runner skips its heap check (runner/cpu.c) */
}

void leap_torch_free(struct ref_torch *tp)
{
	if (!tp)
		return;
	free(tp->python);
	free(tp->libpython);
	free(tp->home);
	free(tp->path);
	free(tp->torch);
	for (size_t i = 0; i < tp->ndirs; i++)
		free(tp->dirs[i]);
	free(tp->dirs);
	leap_root_free(&tp->root);
	free(tp);
}
