/* splice.h - append members to a record's raw text without re-serialising it. */
#ifndef LEAP_SPLICE_H
#define LEAP_SPLICE_H

#include <stddef.h>
#include <jansson.h>

#include "core/util.h"

/* Appends to `b` the record whose raw text is raw[0..len) with the members of `add`
 * appended, and a newline, without re-serialising the raw text when it is safe: the raw text
 * is a JSON object ending in '}' and does not hold any key of `add`. Otherwise the text is
 * parsed, updated with `add` and re-serialised (keys keep their order; existing keys are
 * replaced in place). `rec`, when not NULL, is the parsed raw text and saves the parse.
 * Returns 0, or -1 when the raw text is not a JSON object (b is then unchanged). */
int leap_splice_line(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add);

/* Like leap_splice_line when the caller knows whether the raw text holds a key of `add`
 * (clash 1) or not (clash 0); clash -1 means unknown. */
int leap_splice_line_known(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add,
			   int clash);

struct leap_out;

/* Writes to `out` the record raw[0..len) with the members of `add` appended, as
 * leap_splice_line_known makes it (with `clash`) in the scratch buffer b. Dies when the raw
 * text is not an object: the programs splice only records they scanned. */
void leap_splice_out(struct leap_out *out, struct leap_buf *b, const char *raw, size_t len, const json_t *add,
		     int clash);

/* Appends to `b` the record raw[0..len) with `error` = {program, file, line, message}
 * appended (or replaced) and a newline. Returns 0, or -1 when the raw text is not an
 * object. */
int leap_splice_error(struct leap_buf *b, const char *raw, size_t len, const char *file, long line,
		      const char *message);

#endif
