/* blockcost.c - what one block of leap-bench's referee costs beyond its calls, on cpu (issue 41):
 * the parts of leap_session_block (lib/sandbox/session.c) timed apart, on a trusted runner holding a
 * task's reference, with the freezer, sandbox and priority leap-bench itself uses.
 *
 *   build/bench/blockcost TASK [BLOCKS] [CALLS]
 *
 * Each round times, on the referee's clock: a thaw and a freeze with no go between them (what
 * the freezer costs), an empty block of one call (thaw, go, the runner's reply, freeze: the
 * whole fixed cost, what `calibrate` takes the least of), an empty block of CALLS calls (the
 * table's walk per call), and the go and reply of a session that is never frozen (the pipe's
 * round trip alone). Then, apart (up to 200 rounds), the host's part of a set (made in its
 * slot, its outputs compared) and an empty block right after a set was staged, as every real
 * block comes, and, to tell why that one costs more, after 10 ms idle, after a stage on one
 * thread and after 32 MiB of plain stores. Prints the least, the median, the 90th percentile and a robust spread
 * ((p75 - p25) / 1.349) of each in microseconds, and the median less the least (what
 * `calibrate` leaves in every real block). bench/blocks.md has what it gave and the table
 * derived from it (bench/blocktable.py). It is a measurement, not a test: it never fails on a
 * number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cli.h" /* before util.h, whose <stdnoreturn.h> redefines noreturn */
#include "referee/prio.h"
#include "referee/referee_int.h"
#include "sandbox/session.h"
#include "task/task.h"
#include "core/util.h"
#include "referee/verdict.h"
#include "task/unseen.h"
#include "referee/verify.h"

#define MAX_ROUNDS 10000

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Prints the least, median, p90 and robust spread of x[0..n) (ms), in microseconds. */
static void row(const char *what, double *x, int n)
{
	qsort(x, (size_t)n, sizeof *x, cmp);
	double q1 = x[n / 4], q3 = x[3 * n / 4];
	printf("%-44s %9.1f %9.1f %9.1f %9.1f %9.1f\n", what, x[0] * 1e3, x[n / 2] * 1e3, x[9 * n / 10] * 1e3,
	       (q3 - q1) / 1.349 * 1e3, (x[n / 2] - x[0]) * 1e3);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: blockcost TASK [BLOCKS] [CALLS]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 200;
	uint32_t k = argc > 3 ? (uint32_t)atoi(argv[3]) : 1024;
	if (n < 4 || n > MAX_ROUNDS || k < 1 || k > LEAP_RUN_MAX_CALLS) {
		fprintf(stderr, "blockcost: BLOCKS in [4, %d], CALLS in [1, %d]\n", MAX_ROUNDS, LEAP_RUN_MAX_CALLS);
		return 2;
	}
	struct leap_verify_opts o = {
		.trials = 1,
		.sb = {.timeout = 600, .mem_bytes = (uint64_t)LEAP_BENCH_MEMORY_GIB << 30,
		       .fsize_bytes = (uint64_t)LEAP_BENCH_FSIZE_MIB << 20, .namespaces = 1},
		.device = "0",
	};
	struct leap_bench_opts bo;
	memset(&bo, 0, sizeof bo);
	leap_bench_defaults(&bo);
	char *dir = leap_tasks_dir(NULL), *err = NULL;
	struct leap_suite suite;
	leap_suite_init(&suite, dir);
	struct leap_unseen_set hidden;
	leap_verify_setup(&o, NULL, dir, &hidden);
	struct leap_verifier v;
	leap_verifier_init(&v, &o);
	struct leap_bencher B;
	const struct leap_task *t = leap_suite_get(&suite, argv[1], &err);
	if (!t || leap_bencher_init(&B, &v, &bo, &err))
		leap_die("%s", err);
	enum leap_backend b = LEAP_BACKEND_CPU;
	char *art = ref_baseline_artifact(&B, t, b, &err);
	struct leap_case_data d;
	/* set 0 a base set, set 1 its donor; one slot */
	if (!art || leap_case_prepare(&d, t, leap_task_bench_case(t, b), 0, 2, 1, &err))
		leap_die("%s", err);
	leap_case_inputs_sets(&d, 1, 1);
	leap_case_donor(&d, 1, 2, 0, FRESH_EVERY);
	struct leap_session fz, nf; /* frozen between blocks, as leap-bench's; never frozen */
	struct leap_session_opts so = ref_session_opts(&B, &d, b, k, 1), sn = ref_session_opts(&B, &d, b, k, 0);
	if (ref_session_open(&v, &fz, b, art, &so, &err) != LEAP_SESS_OK ||
	    ref_session_open(&v, &nf, b, art, &sn, &err) != LEAP_SESS_OK)
		leap_die("cannot start the runners: %s", err ? err : fz.last.msg);
	struct leap_prio prio;
	int how = leap_prio_raise(&prio);
	uint32_t *slots = xcalloc(k, sizeof *slots); /* every call on slot 0: an empty block reads nothing */
	double *x[10];
	for (int i = 0; i < 10; i++)
		x[i] = xcalloc((size_t)n, sizeof *x[i]);
	for (int i = 0; i < n; i++) {
		struct leap_block bt;
		double t0 = leap_now();
		if (leap_sandbox_thaw(&fz.sb) || leap_sandbox_freeze(&fz.sb, 10))
			leap_die("the freezer failed");
		x[0][i] = (leap_now() - t0) * 1e3;
		/* the usage the freeze left: leap_session_block checks the child held still since */
		if (leap_sandbox_usage(&fz.sb, &fz.frozen_usage))
			fz.has_usage = 0;
		if (leap_session_block(&fz, &d, slots, 1, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an empty block failed: %s", fz.last.msg);
		x[1][i] = bt.ms;
		if (leap_session_block(&fz, &d, slots, k, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an empty block failed: %s", fz.last.msg);
		x[2][i] = bt.ms;
		if (leap_session_block(&nf, &d, slots, 1, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an unfrozen block failed: %s", nf.last.msg);
		x[3][i] = bt.ms;
	}
	/* the host's part of a set, apart (its memory traffic would slow the blocks after it): made
	 * in its slot (stage), then its outputs compared with the baseline's byte for byte, as
	 * `identical` does (here with a copy of them in the other session's slot) */
	int m = n < 200 ? n : 200;
	for (int i = 0; i < m; i++) {
		struct leap_case_recipe rc = {.slot = 0, .src = 0, .donor = 1, .seed = (uint64_t)i + 3};
		double t0 = leap_now();
		leap_session_derive(&fz, &d, &rc, 1, FRESH_EVERY, B.stage_threads);
		x[4][i] = (leap_now() - t0) * 1e3;
		int same = 1;
		for (size_t p = 0; p < t->nparams; p++)
			if (d.rp[p].kind == LEAP_RUN_K_OUT || d.rp[p].kind == LEAP_RUN_K_INOUT)
				memcpy(nf.arena + d.out[p], fz.arena + d.out[p], (size_t)d.rp[p].bytes);
		t0 = leap_now();
		same = leap_session_guards(&fz, &d, 0) < 0;
		for (size_t p = 0; p < t->nparams; p++)
			if (d.rp[p].kind == LEAP_RUN_K_OUT || d.rp[p].kind == LEAP_RUN_K_INOUT)
				same &= !memcmp(fz.arena + d.out[p], nf.arena + d.out[p], (size_t)d.rp[p].bytes);
		x[5][i] = (leap_now() - t0) * 1e3;
		/* an empty block right after a set was staged, as a real block comes */
		leap_session_derive(&fz, &d, &rc, 1, FRESH_EVERY, B.stage_threads);
		struct leap_block bt;
		if (leap_session_block(&fz, &d, slots, 1, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an empty block failed: %s", fz.last.msg);
		x[6][i] = bt.ms;
		/* the same after 10 ms idle (other processes run meanwhile), after a stage on this
		 * thread alone, and after 32 MiB of plain stores to memory the runner never reads */
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
		if (leap_session_block(&fz, &d, slots, 1, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an empty block failed: %s", fz.last.msg);
		x[7][i] = bt.ms;
		leap_session_derive(&fz, &d, &rc, 1, FRESH_EVERY, 1);
		if (leap_session_block(&fz, &d, slots, 1, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an empty block failed: %s", fz.last.msg);
		x[8][i] = bt.ms;
		memset(nf.arena + d.out[2], 1, (size_t)d.rp[2].bytes);
		memset(nf.arena + d.out[2], 2, (size_t)d.rp[2].bytes);
		if (leap_session_block(&fz, &d, slots, 1, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK)
			leap_die("an empty block failed: %s", fz.last.msg);
		x[9][i] = bt.ms;
		if (!same)
			leap_die("the copied outputs differ");
	}
	uint64_t in = 0, out = 0;
	for (size_t p = 0; p < t->nparams; p++) {
		if (d.rp[p].kind == LEAP_RUN_K_IN || d.rp[p].kind == LEAP_RUN_K_INOUT)
			in += d.rp[p].bytes;
		if (d.rp[p].kind == LEAP_RUN_K_OUT || d.rp[p].kind == LEAP_RUN_K_INOUT)
			out += d.rp[p].bytes;
	}
	leap_prio_restore(&prio);
	printf("blockcost: %s, %d rounds, %s, referee priority %s; microseconds:\n", t->id, n,
	       leap_bench_freezer_name(&B), how ? "raised" : "not raised");
	printf("%-44s %9s %9s %9s %9s %9s\n", "", "least", "median", "p90", "spread", "med-least");
	row("thaw + freeze (no go)", x[0], n);
	row("empty block of 1 call (what calibrate times)", x[1], n);
	char what[64];
	snprintf(what, sizeof what, "empty block of %u calls", k);
	row(what, x[2], n);
	row("go + reply, never frozen", x[3], n);
	double m1 = x[1][n / 2], mk = x[2][n / 2]; /* sorted by row() */
	printf("%-44s %9.3f (median of %u calls less median of 1, per call)\n", "per call of the table's walk",
	       (mk - m1) / (k > 1 ? k - 1 : 1) * 1e3, k);
	row("make a set (stage, inputs)", x[4], m);
	row("compare a set's outputs (guards, memcmp)", x[5], m);
	row("empty block of 1 call right after a stage", x[6], m);
	row("empty block of 1 call after 10 ms idle", x[7], m);
	row("... after a stage on one thread", x[8], m);
	row("... after 32 MiB of plain stores", x[9], m);
	printf("a set: %.1f MiB of inputs, %.1f MiB of outputs, made with %u threads: %.2f GB/s made, %.2f GB/s "
	       "compared (medians)\n", in / 1048576.0, out / 1048576.0, B.stage_threads, in / (x[4][m / 2] * 1e6),
	       out / (x[5][m / 2] * 1e6));
	leap_session_end(&fz, NULL, NULL, NULL, 0);
	leap_session_end(&nf, NULL, NULL, NULL, 0);
	for (int i = 0; i < 10; i++)
		free(x[i]);
	free(slots);
	leap_case_free(&d);
	free(art);
	leap_bencher_free(&B);
	leap_verifier_free(&v);
	leap_suite_free(&suite);
	leap_unseen_set_free(&hidden);
	free(dir);
	return 0;
}
