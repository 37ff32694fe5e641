/* taskproto.c - a task's C interface on a backend: the prototype, a parameter's C type, the bench case. */
/*
 * What a task looks like to a candidate depends on the backend (device or host pointers, the
 * 16-bit float types, extern "C", the size it is timed at), and the backend's row says how
 * (backend.h). These three live apart from task.c so that task.c, which the rows call (the
 * vendor libraries' names), never calls up into the table: no circle of calls
 * (tests/house.bats).
 */
#include <string.h>

#include "task.h"
#include "core/util.h"
#include "core/banned.h"

const char *leap_param_ctype(const struct leap_param *p, enum leap_backend b)
{
	if (p->role == LEAP_ROLE_SCALAR)
		return leap_type_ctype(p->type);
	return leap_backend_of(b)->ptr_types[p->type][p->role == LEAP_ROLE_IN];
}

char *leap_task_prototype(const struct leap_task *t, enum leap_backend b)
{
	struct leap_buf s = {0};
	leap_buf_addf(&s, "%svoid %s(", leap_backend_of(b)->linkage, t->entry);
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		const char *ct = leap_param_ctype(p, b);
		size_t n = strlen(ct);
		leap_buf_addf(&s, "%s%s%s%s", i ? ", " : "", ct, ct[n - 1] == '*' ? "" : " ", p->name);
	}
	leap_buf_adds(&s, ");");
	return leap_buf_detach(&s);
}

const struct leap_case *leap_task_bench_case(const struct leap_task *t, enum leap_backend b)
{
	return leap_backend_of(b)->flags & LEAP_BK_HOST ? &t->bench_cpu : &t->bench;
}
