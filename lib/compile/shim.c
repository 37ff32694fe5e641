/* shim.c - generated glue between a candidate's entry point and the uniform artifact ABI (abi.h). */
/*
 * A candidate writes only the task's entry point, with the task's own prototype; the runner
 * knows only the uniform ABI of abi.h. The glue between them is generated from task.json, not
 * written per task: a prelude force-included before the candidate (the promised includes and
 * the prototype, so that another signature is a compile error in the candidate's own file) and
 * a shim that unpacks the argument slots and calls the entry point. The same text serves the
 * candidates (compile.c) and the trusted reference and baseline (build.c), so that all are
 * called alike.
 */
#include <stdlib.h>

#include "abi.h"
#include "shim.h"
#include "core/util.h"
#include "core/banned.h"

/* The includes of the prelude and the shim: <stdint.h>, then the backend's (cuda_runtime.h). */
static void includes(struct leap_buf *s, const struct leap_task *t, enum leap_backend b)
{
	leap_buf_adds(s, "#include <stdint.h>\n");
	if (leap_backend_of(b)->includes)
		leap_backend_of(b)->includes(s, t);
}

char *leap_shim_prelude(const struct leap_task *t, enum leap_backend b)
{
	struct leap_buf s = {0};
	leap_buf_addf(&s, "/* leap prelude for task %s (%s) */\n", t->id, leap_backend_name(b));
	includes(&s, t, b);
	char *proto = leap_task_prototype(t, b);
	leap_buf_addf(&s, "%s\n", proto);
	free(proto);
	return leap_buf_detach(&s);
}

char *leap_shim_source(const struct leap_task *t, enum leap_backend b)
{
	struct leap_buf s = {0};
	const char *ext = leap_backend_of(b)->linkage;
	leap_buf_addf(&s, "/* leap shim for task %s (%s), ABI %d */\n", t->id, leap_backend_name(b), LEAP_ABI_VERSION);
	includes(&s, t, b);
	char *proto = leap_task_prototype(t, b);
	leap_buf_addf(&s, "%s\n", proto);
	free(proto);
	leap_buf_addf(&s, "%sint leap_abi_version(void) { return %d; }\n", ext, LEAP_ABI_VERSION);
	leap_buf_addf(&s, "%sint leap_entry(void *const *args)\n{\n\t%s(", ext, t->entry);
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		const char *ct = leap_param_ctype(p, b);
		if (p->role == LEAP_ROLE_SCALAR)
			leap_buf_addf(&s, "%s*(const %s *)args[%zu]", i ? ", " : "", ct, i);
		else
			leap_buf_addf(&s, "%s(%s)args[%zu]", i ? ", " : "", ct, i);
	}
	leap_buf_addf(&s, ");\n%s}\n", leap_backend_of(b)->entry_return);
	return leap_buf_detach(&s);
}
