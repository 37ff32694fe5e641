/* record.c - the leap record (man/leap-record.5): field names, status values, type checks. */
/*
 * One table of the fields leap-record(5) defines and the type each must have, from which
 * leap-record checks a record and says what is wrong in the terms of the format ("field
 * 'status' must be one of ..."). A record of a newer record_version is refused rather than read
 * by rules that may no longer hold. The status names are in ranking order (enum leap_status),
 * so that "better" is a comparison of numbers.
 */
#include <string.h>

#include "backend.h"
#include "jsonl.h"
#include "record.h"
#include "util.h"
#include "banned.h"

static const char *const status_names[] = {"no_code", "compile_error", "runtime_error", "timeout", "mismatch", "pass"};

const char *leap_status_name(enum leap_status s)
{
	return s == LEAP_ST_NONE ? NULL : status_names[s];
}

enum leap_status leap_status_parse(const char *s)
{
	if (!s)
		return LEAP_ST_NONE;
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (!strcmp(s, status_names[i]))
			return (enum leap_status)i;
	return LEAP_ST_NONE;
}

enum kind { K_STRING, K_INT, K_POSINT, K_NATURAL, K_NUMBER, K_OBJECT, K_MESSAGES, K_BACKEND, K_STATUS };

static const struct {
	const char *name;
	enum kind kind;
	const char *want;
} fields[] = {
	{"task", K_STRING, "a string"},
	{"group", K_STRING, "a string"},
	{"sample", K_NATURAL, "an integer >= 0"},
	{"turn", K_POSINT, "an integer >= 1"},
	{"messages", K_MESSAGES, "an array of {role, content} objects with string values"},
	{"completion", K_STRING, "a string"},
	{"tokens", K_NATURAL, "an integer >= 0"},
	{"backend", K_BACKEND, "\"cuda\" or \"cpu\""},
	{"code", K_STRING, "a string"},
	{"compile", K_OBJECT, "an object"},
	{"verify", K_OBJECT, "an object"},
	{"bench", K_OBJECT, "an object"},
	{"status", K_STATUS, "one of no_code, compile_error, runtime_error, timeout, mismatch, pass"},
	{"prune", K_OBJECT, "an object"},
	{"feedback", K_STRING, "a string"},
	{"dcp", K_OBJECT, "an object"},
	{"rank", K_OBJECT, "an object"},
	{"reward", K_NUMBER, "a number"},
	{"advantage", K_NUMBER, "a number"},
	{"error", K_OBJECT, "an object"},
};

static int ok(const json_t *v, enum kind k)
{
	switch (k) {
	case K_STRING:
		return json_is_string(v);
	case K_INT:
		return json_is_integer(v);
	case K_POSINT:
		return json_is_integer(v) && json_integer_value(v) >= 1;
	case K_NATURAL:
		return json_is_integer(v) && json_integer_value(v) >= 0;
	case K_NUMBER:
		return json_is_number(v);
	case K_OBJECT:
		return json_is_object(v);
	case K_BACKEND:
		return json_is_string(v) && leap_backend_find(json_string_value(v));
	case K_STATUS:
		return json_is_string(v) && leap_status_parse(json_string_value(v)) != LEAP_ST_NONE;
	case K_MESSAGES: {
		if (!json_is_array(v))
			return 0;
		size_t i;
		json_t *m;
		json_array_foreach(v, i, m) {
			if (!json_is_object(m) || !json_is_string(json_object_get(m, "role")) ||
			    !json_is_string(json_object_get(m, "content")))
				return 0;
		}
		return 1;
	}
	}
	return 0;
}

/* The values of bench.status (leap-bench(1)): only ok carries a speedup a reward may use. */
static const char *const bench_statuses[] = {"ok",	      "noisy",	 "suspicious", "mismatch",
					     "runtime_error", "timeout", "no_device",  "skipped"};

char *leap_record_check(const json_t *rec)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const json_t *v = json_object_get(rec, fields[i].name);
		if (v && !ok(v, fields[i].kind))
			return xasprintf("field '%s' must be %s", fields[i].name, fields[i].want);
	}
	const json_t *ver = json_object_get(rec, "record_version");
	if (ver && !(json_is_integer(ver) && json_integer_value(ver) >= 1))
		return xstrdup("field 'record_version' must be an integer >= 1");
	if (ver && json_integer_value(ver) > LEAP_RECORD_VERSION)
		return xasprintf("field 'record_version' is %lld: a newer format than this leap's (%d); its fields may "
				 "mean what this leap cannot check (NEWS.md)", (long long)json_integer_value(ver),
				 LEAP_RECORD_VERSION);
	const json_t *ci = json_object_get(json_object_get(rec, "bench"), "speedup_ci");
	if (ci && !(json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
		    json_is_number(json_array_get(ci, 1)) &&
		    json_number_value(json_array_get(ci, 0)) <= json_number_value(json_array_get(ci, 1))))
		return xstrdup("field 'bench.speedup_ci' must be [lo, hi], two numbers with lo <= hi");
	const json_t *bs = json_object_get(json_object_get(rec, "bench"), "status");
	if (bs) {
		size_t i = 0, n = sizeof bench_statuses / sizeof bench_statuses[0];
		while (i < n && !(json_is_string(bs) && !strcmp(json_string_value(bs), bench_statuses[i])))
			i++;
		if (i == n)
			return xstrdup("field 'bench.status' must be one of ok, noisy, suspicious, mismatch, runtime_error, "
				       "timeout, no_device, skipped");
	}
	return NULL;
}

char *leap_record_error_of(const char *raw, size_t len)
{
	json_t *rec = json_loadb(raw, len, JSON_ALLOW_NUL, NULL);
	const json_t *e = json_object_get(rec, "error");
	char *msg = json_is_object(e) ? xasprintf("%s: %s", leap_get_str(e, "program", "?"), leap_get_str(e, "message", "?"))
				      : NULL;
	json_decref(rec);
	return msg;
}
