/* scan.c - validate a JSON record line and find a few top-level fields without building it. */
/*
 * The group programs read every record but decide on a few top-level fields, so they do not
 * build a json_t per line: this scanner validates the line against the JSON grammar in one
 * pass (strings, escapes, UTF-8, numbers, nesting) and records where the wanted members are,
 * allocating nothing. A line it refuses is handed to jansson (member.c), which either names
 * the error or re-serialises the record for a second scan, so that what is an error stays
 * jansson's decision.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "core/banned.h"

#define MAX_DEPTH 2048

struct st {
	const char *p, *e;
	int depth;
	size_t klen[16]; /* strlen of the wanted keys (the first 16) */
	void (*fn)(struct leap_span name, struct leap_span value, void *arg); /* top-level members */
	void *arg;
};

/* Skips JSON white space. */
static void ws(struct st *s)
{
	while (s->p < s->e && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* The value of hex digit c, or -1. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads 4 hex digits at p (p + 4 <= e checked by the caller). Returns the code unit or -1. */
static long hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* Length of the valid UTF-8 sequence starting at p (a byte >= 0x80), or 0 when invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *e)
{
	unsigned c = p[0];
	size_t n;
	unsigned min;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, min = 0x10000;
	else
		return 0;
	if ((size_t)(e - p) < n)
		return 0;
	unsigned cp = c & (0x7F >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

/* 1 for the characters that may follow a backslash alone: \" \\ \/ \b \f \n \r \t. */
static const unsigned char simple_escape[256] = {
	['"'] = 1, ['\\'] = 1, ['/'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1, ['r'] = 1, ['t'] = 1,
};

/* Scans a string starting at the opening quote; on success s->p is past the closing quote,
 * *esc tells whether it held an escape. */
static int string(struct st *s, int *esc)
{
	const unsigned char *p = (const unsigned char *)s->p + 1, *e = (const unsigned char *)s->e;
	*esc = 0;
	for (;;) {
		/* the common case: plain ASCII, 16 (or 8) bytes at a time while no byte is a quote,
		 * a backslash, a control character or non-ASCII */
#ifdef __SSE2__
		while (e - p >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
			/* signed compare: bytes 0x00-0x1f and 0x80-0xff are both below 0x20 */
			__m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
								_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
						  _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
			int mask = _mm_movemask_epi8(sp);
			if (!mask) {
				p += 16;
				continue;
			}
			p += __builtin_ctz((unsigned)mask);
			/* the two common stops handled here, without leaving the 16-byte loop: the
			 * closing quote, and a one-character escape (code has a \n every line) */
			if (*p == '"') {
				s->p = (const char *)p + 1;
				return 0;
			}
			if (*p == '\\' && e - p >= 2 && simple_escape[p[1]]) {
				*esc = 1;
				p += 2;
				continue;
			}
			break;
		}
#endif
		while (e - p >= 8) {
			uint64_t w;
			memcpy(&w, p, 8);
			const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
			uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
			uint64_t special = ((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w;
			if (special & high)
				break;
			p += 8;
		}
		while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		if (p >= e)
			return -1;
		unsigned c = *p;
		if (c == '"') {
			s->p = (const char *)p + 1;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			*esc = 1;
			if (p + 1 >= e)
				return -1;
			char k = (char)p[1];
			if (k == 'u') {
				if (e - p < 6)
					return -1;
				long u = hex4((const char *)p + 2);
				if (u < 0)
					return -1;
				p += 6;
				if (u >= 0xDC00 && u <= 0xDFFF)
					return -1;
				if (u >= 0xD800 && u <= 0xDBFF) {
					if (e - p < 6 || p[0] != '\\' || p[1] != 'u')
						return -1;
					long lo = hex4((const char *)p + 2);
					if (lo < 0xDC00 || lo > 0xDFFF)
						return -1;
					p += 6;
				}
				continue;
			}
			switch (k) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				break;
			default:
				return -1;
			}
			p += 2;
			continue;
		}
		size_t n = utf8_len(p, e);
		if (!n)
			return -1;
		p += n;
	}
}

/* Scans a number by the JSON grammar (its range is not checked). Returns 0 or -1. */
static int number(struct st *s)
{
	const char *p = s->p, *e = s->e;
	if (p < e && *p == '-')
		p++;
	if (p >= e)
		return -1;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	else
		return -1;
	if (p < e && *p == '.') {
		p++;
		if (p >= e || *p < '0' || *p > '9')
			return -1;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9')
			return -1;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	s->p = p;
	return 0;
}

/* Scans the literal `word` (true, false, null). Returns 0 or -1. */
static int literal(struct st *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->e - s->p) < n || memcmp(s->p, word, n))
		return -1;
	s->p += n;
	return 0;
}

static int value(struct st *s);

/* 1 when the raw key text k[0..kn) (escaped when esc) names `key` (of length n). */
static int key_is(const char *k, size_t kn, int esc, const char *key, size_t n)
{
	if (!esc)
		return kn == n && !memcmp(k, key, n);
	struct leap_span v = {k - 1, kn + 2};
	return leap_span_str_eq(v, key);
}

/* 1 when the escaped member name k[0..kn) decodes to text holding a NUL byte. */
static int name_has_nul(const char *k, size_t kn)
{
	struct leap_buf b = {0};
	struct leap_span v = {k - 1, kn + 2};
	int nul = !leap_span_str(v, &b) && memchr(b.s, '\0', b.len) != NULL;
	leap_buf_free(&b);
	return nul;
}

typedef void member_fn(struct leap_span name, struct leap_span value, void *arg);

/* After an object's member or an array's element: 1 at ',' (the next one follows), 0 at
 * `close` (the container ends), -1 at anything else. */
static int after_item(struct st *s, char close)
{
	ws(s);
	if (s->p >= s->e)
		return -1;
	if (*s->p == ',') {
		s->p++;
		ws(s);
		return 1;
	}
	if (*s->p == close) {
		s->p++;
		s->depth--;
		return 0;
	}
	return -1;
}

/* Scans an object at '{'; at the top level (keys != NULL) records the wanted members, and
 * calls s->fn for each member when set. */
static int object(struct st *s, const char *const *keys, size_t nkeys, struct leap_span *spans)
{
	member_fn *fn = s->fn;
	s->fn = NULL; /* nested objects are not the top level */
	if (++s->depth > MAX_DEPTH)
		return -1;
	s->p++;
	ws(s);
	if (s->p < s->e && *s->p == '}') {
		s->p++;
		s->depth--;
		return 0;
	}
	for (;;) {
		if (s->p >= s->e || *s->p != '"')
			return -1;
		const char *k = s->p + 1;
		int esc;
		if (string(s, &esc))
			return -1;
		size_t kn = (size_t)(s->p - 1 - k);
		if (esc && name_has_nul(k, kn))
			return -1; /* as jansson: a member name cannot hold U+0000 */
		ws(s);
		if (s->p >= s->e || *s->p != ':')
			return -1;
		s->p++;
		ws(s);
		const char *v = s->p;
		if (value(s))
			return -1;
		for (size_t i = 0; i < nkeys; i++)
			if (key_is(k, kn, esc, keys[i], i < 16 ? s->klen[i] : strlen(keys[i]))) {
				spans[i].p = v;
				spans[i].n = (size_t)(s->p - v);
			}
		if (fn)
			fn((struct leap_span){k - 1, kn + 2}, (struct leap_span){v, (size_t)(s->p - v)}, s->arg);
		int r = after_item(s, '}');
		if (r <= 0)
			return r;
	}
}

/* Scans an array at '['. Returns 0 or -1. */
static int array(struct st *s)
{
	if (++s->depth > MAX_DEPTH)
		return -1;
	s->p++;
	ws(s);
	if (s->p < s->e && *s->p == ']') {
		s->p++;
		s->depth--;
		return 0;
	}
	for (;;) {
		if (value(s))
			return -1;
		int r = after_item(s, ']');
		if (r <= 0)
			return r;
	}
}

/* Scans any value. Returns 0 or -1. */
static int value(struct st *s)
{
	if (s->p >= s->e)
		return -1;
	int esc;
	switch (*s->p) {
	case '"':
		return string(s, &esc);
	case '{':
		return object(s, NULL, 0, NULL);
	case '[':
		return array(s);
	case 't':
		return literal(s, "true");
	case 'f':
		return literal(s, "false");
	case 'n':
		return literal(s, "null");
	default:
		return number(s);
	}
}

int leap_scan_object(const char *s, size_t n, const char *const *keys, size_t nkeys, struct leap_span *spans)
{
	for (size_t i = 0; i < nkeys; i++)
		spans[i] = (struct leap_span){NULL, 0};
	struct st st = {s, s + n, 0, {0}, NULL, NULL};
	for (size_t i = 0; i < nkeys && i < 16; i++)
		st.klen[i] = strlen(keys[i]);
	ws(&st);
	if (st.p >= st.e || *st.p != '{')
		return -1;
	if (object(&st, keys, nkeys, spans))
		return -1;
	ws(&st);
	return st.p == st.e ? 0 : -1;
}

int leap_scan_members(const char *s, size_t n, void (*fn)(struct leap_span name, struct leap_span value, void *arg),
		      void *arg)
{
	struct st st = {s, s + n, 0, {0}, fn, arg};
	ws(&st);
	if (st.p >= st.e || *st.p != '{')
		return -1;
	if (object(&st, NULL, 0, NULL))
		return -1;
	ws(&st);
	return st.p == st.e ? 0 : -1;
}

int leap_span_is_string(struct leap_span v)
{
	return v.p && v.n >= 2 && v.p[0] == '"';
}

int leap_span_is_object(struct leap_span v)
{
	return v.p && v.n >= 2 && v.p[0] == '{';
}

/* Appends code point cp as UTF-8. */
static void put_utf8(struct leap_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80)
		u[0] = (char)cp, n = 1;
	else if (cp < 0x800)
		u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
	else if (cp < 0x10000)
		u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
		u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
	else
		u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
	leap_buf_add(b, u, n);
}

int leap_span_str(struct leap_span v, struct leap_buf *b)
{
	leap_buf_reset(b);
	if (!leap_span_is_string(v))
		return -1;
	const char *p = v.p + 1, *e = v.p + v.n - 1;
	while (p < e) {
		const char *q = p;
		while (q < e && *q != '\\')
			q++;
		leap_buf_add(b, p, (size_t)(q - p));
		if (q >= e)
			break;
		char k = q[1];
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *f = k ? strchr(from, k) : NULL;
		if (f) {
			leap_buf_add(b, &to[f - from], 1);
			p = q + 2;
			continue;
		}
		/* \uXXXX, validated by the scan */
		unsigned long cp = (unsigned long)hex4(q + 2);
		p = q + 6;
		if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 6) {
			unsigned long lo = (unsigned long)hex4(p + 2);
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			p += 6;
		}
		put_utf8(b, cp);
	}
	leap_buf_add(b, "", 0); /* b->s is a string even when empty */
	return 0;
}

int leap_span_str_eq(struct leap_span v, const char *s)
{
	if (!leap_span_is_string(v))
		return 0;
	size_t n = strlen(s);
	if (!memchr(v.p, '\\', v.n))
		return v.n - 2 == n && !memcmp(v.p + 1, s, n);
	struct leap_buf b = {0};
	int eq = !leap_span_str(v, &b) && b.len == n && !memcmp(b.s, s, n);
	leap_buf_free(&b);
	return eq;
}

int leap_span_num(struct leap_span v, double *out)
{
	if (!v.p || !v.n || !(v.p[0] == '-' || (v.p[0] >= '0' && v.p[0] <= '9')))
		return -1;
	char tmp[64];
	if (v.n >= sizeof(tmp)) {
		char *big = xstrndup(v.p, v.n);
		double d = strtod(big, NULL);
		free(big);
		if (!isfinite(d))
			return -1;
		*out = d;
		return 0;
	}
	memcpy(tmp, v.p, v.n);
	tmp[v.n] = '\0';
	double d = strtod(tmp, NULL);
	if (!isfinite(d))
		return -1;
	*out = d;
	return 0;
}

int leap_span_int(struct leap_span v, long long *out)
{
	double d;
	if (leap_span_num(v, &d))
		return -1;
	if (!memchr(v.p, '.', v.n) && !memchr(v.p, 'e', v.n) && !memchr(v.p, 'E', v.n)) {
		char tmp[32];
		if (v.n >= sizeof(tmp))
			return -1;
		memcpy(tmp, v.p, v.n);
		tmp[v.n] = '\0';
		char *end;
		errno = 0;
		long long x = strtoll(tmp, &end, 10);
		if (*end || errno == ERANGE)
			return -1;
		*out = x;
		return 0;
	}
	if (d != floor(d) || fabs(d) >= 9e15)
		return -1;
	*out = (long long)d;
	return 0;
}

struct leap_span leap_span_member(struct leap_span v, const char *key)
{
	struct leap_span r = {NULL, 0};
	if (!leap_span_is_object(v))
		return r;
	const char *keys[1] = {key};
	if (leap_scan_object(v.p, v.n, keys, 1, &r))
		return (struct leap_span){NULL, 0};
	return r;
}
