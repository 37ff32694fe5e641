/* splice.c - append members to a record's raw text without re-serialising it. */
/*
 * A filter that adds a field must not change the fields it does not own: their number
 * spelling and key order are what the next stage and the user see. So the new members are
 * written after the raw text's last '}' as they are, and the record is parsed and
 * re-serialised only when that would be wrong (the raw text already holds one of the keys,
 * or does not end in '}'). may_hold_key() decides cheaply and errs towards parsing.
 */
#include <string.h>

#include "splice.h"
#include "core/jsonl.h"
#include "core/record.h"
#include "core/banned.h"

/* 1 when the raw text may hold the key (as a quoted string anywhere); cheap and conservative. */
static int may_hold_key(const char *raw, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *p = raw, *end = raw + len;
	while (p < end && (p = memchr(p, '"', (size_t)(end - p)))) {
		if ((size_t)(end - p) >= kl + 2 && !memcmp(p + 1, key, kl) && p[kl + 1] == '"')
			return 1;
		p++;
	}
	return 0;
}

int leap_splice_line(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add)
{
	return leap_splice_line_known(b, raw, len, rec, add, -1);
}

void leap_splice_out(struct leap_out *out, struct leap_buf *b, const char *raw, size_t len, const json_t *add,
		     int clash)
{
	leap_buf_reset(b);
	if (leap_splice_line_known(b, raw, len, NULL, add, clash))
		leap_die("internal error: a scanned record is not an object");
	leap_out_raw(out, b->s, b->len - 1);
}

int leap_splice_error(struct leap_buf *b, const char *raw, size_t len, const char *file, long line,
		      const char *message)
{
	json_t *add = json_pack("{s:{s:s,s:s,s:I,s:s}}", "error", "program", leap_prog(), "file", file, "line",
				(json_int_t)line, "message", message);
	if (!add)
		leap_die("out of memory");
	int r = leap_splice_line_known(b, raw, len, NULL, add, -1);
	json_decref(add);
	return r;
}

int leap_splice_line_known(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add,
			   int clash)
{
	const char *key;
	json_t *v;
	size_t start = 0, end = len;
	while (start < end && (raw[start] == ' ' || raw[start] == '\t'))
		start++;
	while (end > start && (raw[end - 1] == ' ' || raw[end - 1] == '\t'))
		end--;
	int fast = end - start >= 2 && raw[start] == '{' && raw[end - 1] == '}';
	if (fast && clash == 1)
		fast = 0;
	if (fast && clash == -1) {
		json_object_foreach((json_t *)add, key, v) {
			if (rec ? json_object_get(rec, key) != NULL : may_hold_key(raw, len, key))
				fast = 0;
		}
	}
	if (!fast) {
		json_t *own = NULL;
		if (!rec) {
			own = rec = json_loadb(raw, len, JSON_ALLOW_NUL, NULL);
			if (!json_is_object(rec)) {
				json_decref(own);
				return -1;
			}
		}
		json_object_update(rec, (json_t *)add);
		if (leap_json_append(b, rec))
			leap_die("cannot serialise a record");
		leap_buf_add(b, "\n", 1);
		json_decref(own);
		return 0;
	}
	/* Is the object empty? Only whitespace between the braces. */
	size_t i = start + 1;
	while (i < end - 1 && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r'))
		i++;
	int first = i == end - 1;
	leap_buf_add(b, raw + start, end - 1 - start);
	json_object_foreach((json_t *)add, key, v) {
		if (!first)
			leap_buf_add(b, ",", 1);
		first = 0;
		json_t *k = json_string(key);
		if (!k || leap_json_append(b, k))
			leap_die("cannot serialise a record");
		json_decref(k);
		leap_buf_add(b, ":", 1);
		if (leap_json_append(b, v))
			leap_die("cannot serialise a record");
	}
	leap_buf_add(b, "}\n", 2);
	return 0;
}
