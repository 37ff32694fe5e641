/* record.h - the leap record (man/leap-record.5): field names, status values, type checks. */
#ifndef LEAP_RECORD_H
#define LEAP_RECORD_H

#include <jansson.h>

/* The version of leap-record(5) this leap writes: `record_version` of every record leap-prompt
 * makes (every other program passes it through). 1: leap 0.1, before the field existed. What
 * changed meaning from version to version is in NEWS.md. */
#define LEAP_RECORD_VERSION 2

/* Outcome of a record so far; each stage moves it forward (the order is the ranking order). */
enum leap_status {
	LEAP_ST_NONE = -1,
	LEAP_ST_NO_CODE = 0,
	LEAP_ST_COMPILE_ERROR,
	LEAP_ST_RUNTIME_ERROR,
	LEAP_ST_TIMEOUT,
	LEAP_ST_MISMATCH,
	LEAP_ST_PASS,
};

/* "no_code", "compile_error", ... ; NULL for LEAP_ST_NONE. */
const char *leap_status_name(enum leap_status s);
/* Parses a status name; LEAP_ST_NONE when unknown or NULL. */
enum leap_status leap_status_parse(const char *s);

/* Checks the fields of `rec` that leap owns against leap-record(5). Returns NULL when they
 * are well-typed, otherwise a new message naming the first bad field, e.g.
 * "field 'turn' must be an integer >= 1". Unknown fields are never an error. */
char *leap_record_check(const json_t *rec);

/* The error an earlier stage gave the record whose text is raw[0..len): a new string
 * "PROGRAM: MESSAGE", or NULL when the record carries no `error` object. For the filters that
 * scan records rather than parse them, to say why a record cannot take part. */
char *leap_record_error_of(const char *raw, size_t len);

#endif
