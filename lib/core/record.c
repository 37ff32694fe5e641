/* record.c - the leap record (man/leap-record.5): field names, status values, type checks. */
/*
 * One table of the fields leap-record(5) defines (enum leap_field indexes it): the type and
 * writer its FIELDS section gives each, which tests/docs.bats checks the page against, and the
 * check from which leap-record says what is wrong in the terms of the format ("field 'status'
 * must be one of ..."); member.c finds the fields it scans by their rows. A record of a newer
 * record_version is refused rather than read by rules that may no longer hold. The status
 * names are in ranking order (enum leap_status), so that "better" is a comparison of numbers;
 * member.c reads them here too.
 */
#include <string.h>

#include "backend/backend.h"
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

/* leap-record(5)'s fields, indexed by enum leap_field (record.h): what FIELDS says of each and
 * how leap-record checks it. A new field is a row here and in the enum, its FIELDS entry, and
 * the code that writes or reads it. */
static const struct leap_record_field fields[LEAP_F_COUNT] = {
	[LEAP_F_TASK] = {"task", "string", "leap-prompt", LEAP_CHECK_STRING, "a string"},
	[LEAP_F_GROUP] = {"group", "string", "leap-prompt", LEAP_CHECK_STRING, "a string"},
	[LEAP_F_SAMPLE] = {"sample", "integer >= 0", "leap-prompt", LEAP_CHECK_NATURAL, "an integer >= 0"},
	[LEAP_F_TURN] = {"turn", "integer >= 1", "leap-prompt, leap-prune", LEAP_CHECK_POSINT, "an integer >= 1"},
	[LEAP_F_MESSAGES] = {"messages", "array", "leap-prompt, leap-prune", LEAP_CHECK_MESSAGES,
			     "an array of {role, content} objects with string values"},
	[LEAP_F_COMPLETION] = {"completion", "string", "the sampler", LEAP_CHECK_STRING, "a string"},
	[LEAP_F_TOKENS] = {"tokens", "integer >= 0", "the sampler, optional", LEAP_CHECK_NATURAL, "an integer >= 0"},
	[LEAP_F_BACKEND] = {"backend", "string", "leap-prompt", LEAP_CHECK_BACKEND, "\"cuda\" or \"cpu\""},
	[LEAP_F_CODE] = {"code", "string", "leap-compile, or given", LEAP_CHECK_STRING, "a string"},
	[LEAP_F_COMPILE] = {"compile", "object", "leap-compile", LEAP_CHECK_OBJECT, "an object"},
	[LEAP_F_VERIFY] = {"verify", "object", "leap-verify", LEAP_CHECK_OBJECT, "an object"},
	[LEAP_F_BENCH] = {"bench", "object", "leap-bench", LEAP_CHECK_OBJECT, "an object"},
	[LEAP_F_STATUS] = {"status", "string", "each stage", LEAP_CHECK_STATUS,
			   "one of no_code, compile_error, runtime_error, timeout, mismatch, pass"},
	[LEAP_F_PRUNE] = {"prune", "object", "leap-prune", LEAP_CHECK_OBJECT, "an object"},
	[LEAP_F_FEEDBACK] = {"feedback", "string", "leap-prune", LEAP_CHECK_STRING, "a string"},
	[LEAP_F_DCP] = {"dcp", "object", "leap-prune", LEAP_CHECK_OBJECT, "an object"},
	[LEAP_F_RANK] = {"rank", "object", "leap-rank", LEAP_CHECK_OBJECT, "an object"},
	[LEAP_F_REWARD] = {"reward", "number", "the user", LEAP_CHECK_NUMBER, "a number"},
	[LEAP_F_ADVANTAGE] = {"advantage", "number", "leap-advantage", LEAP_CHECK_NUMBER, "a number"},
	[LEAP_F_ERROR] = {"error", "object", "any program", LEAP_CHECK_OBJECT, "an object"},
	/* newer than this leap: refused below, after every field's type */
	[LEAP_F_RECORD_VERSION] = {"record_version", "integer >= 1", "leap-prompt", LEAP_CHECK_POSINT,
				   "an integer >= 1"},
	[LEAP_F_GROUP_SIZE] = {"group_size", "integer", "leap-prune", LEAP_CHECK_NONE, NULL},
	[LEAP_F_RAW] = {"raw", "string", "any program", LEAP_CHECK_NONE, NULL},
};

const struct leap_record_field *leap_record_fields(void)
{
	return fields;
}

const char *leap_field_name(enum leap_field f)
{
	return fields[f].name;
}

static int ok(const json_t *v, enum leap_field_check k)
{
	switch (k) {
	case LEAP_CHECK_NONE:
		return 1;
	case LEAP_CHECK_STRING:
		return json_is_string(v);
	case LEAP_CHECK_POSINT:
		return json_is_integer(v) && json_integer_value(v) >= 1;
	case LEAP_CHECK_NATURAL:
		return json_is_integer(v) && json_integer_value(v) >= 0;
	case LEAP_CHECK_NUMBER:
		return json_is_number(v);
	case LEAP_CHECK_OBJECT:
		return json_is_object(v);
	case LEAP_CHECK_BACKEND:
		return json_is_string(v) && leap_backend_find(json_string_value(v));
	case LEAP_CHECK_STATUS:
		return json_is_string(v) && leap_status_parse(json_string_value(v)) != LEAP_ST_NONE;
	case LEAP_CHECK_MESSAGES: {
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
	for (size_t i = 0; i < LEAP_F_COUNT; i++) {
		const json_t *v = json_object_get(rec, fields[i].name);
		if (v && !ok(v, fields[i].check))
			return xasprintf("field '%s' must be %s", fields[i].name, fields[i].want);
	}
	const json_t *ver = json_object_get(rec, fields[LEAP_F_RECORD_VERSION].name);
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
