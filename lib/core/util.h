/* util.h - exit codes, diagnostics, checked allocation and number parsing shared by all programs. */
#ifndef LEAP_UTIL_H
#define LEAP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdnoreturn.h>

#ifndef LEAP_VERSION
#define LEAP_VERSION "0.1.0"
#endif

/* Exit status of every leap program. */
enum leap_exit {
	LEAP_EXIT_OK = 0,      /* every record processed */
	LEAP_EXIT_RECORDS = 1, /* some records carried an error (they were still written) */
	LEAP_EXIT_FATAL = 2,   /* usage error, unreadable input file, or a fatal error */
};

/* The exit status of a filter: `rc` when not 0 (closing the output failed), LEAP_EXIT_FATAL
 * when an input could not be opened, LEAP_EXIT_RECORDS when some records were written as
 * errors, else LEAP_EXIT_OK. Every program's one rule. */
int leap_filter_exit(int rc, int open_failed, long errors);

/* The short name of the running program (as in messages), e.g. "leap-verify". */
const char *leap_prog(void);

/* Prints "PROG: MESSAGE\n" on stderr. Never fails visibly. */
void leap_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Like leap_warn, followed by ": strerror(errno)". */
void leap_warn_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints like leap_warn and exits with LEAP_EXIT_FATAL. */
noreturn void leap_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints like leap_warn_errno and exits with LEAP_EXIT_FATAL. */
noreturn void leap_die_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that never returns NULL: on exhaustion the program dies with a message. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grows *p (of *cap elements of size `size`) to hold at least `need` elements. */
void xgrow(void **p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
/* Frees a NULL-terminated vector of strings and the strings (NULL is fine). */
void leap_strv_free(char **v);
/* A growable NULL-terminated vector of strings (a command line); push appends a copy. */
struct leap_argv {
	char **v;
	size_t n, cap;
};
void leap_argv_push(struct leap_argv *a, const char *s);
char *xstrndup(const char *s, size_t n);
/* Returns a newly allocated formatted string; dies on exhaustion. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/* A growable byte string; `s` is always NUL-terminated once anything was appended. */
struct leap_buf {
	char *s;
	size_t len, cap;
};
void leap_buf_add(struct leap_buf *b, const void *data, size_t n);
void leap_buf_adds(struct leap_buf *b, const char *s);
void leap_buf_addf(struct leap_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the buffer, keeping its memory. */
void leap_buf_reset(struct leap_buf *b);
/* Frees the memory; the buffer is empty and reusable afterwards. */
void leap_buf_free(struct leap_buf *b);
/* Returns the string and leaves the buffer empty; the caller frees it. Never NULL. */
char *leap_buf_detach(struct leap_buf *b);

/* Parses all of `s` as a base-10 integer in [lo, hi]. Returns 0 and sets *out on success;
 * returns -1 and leaves *out unchanged when s is empty, has trailing characters or is
 * out of range. */
int leap_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
int leap_parse_int(const char *s, int lo, int hi, int *out);
/* Parses all of `s` as a finite double in [lo, hi]; same contract as leap_parse_i64. */
int leap_parse_double(const char *s, double lo, double hi, double *out);
/* Parses a duration such as "30", "2.5s", "500ms", "2m" into seconds (> 0). Returns 0 or -1. */
int leap_parse_seconds(const char *s, double *out);

/* Parses a byte count with an optional K, M, G or T suffix (powers of 1024, an optional
 * trailing B): "4G", "512M", "4096". Returns 0 and sets *out, or -1 (nothing changed). */
int leap_parse_size(const char *s, int64_t *out);

/* Longest text leap_fmt_double writes, with its NUL. */
#define LEAP_DOUBLE_BUF 32

/* Writes the finite double v into buf as the shortest decimal that reads back (strtod) to
 * exactly v, in C's %g style ("58.44", "1e-06", "3"); returns buf. The one formatting of
 * reals in leap's output: 58.44 is written as 58.44, not as %.17g's 58.439999999999998.
 * Non-finite values are written as "nan", "inf" or "-inf" (not JSON: callers keep them out). */
char *leap_fmt_double(char buf[LEAP_DOUBLE_BUF], double v);

/* Monotonic clock in seconds. */
double leap_now(void);

/* Fills n bytes at p with the elsize-byte pattern repeated (doubling copies: O(n) memcpy
 * work); nothing when n < elsize. The poison of outputs, the canaries of guards. */
void leap_fill(void *p, uint64_t n, const void *pattern, uint32_t elsize);

/* Copies `s` (n bytes) into `b`, replacing each byte sequence that is not valid UTF-8 with
 * U+FFFD, so that the result can be stored as a JSON string. */
void leap_utf8_sanitize(struct leap_buf *b, const char *s, size_t n);

/* Copies text that a candidate wrote (n bytes, any bytes) into `b` so that every byte of it
 * shows: a NUL, another control byte (tab, newline and carriage return excepted), DEL and
 * each byte of an invalid UTF-8 sequence become the four characters \xHH. A C string of the
 * result is the whole text: a leading NUL cannot hide what follows it, and no terminal
 * escape reaches whoever prints the record. */
void leap_text_escape(struct leap_buf *b, const char *s, size_t n);

/* 1 when the open stream `fp` is a directory (errno set to EISDIR), else 0. A directory
 * opens for reading like a file and fails only at the first read: every program that takes
 * an input file checks with this, so that a directory is refused like a missing file. */
int leap_fp_is_dir(FILE *fp);

/* Directory of the running executable (from /proc/self/exe), newly allocated, or NULL. */
char *leap_exe_dir(void);

/* Cleanup helpers for __attribute__((cleanup)). */
void leap_freep(void *pp);
#define autofree __attribute__((cleanup(leap_freep)))

#endif
