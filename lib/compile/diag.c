/* diag.c - compiler output (gcc, nvcc, ld, ptxas) as diagnostics on the candidate's own lines, and logs fit to show. */
/*
 * A model fixes what it is shown, in its own terms: so the compilers' logs (gcc, nvcc, ld,
 * ptxas) are parsed into diagnostics placed on lines of the candidate's source, with the
 * excerpt the compiler printed under each, and a message about leap's own files (the prelude,
 * the shim, a header) says which it is. Logs are read line by line with a rule per tool rather
 * than one regular expression, because nvcc puts a message's column two lines below it. A log
 * that is shown whole is first scrubbed of leap's temporary paths and cut at a UTF-8 boundary.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "core/util.h"
#include "core/banned.h"

#define MAX_MESSAGE 1024
#define MAX_EXCERPT 1024
#define MAX_EXCERPT_LINES 12

static void add(struct leap_diags *d, size_t max, int line, int col, const char *sev, const char *msg,
		size_t msglen, const char *where)
{
	if (d->n >= max)
		return;
	if (line <= 0)
		line = col = 0; /* "f:0:6:" names no line; a column alone would mean nothing */
	while (msglen && isspace((unsigned char)msg[msglen - 1]))
		msglen--;
	if (msglen > MAX_MESSAGE) {
		msglen = MAX_MESSAGE;
		while (msglen && ((unsigned char)msg[msglen] & 0xc0) == 0x80)
			msglen--; /* keep UTF-8 whole */
	}
	xgrow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v));
	struct leap_diag *g = &d->v[d->n++];
	g->line = line;
	g->col = col;
	g->severity = sev;
	g->message = xstrndup(msg, msglen);
	g->where = where ? xstrdup(where) : NULL;
	g->excerpt = NULL;
}

void leap_diags_free(struct leap_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].message);
		free(d->v[i].where);
		free(d->v[i].excerpt);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

json_t *leap_diags_json(const struct leap_diags *d)
{
	json_t *a = json_array();
	for (size_t i = 0; i < d->n; i++) {
		const struct leap_diag *g = &d->v[i];
		json_t *o = json_object();
		if (g->line > 0)
			json_object_set_new(o, "line", json_integer(g->line));
		if (g->col > 0)
			json_object_set_new(o, "col", json_integer(g->col));
		json_object_set_new(o, "severity", json_string(g->severity));
		json_object_set_new(o, "message", json_string(g->message));
		if (g->where)
			json_object_set_new(o, "where", json_string(g->where));
		if (g->excerpt)
			json_object_set_new(o, "excerpt", json_string(g->excerpt));
		json_array_append_new(a, o);
	}
	return a;
}

/* Maps a severity word at s[0..n) to its static name, or NULL. */
static const char *severity(const char *s, size_t n)
{
	static const struct {
		const char *word, *name;
	} map[] = {
		{"fatal error", "error"}, {"fatal", "error"}, {"error", "error"}, {"catastrophic error", "error"},
		{"warning", "warning"}, {"note", "note"}, {"remark", "note"},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t l = strlen(map[i].word);
		if (n >= l && !memcmp(s, map[i].word, l))
			return map[i].name;
	}
	return NULL;
}

/* What a file name refers to: NULL (the candidate), "prelude", "shim" or the name itself. */
static char *where_of(const struct leap_diag_files *f, const char *file, size_t n, int *is_candidate)
{
	*is_candidate = 0;
	if (n >= 2 && file[0] == '.' && file[1] == '/')
		file += 2, n -= 2;
	if (f->candidate && strlen(f->candidate) == n && !memcmp(file, f->candidate, n)) {
		*is_candidate = 1;
		return NULL;
	}
	if (f->prelude && strlen(f->prelude) == n && !memcmp(file, f->prelude, n))
		return xstrdup("prelude");
	if (f->shim && strlen(f->shim) == n && !memcmp(file, f->shim, n))
		return xstrdup("shim");
	return xstrndup(file, n);
}

/* Parses a decimal number at s[*i]; returns -1 when there is none. */
static long number(const char *s, size_t n, size_t *i)
{
	long v = 0;
	size_t k = *i;
	if (k >= n || !isdigit((unsigned char)s[k]))
		return -1;
	while (k < n && isdigit((unsigned char)s[k]) && v < 100000000)
		v = v * 10 + (s[k++] - '0');
	*i = k;
	return v;
}

/* gcc: FILE:LINE[:COL]: SEVERITY: MESSAGE. Returns 1 when the line had that form. */
static int parse_gcc(const char *s, size_t n, const struct leap_diag_files *f, struct leap_diags *d, size_t max)
{
	for (size_t c = 0; c < n; c++) {
		if (s[c] != ':')
			continue;
		if (c == 0 || c + 1 >= n || !isdigit((unsigned char)s[c + 1]))
			continue;
		size_t i = c + 1;
		long line = number(s, n, &i), col = 0;
		if (line < 0 || i >= n || s[i] != ':')
			continue;
		i++;
		if (i < n && isdigit((unsigned char)s[i])) {
			col = number(s, n, &i);
			if (i >= n || s[i] != ':')
				continue;
			i++;
		}
		while (i < n && s[i] == ' ')
			i++;
		const char *sev = severity(s + i, n - i);
		if (!sev)
			continue;
		while (i < n && s[i] != ':')
			i++;
		if (i >= n)
			continue;
		i++;
		while (i < n && s[i] == ' ')
			i++;
		int cand;
		char *where = where_of(f, s, c, &cand);
		add(d, max, cand ? (int)line : 0, cand ? (int)col : 0, sev, s + i, n - i, where);
		free(where);
		return 1;
	}
	return 0;
}

/* nvcc front end: FILE(LINE): SEVERITY[ #NNN-D]: MESSAGE, then the source line and a caret
 * line that give the column. `next`/`next2` are the two following lines (may be NULL). */
static int parse_nvcc(const char *s, size_t n, const char *next, size_t nn, const char *next2, size_t nn2,
		      const struct leap_diag_files *f, struct leap_diags *d, size_t max)
{
	const char *p = memchr(s, '(', n);
	if (!p || p == s)
		return 0;
	size_t i = (size_t)(p - s) + 1;
	long line = number(s, n, &i);
	if (line < 0 || i + 2 >= n || s[i] != ')' || s[i + 1] != ':')
		return 0;
	i += 2;
	while (i < n && s[i] == ' ')
		i++;
	const char *sev = severity(s + i, n - i);
	if (!sev)
		return 0;
	while (i < n && s[i] != ':')
		i++;
	if (i >= n)
		return 0;
	i++;
	while (i < n && s[i] == ' ')
		i++;
	int col = 0;
	if (next && next2 && nn2 > 0) {
		size_t k = 0;
		while (k < nn2 && next2[k] == ' ')
			k++;
		size_t caret = k;
		int only = k < nn2 && next2[k] == '^';
		for (k++; only && k < nn2; k++)
			if (!isspace((unsigned char)next2[k]))
				only = 0;
		if (only && caret >= 2 && nn >= 2 && next[0] == ' ' && next[1] == ' ')
			col = (int)(caret - 2 + 1); /* nvcc indents the quoted source by two spaces */
	}
	int cand;
	char *where = where_of(f, s, (size_t)(p - s), &cand);
	add(d, max, cand ? (int)line : 0, cand ? col : 0, sev, s + i, n - i, where);
	free(where);
	return 1;
}

/* Linker and tool lines: "... undefined reference to `x'", "multiple definition of", "ld:
 * cannot find", "ptxas error : ...", "ptxas FILE, line N; error : ...", "ptxas fatal : ...",
 * "nvlink error : ...", "cc1: out of memory ...". */
static int parse_tool(const char *s, size_t n, struct leap_diags *d, size_t max)
{
	static const char *const link_keys[] = {"undefined reference to", "multiple definition of",
						 "cannot find -l", "relocation "};
	for (size_t k = 0; k < sizeof(link_keys) / sizeof(link_keys[0]); k++) {
		size_t l = strlen(link_keys[k]);
		for (size_t i = 0; i + l <= n; i++)
			if (!memcmp(s + i, link_keys[k], l)) {
				add(d, max, 0, 0, "error", s + i, n - i, "link");
				return 1;
			}
	}
	static const char *const tools[] = {"ptxas", "nvlink", "cicc", "cudafe++", "cc1plus", "cc1",
					    "collect2", "ld", "nvcc", "gcc", "g++", "cc", "fatbinary"};
	for (size_t t = 0; t < sizeof(tools) / sizeof(tools[0]); t++) {
		size_t l = strlen(tools[t]);
		if (n <= l || memcmp(s, tools[t], l) || (s[l] != ' ' && s[l] != ':'))
			continue;
		size_t i = l;
		while (i < n && s[i] == ' ')
			i++;
		const char *sev = NULL;
		if (i < n && s[i] == ':') {
			i++;
			while (i < n && s[i] == ' ')
				i++;
			sev = severity(s + i, n - i);
			if (sev) {
				while (i < n && s[i] != ':')
					i++;
				if (i < n)
					i++;
			} else {
				sev = "error";
			}
		} else {
			/* "ptxas FILE, line N; error   : ..." (N is a line of the generated PTX) */
			const char *semi = memchr(s + i, ';', n - i);
			if (semi && memmem(s + i, (size_t)(semi - (s + i)), ", line ", 7)) {
				i = (size_t)(semi - s) + 1;
				while (i < n && s[i] == ' ')
					i++;
			}
			sev = severity(s + i, n - i); /* "ptxas error   : ..." */
			if (!sev)
				return 0;
			while (i < n && s[i] != ':')
				i++;
			if (i < n)
				i++;
		}
		while (i < n && s[i] == ' ')
			i++;
		if (!strcmp(tools[t], "collect2") || i >= n || (!strcmp(tools[t], "ld") && memmem(s, n, ": in function", 13)))
			return 1; /* "ld returned 1 exit status" repeats what ld said */
		add(d, max, 0, 0, sev, s + i, n - i, tools[t]);
		return 1;
	}
	return 0;
}

void leap_diag_parse(const char *log, size_t len, const struct leap_diag_files *f, struct leap_diags *d, size_t max)
{
	/* Split into lines first: nvcc's column needs the two lines after a message. */
	size_t nl = 0, cap = 0;
	struct {
		const char *s;
		size_t n;
	} *lines = NULL;
	for (size_t p = 0; p < len;) {
		size_t e = p;
		while (e < len && log[e] != '\n')
			e++;
		size_t m = e;
		if (m > p && log[m - 1] == '\r')
			m--;
		xgrow((void **)&lines, &cap, nl + 1, sizeof(*lines));
		lines[nl].s = log + p;
		lines[nl].n = m - p;
		nl++;
		p = e + 1;
	}
	for (size_t i = 0; i < nl && d->n < max; i++) {
		const char *s = lines[i].s;
		size_t n = lines[i].n;
		if (!n || s[0] == ' ' || s[0] == '\t' || (n > 17 && !memcmp(s, "In file included", 16)))
			continue;
		size_t before = d->n;
		if (!parse_nvcc(s, n, i + 1 < nl ? lines[i + 1].s : NULL, i + 1 < nl ? lines[i + 1].n : 0,
				i + 2 < nl ? lines[i + 2].s : NULL, i + 2 < nl ? lines[i + 2].n : 0, f, d, max) &&
		    !parse_tool(s, n, d, max))
			parse_gcc(s, n, f, d, max);
		if (d->n == before)
			continue;
		/* the indented lines under the message are its excerpt */
		struct leap_buf x = {0};
		size_t k = i + 1, taken = 0;
		for (; k < nl && lines[k].n && (lines[k].s[0] == ' ' || lines[k].s[0] == '\t'); k++) {
			if (taken >= MAX_EXCERPT_LINES || x.len + lines[k].n + 1 > MAX_EXCERPT) {
				taken = MAX_EXCERPT_LINES; /* too long: the rest is dropped (not parsed either) */
				continue;
			}
			if (x.len)
				leap_buf_add(&x, "\n", 1);
			leap_buf_add(&x, lines[k].s, lines[k].n);
			taken++;
		}
		if (x.len)
			d->v[d->n - 1].excerpt = leap_buf_detach(&x);
		i = k - 1;
	}
	free(lines);
}

/* 1 if s[i] may start a path token (start of text or after a delimiter). */
static int path_start(const char *s, size_t i)
{
	if (i == 0)
		return 1;
	char c = s[i - 1];
	return c == ' ' || c == '\t' || c == '\n' || c == '"' || c == '\'' || c == '`' || c == '(' || c == '<' ||
	       c == '=' || c == ',' || c == ':' || c == '[';
}

static int path_char(char c)
{
	return c && !isspace((unsigned char)c) && c != '"' && c != '\'' && c != '`' && c != ')' && c != '>' &&
	       c != ':' && c != ',' && c != ']';
}

char *leap_log_scrub(const char *log, size_t len, const char *const *dirs, const char *const *repl, size_t ndirs)
{
	struct leap_buf b = {0};
	leap_buf_add(&b, "", 0);
	for (size_t i = 0; i < len;) {
		int done = 0;
		for (size_t k = 0; k < ndirs && !done; k++) {
			size_t l = dirs[k] ? strlen(dirs[k]) : 0;
			if (l < 2 || i + l > len || memcmp(log + i, dirs[k], l))
				continue;
			if (i + l < len && log[i + l] == '/') {
				leap_buf_adds(&b, repl[k]);
				if (*repl[k])
					leap_buf_add(&b, "/", 1);
				i += l + 1;
				done = 1;
			} else if (i + l == len || !path_char(log[i + l])) {
				leap_buf_adds(&b, *repl[k] ? repl[k] : ".");
				i += l;
				done = 1;
			}
		}
		if (done)
			continue;
		if (len - i > 7 && !memcmp(log + i, "tmpxft_", 7)) {
			/* nvcc's temporaries: tmpxft_0000198c_00000000-18_leap_shim.o -> leap_shim.o */
			size_t j = i + 7;
			while (j < len && (isxdigit((unsigned char)log[j]) || log[j] == '_' || log[j] == '-'))
				j++;
			/* back up to just after the last "-N_" */
			size_t cut = i;
			for (size_t q = i + 7; q < j; q++)
				if (log[q] == '_' && q > i + 7 && isdigit((unsigned char)log[q - 1]))
					cut = q + 1;
			if (cut > i) {
				i = cut;
				continue;
			}
		}
		if (log[i] == '/' && path_start(log, i) && i + 1 < len && path_char(log[i + 1]) &&
		    !(len - i >= 5 && !memcmp(log + i, "/dev/", 5)) && !(len - i >= 6 && !memcmp(log + i, "/proc/", 6))) {
			size_t j = i, last = i;
			while (j < len && path_char(log[j])) {
				if (log[j] == '/')
					last = j;
				j++;
			}
			if (last + 1 < j) {
				i = last + 1; /* keep the last component */
				continue;
			}
		}
		if (!log[i])
			leap_buf_adds(&b, "\xef\xbf\xbd"); /* a NUL would end the C string and hide the rest */
		else
			leap_buf_add(&b, log + i, 1);
		i++;
	}
	struct leap_buf clean = {0};
	leap_utf8_sanitize(&clean, b.s, b.len);
	leap_buf_add(&clean, "", 0);
	leap_buf_free(&b);
	return leap_buf_detach(&clean);
}

/* Moves n back so that log[n] does not start inside a UTF-8 sequence. */
static size_t utf8_floor(const char *log, size_t n)
{
	while (n && ((unsigned char)log[n] & 0xc0) == 0x80)
		n--;
	return n;
}

char *leap_log_cut(const char *log, size_t max)
{
	size_t len = strlen(log);
	if (len <= max)
		return xstrdup(log);
	struct leap_buf b = {0};
	leap_buf_add(&b, "", 0);
	size_t start = 0;
	const char *err = strstr(log, "error");
	if (err && (size_t)(err - log) + 1024 > max && max >= 1024) {
		/* the first error would not fit: cut what comes before it */
		start = (size_t)(err - log);
		while (start && log[start - 1] != '\n')
			start--;
		leap_buf_addf(&b, "[leap: %zu bytes cut]\n", start);
	}
	size_t room = max > b.len ? max - b.len : 0;
	size_t end = start + room;
	if (end >= len) {
		end = len;
	} else {
		size_t e = end;
		while (e > start && log[e - 1] != '\n')
			e--;
		end = e > start ? e : utf8_floor(log, end);
	}
	leap_buf_add(&b, log + start, end - start);
	if (end < len) {
		if (b.len && b.s[b.len - 1] != '\n')
			leap_buf_add(&b, "\n", 1);
		leap_buf_addf(&b, "[leap: %zu bytes cut]\n", len - end);
	}
	return leap_buf_detach(&b);
}

/* 1 when s[0..n) is a token of the harness's own files: the shim's object "shim-<hex>.o" or a
 * name holding "leap_shim" (leap_shim.c, leap_shim.cudafe1.cpp, j1/leap_shim.c...). */
static int harness_file(const char *s, size_t n)
{
	if (n > 7 && !memcmp(s, "shim-", 5) && !memcmp(s + n - 2, ".o", 2)) {
		for (size_t i = 5; i < n - 2; i++)
			if (!isxdigit((unsigned char)s[i]))
				return 0;
		return 1;
	}
	return memmem(s, n, "leap_shim", 9) != NULL;
}

/* Appends line s[0..n) to b, the harness's names replaced: a "FILE:LOCATION: " prefix that
 * names a harness file is dropped (what follows is the linker's complaint), "FILE: in
 * function `leap_entry':" becomes what it means, and any other harness file or leap_entry
 * becomes "the harness". */
static void harness_line(struct leap_buf *b, const char *s, size_t n)
{
	static const char in_entry[] = ": in function `leap_entry':";
	size_t tok = 0;
	while (tok < n && s[tok] != ':' && s[tok] != ' ')
		tok++;
	if (tok < n && s[tok] == ':' && harness_file(s, tok)) {
		if (n - tok == sizeof in_entry - 1 && !memcmp(s + tok, in_entry, n - tok)) {
			leap_buf_adds(b, "in the harness's call of your function (the required prototype):");
			return;
		}
		size_t i = tok + 1; /* ":(.text+0x38): " or ":7: " */
		while (i < n && s[i] != ':' && s[i] != ' ')
			i++;
		if (i < n && s[i] == ':') {
			i++;
			while (i < n && s[i] == ' ')
				i++;
			leap_buf_adds(b, "  ");
			s += i;
			n -= i;
		}
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !isspace((unsigned char)s[j]) && !strchr(":`'\"()", s[j]))
			j++;
		if (j == i) {
			leap_buf_add(b, s + i, 1);
			i++;
			continue;
		}
		if (harness_file(s + i, j - i) || (j - i == 10 && !memcmp(s + i, "leap_entry", 10)))
			leap_buf_adds(b, "the harness");
		else
			leap_buf_add(b, s + i, j - i);
		i = j;
	}
}

char *leap_log_harness(const char *log)
{
	struct leap_buf b = {0};
	leap_buf_add(&b, "", 0);
	for (const char *p = log; *p;) {
		size_t n = strcspn(p, "\n");
		const char *s = p;
		/* "ld: shim-<hex>.o: in function `leap_entry':": the tool's name stays */
		if (n > 4 && !memcmp(s, "ld: ", 4)) {
			leap_buf_adds(&b, "ld: ");
			s += 4;
			n -= 4;
		}
		harness_line(&b, s, n);
		p = s + n;
		if (*p == '\n') {
			leap_buf_add(&b, "\n", 1);
			p++;
		}
	}
	return leap_buf_detach(&b);
}
