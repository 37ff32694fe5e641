/* fuzz_diag.c - libFuzzer target: compiler output scrubbed, parsed into diagnostics and cut, as leap-compile does, with its invariants checked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/diag.h"
#include "core/util.h"

/* 1 when s[0..n) is valid UTF-8 (jansson takes it as a string). */
static int utf8_ok(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	json_decref(j);
	return j != NULL;
}

/* Checks what leap-compile relies on for diagnostics `d` parsed with limit `max`; aborts on a
 * violation. */
static void check_diags(const struct leap_diags *d, size_t max, int scrubbed)
{
	if (d->n > max)
		abort();
	for (size_t i = 0; i < d->n; i++) {
		const struct leap_diag *g = &d->v[i];
		if (!g->message || strlen(g->message) > 1024 || g->line < 0 || g->col < 0 || !g->severity)
			abort();
		if (strcmp(g->severity, "error") && strcmp(g->severity, "warning") && strcmp(g->severity, "note"))
			abort();
		if (g->line == 0 && g->col != 0)
			abort(); /* a column without a line */
		/* scrubbed logs are valid UTF-8, and so must every cut message be */
		if (scrubbed && (!utf8_ok(g->message, strlen(g->message)) || (g->where && !utf8_ok(g->where, strlen(g->where)))))
			abort();
	}
	json_t *j = leap_diags_json(d);
	if (!j || json_array_size(j) != d->n)
		abort();
	if (scrubbed)
		for (size_t i = 0; i < d->n; i++)
			if (!json_is_string(json_object_get(json_array_get(j, i), "message")))
				abort();
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	/* the first byte picks the diagnostic limit, as --max-diags would */
	size_t max = size ? (size_t)data[0] % 64 + 1 : 50;
	struct leap_diag_files fc = {"kernel.cu", "leap_prelude.h", "leap_shim.cu"};
	struct leap_diag_files fg = {"kernel.c", "leap_prelude.h", "leap_shim.c"};
	struct leap_diag_files fp = {NULL, "leap_prelude.h", NULL}; /* the shim build */

	/* the parser alone on raw bytes (it must not read outside them: a copy without a NUL) */
	char *raw = xmalloc(size ? size : 1);
	memcpy(raw, text, size);
	struct leap_diags d = {0};
	leap_diag_parse(raw, size, &fc, &d, max);
	check_diags(&d, max, 0);
	leap_diags_free(&d);
	free(raw);

	/* as leap-compile does: scrub the machine's paths, parse, keep a cut log */
	const char *dirs[] = {"/tmp/leap-compile.Ab12/j3", "/work/run", "/home/u/.cache", "/usr/local/cuda", "/home/u"};
	const char *repl[] = {"", "", "$LEAP_CACHE", "$CUDA_HOME", "~"};
	char *log = leap_log_scrub(text, size, dirs, repl, sizeof(dirs) / sizeof(dirs[0]));
	size_t len = strlen(log);
	if (!utf8_ok(log, len))
		abort();
	leap_diag_parse(log, len, &fg, &d, max);
	check_diags(&d, max, 1);
	leap_diags_free(&d);
	leap_diag_parse(log, len, &fp, &d, 1000);
	check_diags(&d, 1000, 1);
	leap_diags_free(&d);
	/* leap_diags_free leaves d reusable */
	leap_diag_parse(log, len, &fc, &d, max);
	check_diags(&d, max, 1);
	leap_diags_free(&d);

	/* the harness's names replaced: valid UTF-8 still, and a second pass changes nothing */
	char *named = leap_log_harness(log), *again = leap_log_harness(named);
	if (!utf8_ok(named, strlen(named)) || strcmp(named, again))
		abort();
	free(again);
	free(named);

	size_t cap = size > 1 ? (size_t)data[1] * 16 : 4096;
	char *cut = leap_log_cut(log, cap);
	size_t cl = strlen(cut);
	if (len <= cap && strcmp(cut, log))
		abort(); /* a log that fits is kept whole */
	if (cl > cap + 64 || !utf8_ok(cut, cl))
		abort(); /* at most `cap` bytes plus the markers, never a split UTF-8 sequence */
	free(cut);
	free(log);
	return 0;
}
