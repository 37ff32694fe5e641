/* jsonl.h - JSON Lines record streams: tolerant reading, error records, checked compact writing. */
#ifndef LEAP_JSONL_H
#define LEAP_JSONL_H

#include <stdio.h>
#include <jansson.h>

#include "util.h"

/* Reads records from named files in order (or stdin when there are none; "-" names stdin).
 * Lines of any length; CRLF and a missing final newline are accepted; blank lines skipped.
 * A line that is not a JSON object yields an error record instead of a record, and the line
 * "PROG: FILE:LINE: MESSAGE" on stderr (unless `quiet`): every program reports it the same way. */
struct leap_in {
	char *const *files;
	int nfiles, next;
	FILE *fp;
	const char *name;   /* current input name for messages: a path or "<stdin>" */
	long line;          /* 1-based number of the last line read in `name` */
	char *buf;          /* the last line, NUL-terminated, without its line ending */
	size_t cap, len;
	FILE *flush;        /* flushed before any read that could block (the output) */
	long records;       /* records returned so far */
	long bad;           /* error records returned so far */
	int open_failed;    /* number of named files that could not be opened or read to their
			     * end, a directory included (each reported): a fatal error (exit 2) */
	int quiet;          /* 1: nothing is reported on stderr (a first pass over an input that
			     * is read again, and reported then) */
	int on_signal;      /* 1: a read that would block ends the input (LEAP_READ_EOF) when an
			     * ending signal is caught (sig.h); the caller checks leap_signal_caught */
};

enum leap_read {
	LEAP_READ_EOF = 0,    /* no more input */
	LEAP_READ_RECORD = 1, /* *rec is a parsed object; in->buf/in->len hold its raw text */
	LEAP_READ_BAD = 2,    /* *rec is an error record for the offending line; write it on */
};

/* Prepares to read `files` (nfiles may be 0 for stdin). `flush`, if not NULL, is flushed
 * whenever the next read might block, so records reach the next pipeline stage at once. */
void leap_in_init(struct leap_in *in, int nfiles, char *const *files, FILE *flush);

/* Reads the next record. *rec receives a new reference the caller must json_decref.
 * Files that cannot be opened (or are directories) are reported on stderr, counted in
 * open_failed and skipped.
 * A read error on an open file is reported and ends that file. */
enum leap_read leap_in_next(struct leap_in *in, json_t **rec);

/* Reads the next non-blank line without parsing it (for filters that scan records
 * themselves): LEAP_READ_RECORD with the line in in->buf/in->len (line ending removed; a
 * byte-order mark on line 1 kept), or LEAP_READ_EOF. Same file handling as leap_in_next. */
enum leap_read leap_in_next_line(struct leap_in *in);

/* Parses the line last returned by leap_in_next_line exactly as leap_in_next would:
 * LEAP_READ_RECORD with *rec, or LEAP_READ_BAD with an error record in *rec. */
enum leap_read leap_in_parse(struct leap_in *in, json_t **rec);

/* The descriptor the next read would wait on: the open input when no whole line is buffered,
 * else -1 (a line is ready, or the next input is still to be opened). A program that waits
 * for other things too (workers) polls it with them before calling leap_in_next. */
int leap_in_wait_fd(struct leap_in *in);

/* Releases the reader's memory and closes the current file. */
void leap_in_close(struct leap_in *in);

/* Returns a new error record {"error":{"program","file","line","message"},"raw":RAW}
 * (raw omitted when NULL; invalid UTF-8 in it replaced by U+FFFD). Never NULL. */
json_t *leap_error_record(const char *file, long line, const char *raw, size_t rawlen,
			  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Sets rec.error = {"program","file","line","message"} on an existing record (keeping the
 * rest of it). */
void leap_record_set_error(json_t *rec, const char *file, long line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes records compactly, one per line, checking every write. */
struct leap_out {
	FILE *fp;
	/* Called instead of exit(0) when the reader of the output has gone (EPIPE); a
	 * multi-threaded program sets it to end at once (_exit) without running exit handlers
	 * under its working threads. Must not return. NULL: exit(LEAP_EXIT_OK). */
	void (*on_epipe)(void *arg);
	void *epipe_arg;
	struct leap_buf buf;
	long written;
};

void leap_out_init(struct leap_out *out, FILE *fp);

/* Writes `rec` as one compact line. A closed pipe (EPIPE) ends the program quietly with
 * status 0; any other write error is fatal (status 2). */
void leap_out_write(struct leap_out *out, const json_t *rec);

/* Writes the record whose raw text is raw[0..len) with the members of `add` appended, without
 * re-serialising the rest. `rec` is the parsed raw text: when it already has one of the keys
 * of `add`, or the raw text does not end in '}', the record is updated and re-serialised
 * instead. Same error behaviour as leap_out_write. */
void leap_out_splice(struct leap_out *out, const char *raw, size_t len, json_t *rec, const json_t *add);

/* Writes raw bytes followed by a newline (a line passed through unchanged). */
void leap_out_raw(struct leap_out *out, const char *raw, size_t len);

/* Flushes what was written so far; same error behaviour as leap_out_write. */
void leap_out_flush(struct leap_out *out);

/* Flushes and closes the output; a write error is reported and LEAP_EXIT_FATAL returned,
 * otherwise LEAP_EXIT_OK. */
int leap_out_close(struct leap_out *out);

/* Serialises `json` compactly into `b` (appending), reals in their shortest round-trip form
 * (leap_fmt_double; "2.0" for an integral real). Returns 0, or -1 on failure (a non-finite
 * real; `b` then holds a partial text). */
int leap_json_append(struct leap_buf *b, const json_t *json);

/* Appends the JSON text of the finite double v (as leap_json_append writes reals); -1 when
 * v is not finite (nothing appended). */
int leap_json_append_real(struct leap_buf *b, double v);

/* Writes `json` and a newline to `path` as leap_json_append writes it, through a temporary
 * file beside it that is then renamed: a reader sees the old file or the new one, never a
 * part (the cache's files, written by processes that may run at once). Returns 0, or -1 with
 * errno set. */
int leap_json_write_file(const json_t *json, const char *path);

/* Record field accessors: return the value, or `dflt` when the field is absent or of the
 * wrong type. */
const char *leap_get_str(const json_t *obj, const char *key, const char *dflt);
json_int_t leap_get_int(const json_t *obj, const char *key, json_int_t dflt);
double leap_get_num(const json_t *obj, const char *key, double dflt);

/* json_t cleanup for __attribute__((cleanup)) where jansson's json_auto_t is not wanted. */
#define json_autoptr __attribute__((cleanup(json_decrefp)))

#endif
