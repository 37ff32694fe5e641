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

/* The top-level fields leap-record(5) defines: each a row of record.c's table, indexed by
 * this enum, so that code which finds a field by name (member.c's scanner) spells it nowhere
 * but in that row. The order is the order leap_record_check checks them in. */
enum leap_field {
	LEAP_F_TASK,
	LEAP_F_GROUP,
	LEAP_F_SAMPLE,
	LEAP_F_TURN,
	LEAP_F_MESSAGES,
	LEAP_F_COMPLETION,
	LEAP_F_TOKENS,
	LEAP_F_BACKEND,
	LEAP_F_CODE,
	LEAP_F_COMPILE,
	LEAP_F_VERIFY,
	LEAP_F_BENCH,
	LEAP_F_STATUS,
	LEAP_F_PRUNE,
	LEAP_F_FEEDBACK,
	LEAP_F_DCP,
	LEAP_F_RANK,
	LEAP_F_REWARD,
	LEAP_F_ADVANTAGE,
	LEAP_F_ERROR,
	LEAP_F_RECORD_VERSION,
	LEAP_F_GROUP_SIZE,
	LEAP_F_RAW,
	LEAP_F_COUNT
};

/* What leap_record_check asks of a field's value. */
enum leap_field_check {
	LEAP_CHECK_NONE,     /* none: leap-record has never checked it */
	LEAP_CHECK_STRING,
	LEAP_CHECK_POSINT,  /* an integer >= 1 */
	LEAP_CHECK_NATURAL, /* an integer >= 0 */
	LEAP_CHECK_NUMBER,
	LEAP_CHECK_OBJECT,
	LEAP_CHECK_MESSAGES, /* [{role, content}] with string values */
	LEAP_CHECK_BACKEND,  /* a backend's name (backend.h's table) */
	LEAP_CHECK_STATUS,   /* a status name */
};

/* One row of the table: the field as leap-record(5)'s FIELDS gives it ("NAME (TYPE; WRITER)",
 * which tests/docs.bats checks) and as leap-record checks it. */
struct leap_record_field {
	const char *name;
	const char *type;   /* "string", "integer >= 1", "object", ... */
	const char *writer; /* who writes it: "leap-prompt", "the sampler, optional", ... */
	enum leap_field_check check;
	const char *want;   /* the check's message: "field 'NAME' must be WANT" */
};

/* The table, LEAP_F_COUNT rows indexed by enum leap_field. */
const struct leap_record_field *leap_record_fields(void);
/* The name of field f ("group_size"). */
const char *leap_field_name(enum leap_field f);

/* Checks the fields of `rec` that leap owns against leap-record(5). Returns NULL when they
 * are well-typed, otherwise a new message naming the first bad field, e.g.
 * "field 'turn' must be an integer >= 1". Unknown fields are never an error. */
char *leap_record_check(const json_t *rec);

/* The error an earlier stage gave the record whose text is raw[0..len): a new string
 * "PROGRAM: MESSAGE", or NULL when the record carries no `error` object. For the filters that
 * scan records rather than parse them, to say why a record cannot take part. */
char *leap_record_error_of(const char *raw, size_t len);

#endif
