/* fuzz_scan.c - libFuzzer target: the record scanner against jansson, and the raw-text record writers. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "group/splice.h"
#include "core/jsonl.h"
#include "group/prune.h"
#include "group/scan.h"

/* 1 when jansson's refusal is only about a number's range, which the scanner does not check. */
static int range_only(const json_error_t *e)
{
	return strstr(e->text, "too big") || strstr(e->text, "overflow");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	/* one line, as leap_in hands it over */
	if (memchr(s, '\n', size) || memchr(s, '\0', size))
		return 0;
	static const char *const keys[] = {"group", "sample", "turn", "status", "bench"};
	struct leap_span sp[5];
	int ok = leap_scan_object(s, size, keys, 5, sp) == 0;
	json_error_t je;
	json_t *j = json_loadb(s, size, JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
	int jok = j && json_is_object(j);
	if (ok && !jok && !(j == NULL && range_only(&je)))
		abort(); /* the scanner accepted what jansson refuses */
	if (ok && jok) {
		/* the spans hold what jansson parsed */
		struct leap_buf b = {0};
		const json_t *g = json_object_get(j, "group");
		if (json_is_string(g) != leap_span_is_string(sp[0]))
			abort();
		if (json_is_string(g) &&
		    (leap_span_str(sp[0], &b) || b.len != json_string_length(g) || memcmp(b.s, json_string_value(g), b.len)))
			abort();
		leap_buf_free(&b);
		const json_t *t = json_object_get(j, "turn");
		long long v;
		if (json_is_integer(t) && (leap_span_int(sp[2], &v) || v != json_integer_value(t)))
			abort();
		/* the raw-text writers produce records jansson reads */
		json_t *add = json_pack("{s:{s:i}}", "rank", "wins", 1);
		struct leap_buf line = {0};
		if (leap_splice_line(&line, s, size, NULL, add) || !line.len)
			abort();
		json_t *back = json_loadb(line.s, line.len - 1, JSON_ALLOW_NUL, &je);
		if (!json_is_object(back) || !json_is_object(json_object_get(back, "rank")))
			abort();
		json_decref(back);
		leap_buf_reset(&line);
		struct leap_prune_opts o;
		leap_prune_defaults(&o);
		if (leap_next_turn_line(&line, s, size, 2, 1, 3, &o))
			abort();
		back = json_loadb(line.s, line.len, JSON_ALLOW_NUL, &je);
		if (!json_is_object(back) || json_integer_value(json_object_get(back, "turn")) != 2 ||
		    !json_is_array(json_object_get(back, "messages")) || json_object_get(back, "completion"))
			abort();
		json_decref(back);
		leap_buf_free(&line);
		json_decref(add);
	}
	json_decref(j);
	return 0;
}
