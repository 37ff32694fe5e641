/* util.c - exit codes, diagnostics, checked allocation and number parsing shared by all programs. */
/*
 * What every program shares and no module owns: the exit statuses, the "program: message"
 * form of every diagnostic, allocation that dies on exhaustion (so that no caller carries an
 * out-of-memory path it cannot test), strict number parsing (the whole string, in range, or an
 * error), and the shortest decimal form of a double that reads back to the same value, which
 * every record, cache entry and report is written with. Nothing here knows a record or a task.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

extern char *program_invocation_short_name;

int leap_filter_exit(int rc, int open_failed, long errors)
{
	if (rc)
		return rc;
	if (open_failed)
		return LEAP_EXIT_FATAL;
	return errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}

const char *leap_prog(void)
{
	return program_invocation_short_name;
}

static void vwarn(int errnum, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", leap_prog());
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

void leap_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(0, fmt, ap);
	va_end(ap);
}

void leap_warn_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vwarn(e, fmt, ap);
	va_end(ap);
}

noreturn void leap_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(0, fmt, ap);
	va_end(ap);
	exit(LEAP_EXIT_FATAL);
}

noreturn void leap_die_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vwarn(e, fmt, ap);
	va_end(ap);
	exit(LEAP_EXIT_FATAL);
}

static noreturn void oom(size_t n)
{
	leap_die("out of memory (allocating %zu bytes)", n);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void xgrow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap : 8;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			oom(SIZE_MAX);
		n *= 2;
	}
	*p = xrealloc(*p, n * size);
	*cap = n;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

void leap_argv_push(struct leap_argv *a, const char *s)
{
	xgrow((void **)&a->v, &a->cap, a->n + 2, sizeof(char *));
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

void leap_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		oom(0);
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void leap_buf_add(struct leap_buf *b, const void *data, size_t n)
{
	if (b->len + n + 1 < b->len)
		oom(SIZE_MAX);
	xgrow((void **)&b->s, &b->cap, b->len + n + 1, 1);
	if (n)
		memcpy(b->s + b->len, data, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void leap_buf_adds(struct leap_buf *b, const char *s)
{
	leap_buf_add(b, s, strlen(s));
}

void leap_buf_addf(struct leap_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	leap_buf_adds(b, s);
	free(s);
}

void leap_buf_reset(struct leap_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void leap_buf_free(struct leap_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

char *leap_buf_detach(struct leap_buf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

int leap_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int leap_parse_int(const char *s, int lo, int hi, int *out)
{
	int64_t v;
	if (leap_parse_i64(s, lo, hi, &v))
		return -1;
	*out = (int)v;
	return 0;
}

int leap_parse_double(const char *s, double lo, double hi, double *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int leap_parse_seconds(const char *s, double *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (!strcmp(end, "ms"))
		v /= 1000.0;
	else if (!strcmp(end, "m"))
		v *= 60.0;
	else if (!strcmp(end, "h"))
		v *= 3600.0;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (!(v > 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

int leap_parse_size(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -1;
	size_t n = strlen(s);
	int64_t mult = 1;
	char last = s[n - 1];
	if (last == 'B' || last == 'b')
		last = n > 1 ? s[--n - 1] : last;
	switch (last) {
	case 'k': case 'K': mult = 1024; break;
	case 'm': case 'M': mult = 1024 * 1024; break;
	case 'g': case 'G': mult = 1024LL * 1024 * 1024; break;
	case 't': case 'T': mult = 1024LL * 1024 * 1024 * 1024; break;
	default: mult = 1;
	}
	char *num = xstrndup(s, mult > 1 ? n - 1 : n);
	int64_t v;
	int rc = leap_parse_i64(num, 0, INT64_MAX / mult, &v);
	free(num);
	if (rc)
		return -1;
	*out = v * mult;
	return 0;
}

/* Writes the decimal digits dig[0..n) times 10^(x - n + 1) (one digit before the point) with
 * its sign in %g's style: fixed notation for exponents from -4 to 15, else d.ddde+XX. */
static void render_g(char *buf, int neg, const char *dig, int n, int x)
{
	while (n > 1 && dig[n - 1] == '0')
		n--;
	char *p = buf;
	if (neg)
		*p++ = '-';
	if (x < -4 || x >= 16) {
		*p++ = dig[0];
		if (n > 1) {
			*p++ = '.';
			memcpy(p, dig + 1, (size_t)n - 1);
			p += n - 1;
		}
		char ex[16];
		snprintf(ex, sizeof ex, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
		memcpy(p, ex, strlen(ex) + 1);
		return;
	}
	if (x < 0) {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -x - 1; i++)
			*p++ = '0';
		memcpy(p, dig, (size_t)n);
		p += n;
	} else {
		for (int i = 0; i <= x; i++)
			*p++ = i < n ? dig[i] : '0';
		if (n > x + 1) {
			*p++ = '.';
			memcpy(p, dig + x + 1, (size_t)(n - x - 1));
			p += n - x - 1;
		}
	}
	*p = '\0';
}

/* At a power of two the doubles around v are not evenly spaced, and the 16-digit decimal
 * nearest v may fall outside v's rounding interval on the narrow side while its neighbour on
 * the wide side reads back to v (2^-24: 5.960464477539063e-08, where %.16g gives ...062e-08).
 * Writes that neighbour and returns 1 when it reads back to v. */
static int neighbour16(char buf[LEAP_DOUBLE_BUF], double v)
{
	char e[40], dig[18];
	snprintf(e, sizeof e, "%.15e", fabs(v));
	int n = 0;
	const char *p = e;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && n < 16)
			dig[n++] = *p;
	if (n != 16 || *p != 'e')
		return 0;
	int x = (int)strtol(p + 1, NULL, 10);
	int up = strtod(e, NULL) < fabs(v);
	int i = 15;
	if (up) {
		while (i >= 0 && dig[i] == '9')
			dig[i--] = '0';
		if (i < 0) { /* 9.99...9 + 1 ulp = 10.00...0 */
			dig[0] = '1';
			x++;
		} else {
			dig[i]++;
		}
	} else {
		while (i >= 0 && dig[i] == '0')
			dig[i--] = '9';
		if (i < 0)
			return 0;
		dig[i]--;
		if (dig[0] == '0') { /* 1.00...0 - 1 ulp = 0.99...9: one digit more of 9 */
			memmove(dig, dig + 1, 15);
			dig[15] = '9';
			x--;
		}
	}
	render_g(buf, v < 0, dig, 16, x);
	return strtod(buf, NULL) == v;
}

char *leap_fmt_double(char buf[LEAP_DOUBLE_BUF], double v)
{
	/* %.15g is exact for every decimal of up to 15 digits (DBL_DIG), and %g drops trailing
	 * zeros, so the first precision that reads back is the shortest; 17 always does. */
	int prec = fabs(v) < DBL_MIN ? 1 : 15; /* subnormals carry fewer digits */
	for (; prec <= 17; prec++) {
		snprintf(buf, LEAP_DOUBLE_BUF, "%.*g", prec, v);
		if (prec == 17 || !isfinite(v) || strtod(buf, NULL) == v)
			break;
		if (prec == 16 && neighbour16(buf, v))
			break;
	}
	return buf;
}

double leap_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void leap_fill(void *p, uint64_t n, const void *pattern, uint32_t elsize)
{
	unsigned char *b = p;
	if (!elsize || n < elsize)
		return;
	memcpy(b, pattern, elsize);
	uint64_t done = elsize;
	while (done < n) {
		uint64_t k = done < n - done ? done : n - done;
		memcpy(b + done, b, (size_t)k);
		done += k;
	}
}

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	unsigned cp = c & (0x3f >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void leap_utf8_sanitize(struct leap_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;
	while (i < n) {
		size_t k = utf8_seq(p + i, n - i);
		if (k) {
			i += k;
			continue;
		}
		leap_buf_add(b, s + start, i - start);
		leap_buf_add(b, "\xef\xbf\xbd", 3);
		i++;
		start = i;
	}
	leap_buf_add(b, s + start, n - start);
}

void leap_text_escape(struct leap_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;
	while (i < n) {
		size_t k = utf8_seq(p + i, n - i);
		int ctl = k == 1 && ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') || p[i] == 0x7f);
		if (k && !ctl) {
			i += k;
			continue;
		}
		leap_buf_add(b, s + start, i - start);
		leap_buf_addf(b, "\\x%02x", p[i]);
		i++;
		start = i;
	}
	leap_buf_add(b, s + start, n - start);
}

int leap_fp_is_dir(FILE *fp)
{
	struct stat st;
	if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return 1;
	}
	return 0;
}

char *leap_exe_dir(void)
{
	size_t cap = 256;
	for (;;) {
		char *p = xmalloc(cap);
		ssize_t n = readlink("/proc/self/exe", p, cap);
		if (n < 0) {
			free(p);
			return NULL;
		}
		if ((size_t)n < cap) {
			p[n] = '\0';
			char *slash = strrchr(p, '/');
			if (!slash) {
				free(p);
				return NULL;
			}
			*slash = '\0';
			return p;
		}
		free(p);
		cap *= 2;
	}
}

void leap_freep(void *pp)
{
	free(*(void **)pp);
}
