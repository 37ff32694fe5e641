/* fuzz_extract.c - libFuzzer target: code extraction, diagnostics parsing, log scrubbing and cutting on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/diag.h"
#include "compile/extract.h"
#include "core/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	/* extraction: any completion, with and without an entry point name */
	struct leap_extract x;
	leap_extract(text, size, "softmax", &x);
	if (x.code)
		(void)leap_defines(x.code, "softmax");
	leap_extract_free(&x);
	leap_extract(text, size, NULL, &x);
	leap_extract_free(&x);
	/* compiler output: scrub, parse, cut */
	const char *dirs[] = {"/tmp/leap-compile.X/j1", "/home/u"};
	const char *repl[] = {"", "~"};
	char *log = leap_log_scrub(text, size, dirs, repl, 2);
	struct leap_diags d = {0};
	struct leap_diag_files f = {"kernel.cu", "leap_prelude.h", "leap_shim.cu"};
	leap_diag_parse(log, strlen(log), &f, &d, 50);
	json_t *j = leap_diags_json(&d);
	json_decref(j);
	leap_diags_free(&d);
	char *cut = leap_log_cut(log, size % 2048);
	free(cut);
	free(log);
	return 0;
}
