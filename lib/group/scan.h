/* scan.h - validate a JSON record line and find a few top-level fields without building it. */
#ifndef LEAP_SCAN_H
#define LEAP_SCAN_H

#include <stddef.h>

#include "core/util.h"

/* The text of one JSON value inside a line; p == NULL when the field is absent. */
struct leap_span {
	const char *p;
	size_t n;
};

/* Checks that s[0..n) is exactly one JSON object (RFC 8259 grammar: strings with valid
 * escapes, no raw control characters, valid UTF-8 and no lone surrogate escapes; numbers;
 * true/false/null; nesting up to 2048 levels), optionally surrounded by blanks, and sets
 * spans[i] to the value of the object's own member named keys[i] (the last one when a name
 * repeats; {NULL, 0} when there is none). Numbers are checked against the grammar, not
 * their range. Returns 0, or -1 when the text is not such an object (spans are then
 * unspecified). Allocates nothing. */
int leap_scan_object(const char *s, size_t n, const char *const *keys, size_t nkeys, struct leap_span *spans);

/* Calls fn(name, value, arg) for each member of the JSON object s[0..n), in order; `name` is
 * the member name's string text (quotes included), `value` its value's text. The whole text
 * is validated as leap_scan_object does. Returns 0, or -1 when it is not such an object (fn
 * may have been called for the members before the fault). */
int leap_scan_members(const char *s, size_t n, void (*fn)(struct leap_span name, struct leap_span value, void *arg),
		      void *arg);

/* The span's first byte names its type: '"' string, '{' object, '[' array, 't'/'f'
 * boolean, 'n' null, anything else a number. */
int leap_span_is_string(struct leap_span v);
int leap_span_is_object(struct leap_span v);

/* Decodes a string span (escapes resolved) into b, replacing b's content. Returns 0, or -1
 * (b emptied) when the span is absent or not a string. */
int leap_span_str(struct leap_span v, struct leap_buf *b);

/* 1 when the span is a string equal to the NUL-terminated `s` (escapes resolved), else 0. */
int leap_span_str_eq(struct leap_span v, const char *s);

/* Reads a number span. Returns 0 and sets *out, or -1 when absent, not a number or not
 * finite. */
int leap_span_num(struct leap_span v, double *out);

/* Reads an integer span (also a real with an integral value, as leap_get_int). Returns 0
 * and sets *out, or -1. */
int leap_span_int(struct leap_span v, long long *out);

/* Looks one member up inside an object span: leap_scan_object on the span with one key.
 * Returns the member's span, or {NULL, 0} when absent or when v is not an object. */
struct leap_span leap_span_member(struct leap_span v, const char *key);

#endif
