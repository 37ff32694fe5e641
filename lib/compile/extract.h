/* extract.h - find the candidate's source code in an LLM completion (fenced blocks or plain code). */
#ifndef LEAP_EXTRACT_H
#define LEAP_EXTRACT_H

#include <stddef.h>

/* What was found. */
struct leap_extract {
	char *code;        /* the source, newly allocated; NULL when there is none */
	char *message;     /* when code is NULL: why, in words a model can act on (newly allocated) */
	const char *how;   /* "fence", "unterminated-fence" or "plain" (static; NULL without code) */
	int blocks;        /* fenced code blocks seen (of any language) */
	int first_line;    /* 1-based line of the completion where the code starts */
};

/*
 * Extracts the candidate from `text` (len bytes, need not be NUL-terminated):
 *   - reasoning in <think>...</think> is skipped when code follows it;
 *   - fenced blocks (``` or ~~~, any info string except non-C languages such as python, bash,
 *     json or text) are candidates; an unterminated last fence runs to the end of the text;
 *   - among several, the block that defines `entry` (NAME(...) {) wins; if several do, the
 *     last; if none does, the last C/CUDA block;
 *   - without any fence, text that looks like C/CUDA source (from the first line that starts
 *     like code to the last line ending in '}' or ';') is taken as plain code.
 * `entry` may be NULL (no preference). Always fills *x; on no code, x->code is NULL and
 * x->message says why. Free with leap_extract_free.
 */
void leap_extract(const char *text, size_t len, const char *entry, struct leap_extract *x);

void leap_extract_free(struct leap_extract *x);

/* 1 if `code` (NUL-terminated) contains a definition of function `name`: the identifier,
 * outside comments and string literals, followed by a parenthesised list and then '{'. */
int leap_defines(const char *code, const char *name);

#endif
