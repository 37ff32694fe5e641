/* recjob.c - what leap-verify and leap-bench both do to a record: check it, schedule it, run it. */
#include <stdlib.h>
#include <string.h>

#include "recjob.h" /* first: pool.h's cli.h comes before util.h, whose <stdnoreturn.h> redefines noreturn */
#include "core/jsonl.h"
#include "core/sig.h"
#include "tlock.h"
#include "torchref.h"
#include "verdict.h"
#include "core/util.h"
#include "core/banned.h"

void leap_recjob_defaults(struct leap_verify_opts *o, enum leap_recjob_stage s)
{
	memset(o, 0, sizeof(*o));
	o->sb = (struct leap_sandbox_opts){.mem_bytes = 4ull << 30, .fsize_bytes = 16ull << 20, .nproc = 0,
					   .namespaces = 1};
	o->device = "0";
	if (s == LEAP_RECJOB_VERIFY) {
		o->trials = 3;
		o->drawn = 3;
		o->sb.timeout = 30;
		o->slow = LEAP_VERIFY_SLOW;
		o->slow_floor = LEAP_VERIFY_SLOW_FLOOR;
	} else {
		o->trials = 1; /* every timed call is checked once */
		o->sb.timeout = 0;
		o->sb.mem_bytes = (uint64_t)LEAP_BENCH_MEMORY_GIB << 30; /* the timing's defaults: verdict.h */
		o->sb.fsize_bytes = (uint64_t)LEAP_BENCH_FSIZE_MIB << 20;
	}
}

/* The stage's skipped fields for rec, or NULL when the stage applies to it: leap-verify
 * needs a compiled artifact, leap-bench a passing candidate. */
static json_t *skipped(json_t *rec, enum leap_recjob_stage s)
{
	if (s == LEAP_RECJOB_VERIFY) {
		json_t *compile = json_object_get(rec, "compile");
		const char *cst = leap_get_str(compile, "status", NULL);
		if (cst && !strcmp(cst, "ok") && leap_get_str(compile, "artifact", NULL))
			return NULL;
		return json_pack("{s:{s:s,s:s}}", "verify", "status", "skipped", "message",
				 !compile ? "not compiled (no compile result)" : "did not compile");
	}
	const char *st = leap_get_str(rec, "status", NULL);
	if (st && !strcmp(st, "pass"))
		return NULL;
	return json_pack("{s:{s:s,s:s}}", "bench", "status", "skipped", "message",
			 st ? "not timed: the candidate did not pass" : "not timed: no status");
}

enum leap_recjob_what leap_recjob_classify(json_t *rec, enum leap_recjob_stage s, struct leap_suite *suite,
					   struct leap_verifier *v, struct leap_recjob *j)
{
	memset(j, 0, sizeof(*j));
	if (json_object_get(rec, "error"))
		return LEAP_RECJOB_RAW;
	if ((j->add = skipped(rec, s)))
		return LEAP_RECJOB_SKIP;
	j->artifact = leap_get_str(json_object_get(rec, "compile"), "artifact", NULL);
	const char *id = leap_get_str(rec, "task", NULL);
	j->b = leap_backend_record_default();
	const char *bname = leap_get_str(rec, "backend", leap_backend_name(j->b));
	if (!j->artifact)
		j->err = xstrdup("the record has no compile.artifact");
	else if (!id)
		j->err = xstrdup("the record has no task");
	else if (leap_backend_parse(bname, &j->b))
		j->err = xasprintf("unknown backend '%s'", bname);
	else
		j->t = leap_suite_get(suite, id, &j->err);
	if (!j->t)
		return LEAP_RECJOB_FAIL;
	char *why = NULL;
	if (s == LEAP_RECJOB_BENCH && j->t->module && !leap_torch_python(&why)) {
		/* a module task's baseline is torch (torchbase.h): without it, not timed, saying why */
		j->add = json_pack("{s:{s:s,s:s++}}", "bench", "status", "skipped", "message", "not timed: ", why, "");
		free(why);
		j->t = NULL;
		return LEAP_RECJOB_SKIP;
	}
	j->kind = leap_backend_has(j->b, LEAP_BK_HOST) ? LEAP_RECJOB_CPU : LEAP_RECJOB_CUDA;
	if (leap_backend_of(j->b)->first_use)
		leap_backend_of(j->b)->first_use(&v->gpu);
	return LEAP_RECJOB_RUN;
}

void leap_recjob_wait(struct leap_pool *p, int kind, int alone)
{
	while ((p->running == p->slots || (alone && p->running_kind[kind])) && !leap_signal_caught())
		leap_pool_collect(p, -1);
}
