/* extract.c - find the candidate's source code in an LLM completion (fenced blocks or plain code). */
/*
 * Completions come in every shape: reasoning before the answer, several fenced blocks (a test in
 * python, the kernel in cuda), an unterminated fence at the end of a cut answer, no fence at
 * all. The rules (extract.h) pick what a person would: the text after </think>, the block that
 * defines the entry point, else the last C/CUDA block, else plain text that looks like code.
 * Scanning is by hand, aware of comments and string literals, because a definition must be
 * told from a mention. When nothing is found, the message says why in words a model can act on.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "extract.h"
#include "core/util.h"
#include "core/banned.h"

/* One fenced block: the text of its body [body, body_end) and its info string's first word. */
struct block {
	size_t body, body_end;
	int line;        /* 1-based line of the first body line */
	int terminated;
	int code;        /* 1 unless the language is known not to be C/C++/CUDA */
	char lang[24];
};

/* Info-string words that name something other than C, C++ or CUDA source. */
static const char *const not_code[] = {
	"python", "py", "python3", "bash", "sh", "shell", "zsh", "console", "terminal", "text", "txt",
	"plaintext", "plain", "json", "jsonl", "yaml", "yml", "toml", "makefile", "make", "cmake",
	"diff", "output", "log", "markdown", "md", "ini", "xml", "html", "javascript", "js", "rust",
	"go", "java", "ptx", "asm", "sass", "latex", "tex", "math", "sql", "ruby", "perl", "lua",
};

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* Skips a comment or a string/char literal starting at s[i]; returns the index after it, or
 * i when s[i] starts none of them. */
static size_t skip_noise(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return i;
	if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
		while (i < n && s[i] != '\n')
			i++;
		return i;
	}
	if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
		i += 2;
		while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'))
			i++;
		return i + 1 < n ? i + 2 : n;
	}
	if (s[i] == '"' || s[i] == '\'') {
		char q = s[i++];
		while (i < n && s[i] != q && s[i] != '\n') {
			if (s[i] == '\\' && i + 1 < n)
				i++;
			i++;
		}
		return i < n ? i + 1 : n;
	}
	return i;
}

static size_t skip_space(const char *s, size_t n, size_t i)
{
	for (;;) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		size_t j = skip_noise(s, n, i);
		if (j == i || s[i] == '"' || s[i] == '\'')
			return i; /* (j != i implies i < n) */
		i = j;
	}
}

/* leap_defines on a byte range. */
static int defines(const char *s, size_t n, const char *name)
{
	size_t nl = strlen(name);
	if (!nl)
		return 0;
	for (size_t i = 0; i < n;) {
		size_t j = skip_noise(s, n, i);
		if (j != i) {
			i = j;
			continue;
		}
		if (!is_ident((unsigned char)s[i])) {
			i++;
			continue;
		}
		size_t start = i;
		while (i < n && is_ident((unsigned char)s[i]))
			i++;
		if (i - start != nl || memcmp(s + start, name, nl))
			continue;
		size_t k = skip_space(s, n, i);
		if (k >= n || s[k] != '(')
			continue;
		int depth = 0;
		while (k < n) {
			size_t m = skip_noise(s, n, k);
			if (m != k) {
				k = m;
				continue;
			}
			if (s[k] == '(')
				depth++;
			else if (s[k] == ')' && --depth == 0)
				break;
			k++;
		}
		if (k >= n)
			return 0;
		k = skip_space(s, n, k + 1);
		if (k < n && s[k] == '{')
			return 1;
	}
	return 0;
}

int leap_defines(const char *code, const char *name)
{
	return name && defines(code, strlen(code), name);
}

/* Length of the fence run at s[i] (3 or more '`' or '~'), or 0. */
static size_t fence_len(const char *s, size_t n, size_t i, char *ch)
{
	if (i >= n || (s[i] != '`' && s[i] != '~'))
		return 0;
	size_t k = i;
	while (k < n && s[k] == s[i])
		k++;
	if (k - i < 3)
		return 0;
	*ch = s[i];
	return k - i;
}

/* Finds the fenced blocks of s[0..n); returns their number, array in *out. */
static size_t find_blocks(const char *s, size_t n, struct block **out)
{
	struct block *v = NULL;
	size_t nv = 0, cap = 0;
	int open = 0, line = 0;
	char och = 0;
	size_t olen = 0;
	for (size_t p = 0; p < n;) {
		size_t e = p;
		while (e < n && s[e] != '\n')
			e++;
		line++;
		size_t i = p;
		while (i < e && (s[i] == ' ' || s[i] == '\t'))
			i++;
		char ch;
		size_t fl = fence_len(s, e, i, &ch);
		if (open) {
			size_t k = i + fl;
			while (k < e && isspace((unsigned char)s[k]))
				k++;
			if (fl && ch == och && fl >= olen && k == e) {
				v[nv - 1].body_end = p;
				v[nv - 1].terminated = 1;
				open = 0;
			}
		} else if (fl && !(ch == '`' && memchr(s + i + fl, '`', e - i - fl))) {
			xgrow((void **)&v, &cap, nv + 1, sizeof(*v));
			struct block *b = &v[nv++];
			memset(b, 0, sizeof(*b));
			size_t k = i + fl;
			while (k < e && (s[k] == ' ' || s[k] == '\t'))
				k++;
			size_t w = 0;
			while (k < e && !isspace((unsigned char)s[k]) && s[k] != '{' && w + 1 < sizeof(b->lang))
				b->lang[w++] = (char)tolower((unsigned char)s[k++]);
			b->lang[w] = '\0';
			b->code = 1;
			for (size_t j = 0; j < sizeof(not_code) / sizeof(not_code[0]); j++)
				if (!strcmp(b->lang, not_code[j]))
					b->code = 0;
			b->body = e < n ? e + 1 : n;
			b->body_end = n;
			b->line = line + 1;
			open = 1;
			och = ch;
			olen = fl;
		}
		p = e < n ? e + 1 : n;
	}
	*out = v;
	return nv;
}

static int starts_with_word(const char *s, size_t n, const char *w)
{
	size_t l = strlen(w);
	return n >= l && !memcmp(s, w, l) && (n == l || !is_ident((unsigned char)w[l - 1]) || !is_ident((unsigned char)s[l]));
}

/* 1 if the trimmed line s[0..n) starts the way C/CUDA source lines start. */
static int code_start(const char *s, size_t n)
{
	static const char *const starts[] = {
		"#include", "#define", "#pragma", "#if", "#ifndef", "#ifdef", "__global__", "__device__",
		"__host__", "__launch_bounds__", "extern", "static", "template", "typedef", "struct",
		"void", "int", "float", "double", "const", "inline", "namespace", "using", "//", "/*",
		"unsigned", "constexpr", "class", "size_t", "int64_t", "uint32_t", "long", "char",
		"__forceinline__", "__constant__", "__shared__", "enum", "union", "bool", "auto",
	};
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		if (starts_with_word(s, n, starts[i]))
			return 1;
	return 0;
}

/* Plain code: from the first line that starts like code to the last line ending in '}' or
 * ';' (or a preprocessor line). Returns 1 and sets [*b, *e) and *line when found. */
static int plain_code(const char *s, size_t n, const char *entry, size_t *b, size_t *e, int *line)
{
	size_t first = n, last = n;
	int line_no = 0, first_line = 0;
	for (size_t p = 0; p < n;) {
		size_t q = p;
		while (q < n && s[q] != '\n')
			q++;
		line_no++;
		size_t i = p, j = q;
		while (i < j && isspace((unsigned char)s[i]))
			i++;
		while (j > i && isspace((unsigned char)s[j - 1]))
			j--;
		if (first == n && i < j && code_start(s + i, j - i)) {
			first = p;
			first_line = line_no;
		}
		if (first != n && i < j && (s[j - 1] == '}' || s[j - 1] == ';' || s[i] == '#'))
			last = q;
		p = q < n ? q + 1 : n;
	}
	if (first == n || last == n || last <= first)
		return 0;
	const char *c = s + first;
	size_t cn = last - first;
	int has_entry = entry && *entry && defines(c, cn, entry);
	if (!has_entry && !(memchr(c, '{', cn) && memchr(c, ';', cn)))
		return 0;
	*b = first;
	*e = last;
	*line = first_line;
	return 1;
}

static void no_code(struct leap_extract *x, const char *entry, const char *fmt, const char *arg)
{
	char *why = xasprintf(fmt, arg);
	x->message = xasprintf("%s: reply with the complete source file in one fenced code block "
			       "(```cuda or ```c) that defines %s%s",
			       why, entry && *entry ? entry : "the entry point", entry && *entry ? "()" : "");
	free(why);
}

void leap_extract(const char *text, size_t len, const char *entry, struct leap_extract *x)
{
	memset(x, 0, sizeof(*x));
	const char *s = text;
	size_t n = len;
	int line_off = 0;

	/* Reasoning models: only what follows the reasoning is the answer. */
	size_t lead = 0;
	while (lead < n && isspace((unsigned char)s[lead]))
		lead++;
	if (n - lead >= 7 && !strncasecmp(s + lead, "<think>", 7)) {
		const char *close = NULL;
		for (size_t i = lead; i + 8 <= n; i++)
			if (s[i] == '<' && !strncasecmp(s + i, "</think>", 8))
				close = s + i;
		if (!close) {
			no_code(x, entry, "%s", "the answer ended inside <think> before any final answer");
			return;
		}
		for (const char *q = s; q < close + 8; q++)
			line_off += *q == '\n';
		n -= (size_t)(close + 8 - s);
		s = close + 8;
	}

	size_t k = 0;
	while (k < n && isspace((unsigned char)s[k]))
		k++;
	if (k == n) {
		no_code(x, entry, "%s", "the answer is empty");
		return;
	}

	struct block *v = NULL;
	size_t nv = find_blocks(s, n, &v);
	x->blocks = (int)nv;
	const struct block *pick = NULL, *last_code = NULL;
	for (size_t i = 0; i < nv; i++) {
		const struct block *b = &v[i];
		if (!b->code)
			continue;
		size_t j = b->body;
		while (j < b->body_end && isspace((unsigned char)s[j]))
			j++;
		if (j == b->body_end)
			continue; /* an empty block */
		last_code = b;
		if (entry && *entry && defines(s + b->body, b->body_end - b->body, entry))
			pick = b;
	}
	if (!pick)
		pick = last_code;
	if (pick) {
		size_t e = pick->body_end;
		if (pick->terminated && e > pick->body && s[e - 1] == '\n')
			e--; /* the newline before the closing fence belongs to the fence */
		x->code = xstrndup(s + pick->body, e - pick->body);
		x->how = pick->terminated ? "fence" : "unterminated-fence";
		x->first_line = pick->line + line_off;
	} else if (nv > 0) {
		struct leap_buf langs = {0};
		for (size_t i = 0; i < nv; i++)
			if (v[i].lang[0] && (!langs.s || !strstr(langs.s, v[i].lang)))
				leap_buf_addf(&langs, "%s%s", langs.len ? ", " : "", v[i].lang);
		if (langs.len)
			no_code(x, entry, "the answer's code blocks are %s, not C or CUDA source", langs.s);
		else
			no_code(x, entry, "%s", "the answer's code blocks are empty");
		leap_buf_free(&langs);
	} else {
		size_t b, e;
		int line;
		if (plain_code(s, n, entry, &b, &e, &line)) {
			x->code = xstrndup(s + b, e - b);
			x->how = "plain";
			x->first_line = line + line_off;
		} else {
			no_code(x, entry, "%s", "no code found in the answer");
		}
	}
	free(v);
}

void leap_extract_free(struct leap_extract *x)
{
	free(x->code);
	free(x->message);
	memset(x, 0, sizeof(*x));
}
