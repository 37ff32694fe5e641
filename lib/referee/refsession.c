/* refsession.c - what every part of leap-bench's referee opens a runner with. */
/*
 * The options of a session of the bencher (sealed inputs, its sandbox, frozen between blocks or
 * not), opening one on the verifier's current device, and the block length every part sizes
 * its blocks by. The loop (referee.c), the input pool (inpool.c) and the device's probes
 * (devmove.c) all start runners; they share these from below, so that no part calls back up
 * into another (tests/house.bats: no call circle).
 */
#include <string.h>

#include "referee_int.h"
#include "core/banned.h"

/* The block length aimed at: --block-ms, shorter when --max-time is small, so that a record
 * still gets --min-runs blocks of each side within its budget. */
double ref_block_target(const struct leap_bench_opts *o)
{
	double t = o->max_time * 1e3 / (4.0 * (double)(o->min_runs > 0 ? o->min_runs : 1));
	return t < o->block_ms ? (t > LEAP_BENCH_BLOCK_MS_LEAST ? t : LEAP_BENCH_BLOCK_MS_LEAST) : o->block_ms;
}

/* A session for the verifier's runners, on the device it has now: leap-bench moves v's device
 * from slot to slot, so the host is taken at each start. */
int ref_session_open(struct leap_verifier *v, struct leap_session *s, enum leap_backend b, const char *artifact,
			const struct leap_session_opts *o, char **err)
{
	struct leap_session_host h = leap_verifier_host(v);
	return leap_session_open(&h, s, b, artifact, o, err);
}

/* The options of t's baseline session: a module task's torch gets the exemptions torchbase.h
 * decides (leap_torch_session); every other baseline, like every candidate, the bencher's. */
void ref_base_session(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
		      struct leap_session_opts *so)
{
	if (t->module)
		leap_torch_session(B->torch, &B->sb, leap_backend_has(b, LEAP_BK_HOST), so);
}

/* Session options for case d with `calls` calls per block: sealed inputs, the bencher's
 * sandbox (cores, groups), frozen between blocks when `freeze`. */
struct leap_session_opts ref_session_opts(struct leap_bencher *B, const struct leap_case_data *d,
					     enum leap_backend b, uint32_t calls, int freeze)
{
	struct leap_session_opts so;
	memset(&so, 0, sizeof so);
	leap_session_fit(&so, d, calls);
	so.seal = 1;
	so.freeze = freeze ? B->o.freezer : LEAP_FREEZE_NONE;
	so.sb = &B->sb;
	so.lazy = leap_backend_has(b, LEAP_BK_OWNER); /* the host regions are staging there: fault in what is used */
	return so;
}
