/* fuzz_task.c - libFuzzer target: the task loader on arbitrary task.json text, prototypes, shims
 * and drawn cases. */
#include <stdint.h>
#include <stdlib.h>

#include "compile/shim.h"
#include "task/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!j)
		return 0;
	char *err = NULL;
	struct leap_task *t = leap_task_from_json(j, ".", "fuzz", &err);
	json_decref(j);
	free(err);
	if (!t)
		return 0;
	for (int b = 0; b < 2; b++) {
		free(leap_task_prototype(t, (enum leap_backend)b));
		free(leap_shim_source(t, (enum leap_backend)b));
		free(leap_shim_prelude(t, (enum leap_backend)b));
	}
	int64_t *sizes = calloc(t->nparams, sizeof(int64_t));
	char *e2 = NULL;
	if (sizes && leap_task_sizes(t, &t->bench, sizes, &e2) == 0) {
		int64_t v;
		leap_task_eval(t, t->bytes, &t->bench, &v);
	}
	free(e2);
	/* drawn cases: every one must have valid sizes */
	for (size_t k = 0; k < 3; k++) {
		struct leap_case c;
		if (leap_task_draw_case(t, (uint64_t)size * 7919u, k, &c))
			break;
		e2 = NULL;
		if (sizes && leap_task_sizes(t, &c, sizes, &e2))
			abort();
		free(c.vals);
	}
	struct leap_case s;
	if (leap_task_smallest_case(t, 0, &s) == 0)
		free(s.vals);
	free(leap_task_ranges_text(t));
	json_decref(leap_task_ranges_json(t));
	free(sizes);
	leap_task_free(t);
	return 0;
}
