/* incguard.c - the include guard: what a candidate's compile may read, and the verdicts when it reads more. */
/*
 * A candidate may include system and toolkit headers and nothing else: not a task's
 * reference.c, not a secret, not a vendor library's headers the task does not allow. The
 * guard does not parse #include lines (macros, computed includes, .incbin and __has_include
 * would escape a parser); it asks the compiler, which writes the list of every file it read
 * (-MMD -MF LEAP_DEPS_FILE), and checks that list after the run against the allowed roots:
 * the system include directories, the compiler's own headers, the toolkit's include
 * directories and the user's -I directories (leap_guard_roots, computed once per backend).
 *
 * The mount namespace (crun.c) is the second wall: a file hidden there cannot be read at
 * all, and the compiler's "No such file" about it becomes the same forbidden_include verdict
 * (leap_guard_hidden). Either way the compiler's output is withheld, since it may quote the
 * file. Vendor libraries are refused by header (in the list) and by name (a dlopen of
 * "libcublas" spelled in the code), and the libraries a task allows are linked with -l.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The include guard (leap-compile):
 *
 * - The include guard (`lib/compile/incguard.c`: `leap_guard_roots()`, `leap_guard_deps()`): every
 *   candidate is compiled with `-MMD -MF leap_deps.d`, and every file the compiler names in
 *   that list must lie in the job's own directory or under an allowed directory: the system
 *   include directories (`/usr/include`, `/usr/local/include`, `/usr/lib/gcc`,
 *   `/usr/lib/clang`, `/usr/lib/llvm-N/lib/clang`, `/usr/lib/nvidia-cuda-toolkit`), for cuda
 *   the toolkit's `include` and `targets` beside the `bin` that holds nvcc, and every directory
 *   the user's own `--cc-flag`/`--nvcc-flag` options name with `-I`, `-isystem`, `-idirafter`
 *   or `-iquote`. Any other file gives `compile_error` with reason `forbidden_include`, a
 *   message naming the file, `diagnostics: []` and a log that only says the output is withheld
 *   (the compiler's messages would quote the file). Tests: "compile: an #include of a file
 *   outside the system headers is refused, and the file is not quoted", "compile: a candidate
 *   that #includes the task's reference.c is refused (path built by a macro too)", "compile: a
 *   cuda candidate that #includes the task's baseline.cu is refused" (needs nvcc), "compile:
 *   system headers, also named by absolute path, and the user's own -I directories may be
 *   included". The batch mode (`--batch`) checks the same list and compiles a batch with a
 *   forbidden file one candidate at a time, where the guard names the culprit (no test of its
 *   own).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "incguard.h"
#include "task/task.h"
#include "core/util.h"
#include "core/banned.h"

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
 * system include directories, the compiler's own headers, the backend's own roots (its
 * `roots`: nvcc's <toolkit>/include and <toolkit>/targets) and every directory the user's own
 * compiler flags name with -I, -isystem, -idirafter or -iquote. Never fails: a directory that does not
 * exist is left out. */
void leap_guard_roots(struct leap_compiler *c, enum leap_backend b)
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
	if (leap_backend_of(b)->roots)
		leap_backend_of(b)->roots(t, add_root);
	size_t nf;
	char **fl = leap_backend_of(b)->user_flags(&c->o, &nf);
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
int leap_path_under(const char *p, const char *root)
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
int leap_guard_deps(const struct leap_compiler *c, enum leap_backend b, const char *dir, unsigned allowed,
		    char **bad)
{
	const struct leap_tool *t = &c->tools[b];
	char *path = xasprintf("%s/%s", dir, LEAP_DEPS_FILE), *err = NULL;
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
		int ok = jd && leap_path_under(p, jd);
		for (size_t i = 0; i < t->nroots && !ok; i++)
			ok = leap_path_under(p, t->roots[i]);
		const char *base = strrchr(p, '/');
		unsigned lib = ok && !(jd && leap_path_under(p, jd)) ? leap_library_of_header(base ? base + 1 : p) : 0;
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
const char *leap_guard_named_library(const char *code, unsigned allowed)
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
void leap_guard_libs(const struct leap_task *t, char libs[][24], const char **at)
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
void leap_guard_forbid_library(struct leap_cresult *r, const struct leap_task *t, const char *lib, const char *how)
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
char *leap_guard_hidden(const struct leap_compiler *c, const struct leap_buf *out)
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
void leap_guard_forbid(struct leap_cresult *r, char **log, char *message, const char *verb, const char *path)
{
	r->status = LEAP_C_ERROR;
	r->reason = xstrdup("forbidden_include");
	r->message = message;
	json_decref(r->diagnostics);
	r->diagnostics = json_array();
	free(*log);
	*log = xasprintf("[leap: the compiler's output is withheld: the candidate %s '%s']\n", verb, path);
}
