/* util.c - exit codes, diagnostics, checked allocation and number parsing shared by all programs. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

extern char *program_invocation_short_name;

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

double leap_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
