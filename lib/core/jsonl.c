/* jsonl.c - JSON Lines record streams: tolerant reading, error records, checked compact writing. */
/*
 * Every program reads and writes records through this file, so that they all behave the same
 * at the edges: a line that is not a JSON object becomes an error record and one line on stderr
 * naming file and line, never a crash or a silent drop; lines of any length, CRLF and a missing
 * last newline are read; a reader that goes away ends the program quietly (EPIPE). Records are
 * written by leap's own compact writer, not jansson's dump: reals in their shortest round-trip
 * form (58.44, not 58.439999999999998) and members in insertion order, in every record and file.
 */
#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdnoreturn.h>
#include <unistd.h>

#include "jsonl.h"
#include "sig.h"
#include "banned.h"

void leap_in_init(struct leap_in *in, int nfiles, char *const *files, FILE *flush)
{
	memset(in, 0, sizeof(*in));
#if defined(__GLIBC__)
	/* Readers allocate and free a few KiB per record; by default glibc gives the top of
	 * the heap back to the kernel and takes it again over and over (page faults: 10% of a
	 * filter's time, bench/README.md). Keep up to 32 MiB of free heap, grow it 16 MiB at
	 * a time; pages never touched stay out of the resident set. */
	mallopt(M_TOP_PAD, 16 << 20);
	mallopt(M_TRIM_THRESHOLD, 32 << 20);
#endif
	in->files = files;
	in->nfiles = nfiles;
	in->flush = flush;
}

/* Whether buffered() sees into the C library's buffer. */
#if defined(__GLIBC__)
#define BUFFER_KNOWN 1
#else
#define BUFFER_KNOWN 0
#endif

/* Bytes already buffered in `fp` that a read can return without a system call. Where the
 * C library does not let us see that, 0: the caller then flushes before every line. */
static size_t buffered(FILE *fp, int *has_newline)
{
#if defined(__GLIBC__)
	const char *p = fp->_IO_read_ptr, *e = fp->_IO_read_end;
	if (!p || e <= p) {
		*has_newline = 0;
		return 0;
	}
	*has_newline = memchr(p, '\n', (size_t)(e - p)) != NULL;
	return (size_t)(e - p);
#else
	(void)fp;
	*has_newline = 0;
	return 0;
#endif
}

static void close_current(struct leap_in *in)
{
	if (in->fp && in->fp != stdin)
		fclose(in->fp);
	in->fp = NULL;
}

/* Opens the next input; returns 0 when there is none left. */
static int open_next(struct leap_in *in)
{
	for (;;) {
		if (in->nfiles == 0) {
			if (in->next++ > 0)
				return 0;
			in->fp = stdin;
			in->name = "<stdin>";
		} else {
			if (in->next >= in->nfiles)
				return 0;
			const char *path = in->files[in->next++];
			if (!strcmp(path, "-")) {
				in->fp = stdin;
				in->name = "<stdin>";
			} else {
				in->fp = fopen(path, "r");
				in->name = path;
				if (!in->fp || leap_fp_is_dir(in->fp)) {
					if (!in->quiet)
						leap_warn_errno("%s", path);
					in->open_failed++;
					close_current(in);
					continue;
				}
			}
		}
		in->line = 0;
		return 1;
	}
}

enum leap_read leap_in_next_line(struct leap_in *in)
{
	for (;;) {
		if (!in->fp && !open_next(in))
			return LEAP_READ_EOF;
		int nl = 0;
		if (in->flush || in->on_signal)
			buffered(in->fp, &nl);
		if (in->flush && !nl && fflush(in->flush) == EOF && ferror(in->flush)) {
			if (errno == EPIPE)
				exit(LEAP_EXIT_OK);
			leap_die_errno("write error");
		}
		if (in->on_signal && !nl && BUFFER_KNOWN) {
			/* The handlers restart reads (SA_RESTART): wait here, where a signal ends the wait. */
			struct pollfd pfd = {fileno(in->fp), POLLIN, 0};
			while (!leap_signal_caught() && poll(&pfd, 1, -1) < 0 && errno == EINTR)
				;
			if (leap_signal_caught())
				return LEAP_READ_EOF;
		}
		errno = 0;
		ssize_t n = getline(&in->buf, &in->cap, in->fp);
		if (n < 0) {
			if (ferror(in->fp)) {
				if (!in->quiet)
					leap_warn_errno("%s: read error", in->name);
				in->open_failed++; /* an input not read to its end: as fatal as a missing one */
			}
			close_current(in);
			continue;
		}
		in->line++;
		size_t len = (size_t)n;
		while (len && (in->buf[len - 1] == '\n' || in->buf[len - 1] == '\r'))
			len--;
		in->buf[len] = '\0';
		in->len = len;
		const char *p = in->buf;
		size_t plen = len;
		if (in->line == 1 && plen >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
			p += 3, plen -= 3; /* a byte-order mark */
		size_t i = 0;
		while (i < plen && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i == plen)
			continue; /* blank line */
		return LEAP_READ_RECORD;
	}
}

enum leap_read leap_in_parse(struct leap_in *in, json_t **rec)
{
	const char *p = in->buf;
	size_t plen = in->len;
	if (in->line == 1 && plen >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3, plen -= 3; /* a byte-order mark */
	json_error_t jerr;
	json_t *j = json_loadb(p, plen, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
	if (!j || !json_is_object(j)) {
		char *msg = j ? xstrdup("a record must be a JSON object")
			      : xasprintf("invalid JSON at column %d: %s", jerr.column, jerr.text);
		json_decref(j);
		if (!in->quiet)
			leap_warn("%s:%ld: %s", in->name, in->line, msg);
		*rec = leap_error_record(in->name, in->line, in->buf, in->len, "%s", msg);
		free(msg);
		in->bad++;
		return LEAP_READ_BAD;
	}
	in->records++;
	*rec = j;
	return LEAP_READ_RECORD;
}

enum leap_read leap_in_next(struct leap_in *in, json_t **rec)
{
	*rec = NULL;
	if (leap_in_next_line(in) == LEAP_READ_EOF)
		return LEAP_READ_EOF;
	return leap_in_parse(in, rec);
}

int leap_in_wait_fd(struct leap_in *in)
{
	int nl = 0;
	if (!in->fp || !BUFFER_KNOWN)
		return -1; /* without a view into the buffer, polling could wait with lines buffered */
	buffered(in->fp, &nl);
	return nl ? -1 : fileno(in->fp);
}

void leap_in_close(struct leap_in *in)
{
	close_current(in);
	free(in->buf);
	in->buf = NULL;
	in->cap = 0;
}

static json_t *error_object(const char *file, long line, const char *fmt, va_list ap)
{
	char *msg = xvasprintf(fmt, ap);
	struct leap_buf clean = {0};
	leap_utf8_sanitize(&clean, msg, strlen(msg));
	free(msg);
	json_t *e = json_object();
	json_object_set_new(e, "program", json_string(leap_prog()));
	if (file)
		json_object_set_new(e, "file", json_string(file));
	if (line > 0)
		json_object_set_new(e, "line", json_integer(line));
	json_object_set_new(e, "message", json_stringn(clean.s ? clean.s : "", clean.len));
	leap_buf_free(&clean);
	return e;
}

json_t *leap_error_record(const char *file, long line, const char *raw, size_t rawlen,
			  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *e = error_object(file, line, fmt, ap);
	va_end(ap);
	json_t *rec = json_object();
	if (!rec || !e)
		leap_die("out of memory");
	json_object_set_new(rec, "error", e);
	if (raw) {
		struct leap_buf clean = {0};
		leap_utf8_sanitize(&clean, raw, rawlen);
		json_object_set_new(rec, "raw", json_stringn(clean.s ? clean.s : "", clean.len));
		leap_buf_free(&clean);
	}
	return rec;
}

void leap_record_set_error(json_t *rec, const char *file, long line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *e = error_object(file, line, fmt, ap);
	va_end(ap);
	json_object_set_new(rec, "error", e);
}

void leap_out_init(struct leap_out *out, FILE *fp)
{
	memset(out, 0, sizeof(*out));
	out->fp = fp;
	/* A closed pipe must surface as EPIPE on write, not kill us mid-record. */
	signal(SIGPIPE, SIG_IGN);
}

/* JSON text of a string: jansson's escapes (two-character forms, \u00XX for the other
 * control characters, everything else as it is: the text stays UTF-8). */
static void append_string(struct leap_buf *b, const char *s, size_t n)
{
	leap_buf_add(b, "\"", 1);
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		leap_buf_add(b, s + start, i - start);
		start = i + 1;
		char esc[8];
		switch (c) {
		case '"': leap_buf_add(b, "\\\"", 2); break;
		case '\\': leap_buf_add(b, "\\\\", 2); break;
		case '\b': leap_buf_add(b, "\\b", 2); break;
		case '\f': leap_buf_add(b, "\\f", 2); break;
		case '\n': leap_buf_add(b, "\\n", 2); break;
		case '\r': leap_buf_add(b, "\\r", 2); break;
		case '\t': leap_buf_add(b, "\\t", 2); break;
		default:
			snprintf(esc, sizeof esc, "\\u%04X", c);
			leap_buf_adds(b, esc);
		}
	}
	leap_buf_add(b, s + start, n - start);
	leap_buf_add(b, "\"", 1);
}

int leap_json_append_real(struct leap_buf *b, double v)
{
	if (!isfinite(v))
		return -1;
	char num[LEAP_DOUBLE_BUF];
	leap_fmt_double(num, v);
	leap_buf_adds(b, num);
	if (!strpbrk(num, ".e")) /* "2" would read back as an integer */
		leap_buf_add(b, ".0", 2);
	return 0;
}

/* Our own compact writer rather than json_dump_callback: jansson writes reals with %.17g
 * (58.439999999999998), and leap writes the shortest text that reads back to the same
 * double (leap_fmt_double), in every record, cache entry and report. Object members keep
 * their insertion order, as jansson's dump does. */
int leap_json_append(struct leap_buf *b, const json_t *json)
{
	const char *key;
	json_t *v;
	size_t i, klen;
	int first = 1;
	char num[32];
	switch (json_typeof(json)) {
	case JSON_OBJECT:
		leap_buf_add(b, "{", 1);
		json_object_keylen_foreach((json_t *)json, key, klen, v) {
			if (!first)
				leap_buf_add(b, ",", 1);
			first = 0;
			append_string(b, key, klen);
			leap_buf_add(b, ":", 1);
			if (leap_json_append(b, v))
				return -1;
		}
		leap_buf_add(b, "}", 1);
		return 0;
	case JSON_ARRAY:
		leap_buf_add(b, "[", 1);
		json_array_foreach(json, i, v) {
			if (i)
				leap_buf_add(b, ",", 1);
			if (leap_json_append(b, v))
				return -1;
		}
		leap_buf_add(b, "]", 1);
		return 0;
	case JSON_STRING:
		append_string(b, json_string_value(json), json_string_length(json));
		return 0;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(json));
		leap_buf_adds(b, num);
		return 0;
	case JSON_REAL:
		return leap_json_append_real(b, json_real_value(json));
	case JSON_TRUE:
		leap_buf_add(b, "true", 4);
		return 0;
	case JSON_FALSE:
		leap_buf_add(b, "false", 5);
		return 0;
	case JSON_NULL:
		leap_buf_add(b, "null", 4);
		return 0;
	}
	return -1;
}

int leap_json_write_file(const json_t *json, const char *path)
{
	struct leap_buf b = {0};
	char *tmp = xasprintf("%s.%d", path, (int)getpid());
	int rc = leap_json_append(&b, json);
	if (!rc) {
		leap_buf_add(&b, "\n", 1);
		FILE *fp = fopen(tmp, "w");
		rc = !fp || fwrite(b.s, 1, b.len, fp) != b.len;
		if (fp && fclose(fp))
			rc = 1;
		if (!rc && rename(tmp, path))
			rc = 1;
	}
	int e = errno;
	unlink(tmp);
	errno = e;
	free(tmp);
	leap_buf_free(&b);
	return rc ? -1 : 0;
}

/* The output's reader has gone: end quietly (see leap_out.on_epipe). */
static noreturn void reader_gone(struct leap_out *out)
{
	if (out->on_epipe)
		out->on_epipe(out->epipe_arg);
	exit(LEAP_EXIT_OK);
}

static void write_bytes(struct leap_out *out, const char *p, size_t n)
{
	if (n && fwrite(p, 1, n, out->fp) != n) {
		if (errno == EPIPE)
			reader_gone(out);
		leap_die_errno("write error");
	}
}

static void end_line(struct leap_out *out)
{
	if (putc('\n', out->fp) == EOF) {
		if (errno == EPIPE)
			reader_gone(out);
		leap_die_errno("write error");
	}
	out->written++;
}

void leap_out_write(struct leap_out *out, const json_t *rec)
{
	leap_buf_reset(&out->buf);
	if (leap_json_append(&out->buf, rec))
		leap_die("cannot serialise a record");
	write_bytes(out, out->buf.s, out->buf.len);
	end_line(out);
}

void leap_out_raw(struct leap_out *out, const char *raw, size_t len)
{
	write_bytes(out, raw, len);
	end_line(out);
}

void leap_out_splice(struct leap_out *out, const char *raw, size_t len, json_t *rec, const json_t *add)
{
	const char *key;
	json_t *v;
	int clash = 0;
	json_object_foreach((json_t *)add, key, v) {
		if (json_object_get(rec, key))
			clash = 1;
	}
	size_t end = len;
	while (end && (raw[end - 1] == ' ' || raw[end - 1] == '\t'))
		end--;
	if (clash || !end || raw[end - 1] != '}' || raw[0] == '\xef') {
		json_object_update(rec, (json_t *)add);
		leap_out_write(out, rec);
		return;
	}
	leap_buf_reset(&out->buf);
	leap_buf_add(&out->buf, raw, end - 1);
	int first = json_object_size(rec) == 0;
	json_object_foreach((json_t *)add, key, v) {
		if (!first)
			leap_buf_add(&out->buf, ",", 1);
		first = 0;
		json_t *k = json_string(key);
		if (!k || leap_json_append(&out->buf, k) || (leap_buf_add(&out->buf, ":", 1), 0) ||
		    leap_json_append(&out->buf, v))
			leap_die("cannot serialise a record");
		json_decref(k);
	}
	leap_buf_add(&out->buf, "}", 1);
	write_bytes(out, out->buf.s, out->buf.len);
	end_line(out);
}

void leap_out_flush(struct leap_out *out)
{
	if (fflush(out->fp) == EOF) {
		if (errno == EPIPE)
			reader_gone(out);
		leap_die_errno("write error");
	}
}

int leap_out_close(struct leap_out *out)
{
	leap_buf_free(&out->buf);
	int bad = ferror(out->fp);
	if (fflush(out->fp) == EOF)
		bad = 1;
	if (bad && errno == EPIPE)
		return LEAP_EXIT_OK;
	if (out->fp == stdout ? fclose(stdout) == EOF : 0)
		bad = errno != EPIPE;
	if (bad) {
		leap_warn_errno("write error");
		return LEAP_EXIT_FATAL;
	}
	return LEAP_EXIT_OK;
}

const char *leap_get_str(const json_t *obj, const char *key, const char *dflt)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : dflt;
}

json_int_t leap_get_int(const json_t *obj, const char *key, json_int_t dflt)
{
	const json_t *v = json_object_get(obj, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d == floor(d) && fabs(d) < 9e15)
			return (json_int_t)d;
	}
	return dflt;
}

double leap_get_num(const json_t *obj, const char *key, double dflt)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : dflt;
}
