/* fuzz_jsonl.c - libFuzzer target: the JSON Lines reader and writer on arbitrary bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in)
		return 0;
	FILE *out = fopen("/dev/null", "w");
	if (!out) {
		fclose(in);
		return 0;
	}
	/* leap_in reads stdin when given no files; hand it our stream as stdin. */
	FILE *saved = stdin;
	stdin = in;
	struct leap_in r;
	struct leap_out w;
	leap_in_init(&r, 0, NULL, out);
	leap_out_init(&w, out);
	json_t *rec;
	enum leap_read k;
	long n = 0;
	while ((k = leap_in_next(&r, &rec)) != LEAP_READ_EOF) {
		if (k == LEAP_READ_RECORD) {
			json_t *add = json_pack("{s:i}", "fuzz", 1);
			if (n++ % 2)
				leap_out_splice(&w, r.buf, r.len, rec, add);
			else
				leap_out_write(&w, rec);
			json_decref(add);
		} else {
			leap_out_write(&w, rec);
		}
		json_decref(rec);
	}
	leap_in_close(&r);
	leap_buf_free(&w.buf);
	stdin = saved;
	fclose(in);
	fclose(out);
	return 0;
}
