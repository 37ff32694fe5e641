/* diag.h - compiler output (gcc, nvcc, ld, ptxas) as diagnostics on the candidate's own lines, and logs fit to show. */
#ifndef LEAP_DIAG_H
#define LEAP_DIAG_H

#include <stddef.h>
#include <jansson.h>

/* One diagnostic. line/col are 1-based lines of the candidate's source (0: unknown or not in
 * the candidate); `where` is NULL for the candidate's own file, otherwise what the message is
 * about: "prelude" (the generated prototype), "shim", "link", a tool ("cc1", "ptxas", ...)
 * or a header's file name. */
struct leap_diag {
	int line, col;
	const char *severity; /* "error", "warning", "note" (static) */
	char *message;
	char *where;
	char *excerpt; /* the lines the compiler printed under the message (the quoted source line
			* with its caret, a fix-it such as "+++ |+#include <stddef.h>", nvcc's
			* "detected during" context), or NULL */
};

struct leap_diags {
	struct leap_diag *v;
	size_t n, cap;
};

/* The file names the compiler saw, relative to its working directory. */
struct leap_diag_files {
	const char *candidate; /* e.g. "kernel.cu" */
	const char *prelude;   /* e.g. "leap_prelude.h" */
	const char *shim;      /* e.g. "leap_shim.cu" */
};

/* Parses scrubbed compiler output log[0..len) and appends at most `max` diagnostics to `d`
 * (gcc "f:l:c: error: m", nvcc "f(l): error: m" with the column from its caret line, ld
 * "undefined reference to", "multiple definition of", ptxas and driver messages). The
 * indented lines under a message become its excerpt. Notes stay in the order the compiler
 * gave them, right after the error they explain. Messages and excerpts longer than 1 KiB are
 * cut. Never fails. */
void leap_diag_parse(const char *log, size_t len, const struct leap_diag_files *f, struct leap_diags *d, size_t max);

/* Frees the diagnostics; `d` is empty and reusable afterwards. */
void leap_diags_free(struct leap_diags *d);

/* The diagnostics as a JSON array [{line, col, severity, message[, where][, excerpt]}] (line
 * and col omitted when 0). New reference. */
json_t *leap_diags_json(const struct leap_diags *d);

/* Returns log[0..len) with the paths of this machine removed: each `dirs[i]` prefix (a
 * directory) is replaced by `repl[i]` ("" removes it with its slash), nvcc's temporary file
 * prefixes (tmpxft_..._NN-M_) are dropped, and any other absolute path outside /dev and
 * /proc is cut to its last component. Invalid UTF-8 and NUL bytes become U+FFFD (the result is
 * a C string that holds all of the log). Newly allocated. */
char *leap_log_scrub(const char *log, size_t len, const char *const *dirs, const char *const *repl, size_t ndirs);

/* Returns scrubbed log with the harness's internal names replaced by what they are, for a
 * model to read: a linker complaint located in the shim ("shim-<hash>.o: in function
 * `leap_entry':", "leap_shim.cudafe1.cpp:(.text+0x38): undefined reference to `f'") reads
 * "in the harness's call of your function (the required prototype):" and "  undefined
 * reference to `f'"; any other shim file name or leap_entry reads "the harness". Newly
 * allocated. */
char *leap_log_harness(const char *log);

/* Returns log cut to at most `max` bytes (plus a one-line "[leap: N bytes cut]" marker),
 * at line boundaries where possible, keeping the first error: when the first line that
 * holds "error" lies too far in, the text before it is cut instead of the error. The cut
 * never splits a UTF-8 sequence. Newly allocated. */
char *leap_log_cut(const char *log, size_t max);

#endif
