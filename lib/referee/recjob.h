/* recjob.h - what leap-verify and leap-bench both do to a record: check it, schedule it, run it.
 *
 * The two programs take the same records through the same steps: a record carrying an error
 * passes through, one their stage does not apply to gets `status: skipped` with a reason, one
 * that names no artifact, no task or an unknown backend becomes an error record (the same
 * messages in both), and the rest is run in a sandbox on its backend's device, one child per
 * device at a time where the device must not be shared. Their sandbox settings start from
 * the same defaults. One module holds all of it, so that the two programs differ only in
 * what they run (a verification, a timing) and in their options. */
#ifndef LEAP_RECJOB_H
#define LEAP_RECJOB_H

#include <stdint.h>
#include <jansson.h>

#include "pool.h"
#include "task/task.h"
#include "verify.h"

/* The program a record job is for. */
enum leap_recjob_stage { LEAP_RECJOB_VERIFY, LEAP_RECJOB_BENCH };

/* Pool entry kinds (struct leap_pool_entry.kind, counted in running_kind). */
enum { LEAP_RECJOB_CPU = 0, LEAP_RECJOB_CUDA = 1 };

/* Sets *o to the stage's defaults, before its options are parsed: 4G of memory per sandbox
 * (leap_sandbox_fit_memory), 16M files, the default process limit, namespaces, CUDA device
 * 0; leap-verify 3 trials on 3 drawn cases within 30 s, a call within LEAP_VERIFY_SLOW times
 * the reference's time on its case plus LEAP_VERIFY_SLOW_FLOOR; leap-bench one trial per
 * check and a timeout left 0 (then --max-time + 30). */
void leap_recjob_defaults(struct leap_verify_opts *o, enum leap_recjob_stage s);

/* What a record asks for. */
enum leap_recjob_what {
	LEAP_RECJOB_RAW,  /* it carries an error: written as read */
	LEAP_RECJOB_SKIP, /* the stage does not apply: add j->add (the stage's skipped status) */
	LEAP_RECJOB_FAIL, /* it cannot be run: j->err (a new message) makes it an error record */
	LEAP_RECJOB_RUN,  /* run it: j->t, j->b, j->artifact and j->kind say what and where */
};

struct leap_recjob {
	const struct leap_task *t;
	enum leap_backend b;
	const char *artifact; /* compile.artifact (the record's string) */
	int kind;             /* LEAP_RECJOB_CPU or LEAP_RECJOB_CUDA */
	json_t *add;          /* SKIP: the fields to add (new reference) */
	char *err;            /* FAIL: new string */
};

/* Decides what record rec asks of stage s: leap-verify skips a record that did not compile,
 * leap-bench one that did not pass; the task comes from `suite`; the backend is the record's
 * (default cuda). A cuda record's first use of the GPU is checked here, before any worker
 * (leap_gpu_first_use on v: a too old driver ends the run). */
enum leap_recjob_what leap_recjob_classify(json_t *rec, enum leap_recjob_stage s, struct leap_suite *suite,
					   struct leap_verifier *v, struct leap_recjob *j);

/* Device scheduling: collects finished workers of pool p until a slot is free and, when
 * `alone`, no other entry of `kind` runs (a device one child uses at a time); returns at
 * once on a signal (the caller checks leap_signal_caught). */
void leap_recjob_wait(struct leap_pool *p, int kind, int alone);

#endif
