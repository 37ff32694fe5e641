/* fuzz_expr.c - libFuzzer target: size expressions compiled and evaluated on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "task/expr.h"
#include "core/util.h"

static int lookup(const char *name, size_t n, void *arg)
{
	(void)arg;
	if (n == 1 && (name[0] == 'n' || name[0] == 'm' || name[0] == 'k'))
		return name[0] == 'n' ? 0 : name[0] == 'm' ? 1 : 2;
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 24)
		return 0;
	int64_t vars[3];
	memcpy(vars, data, sizeof(vars));
	char *src = xstrndup((const char *)data + 24, size - 24);
	char *err = NULL;
	struct leap_expr *e = leap_expr_compile(src, lookup, NULL, &err);
	if (e) {
		int64_t v;
		char *err2 = NULL;
		leap_expr_eval(e, vars, &v, &err2);
		free(err2);
		leap_expr_free(e);
	}
	free(err);
	free(src);
	return 0;
}
