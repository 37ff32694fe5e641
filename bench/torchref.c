/* torchref.c - what a module task's torch reference costs per case beyond torch's own forward
 * (issue 42): leap_torchref_case (lib/referee/torchref.c) timed on each case of a task, as
 * leap-verify calls it, in this process, on the reference process leap-verify starts.
 *
 *   build/bench/torchref TASK_DIR [ROUNDS]
 *
 * For each listed case of the task: three input sets drawn as leap-verify draws them (each its
 * own inputs and parameters), one warm request each, then ROUNDS (default 10) requests cycling
 * over the three sets (a new state every request, as leap-verify's are) and ROUNDS requests of
 * set 0 again and again (the same bytes each time). Each request's whole time (leap_torchref_case
 * on this side's clock) is set against the forward's own, as torch timed it in that request
 * (one thread, float64, train mode: leap_torchref_forward_s), so the difference, what leap and
 * the process add, is free of the forward's own noise on a loaded machine. Prints a line a case
 * and kind of round: the input bytes sent, the median whole and forward, and the least and the
 * median of the difference, in milliseconds. bench/torchref.md has the figures. A measurement,
 * not a test: it fails only when the reference does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "referee/case.h"
#include "referee/torchref.h"
#include "referee/verify.h"
#include "task/task.h"
#include "core/util.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof *x, cmp);
	return x[n / 2];
}

/* Times n requests of set (i * step) % 3 and prints their line. */
static void timed(struct leap_torchref *r, struct leap_case_data *d, int n, uint32_t step, const char *kind,
		  uint64_t bytes)
{
	double *whole = xcalloc((size_t)n, sizeof *whole), *fwd = xcalloc((size_t)n, sizeof *fwd),
	       *over = xcalloc((size_t)n, sizeof *over);
	char *err = NULL;
	for (int i = 0; i < n; i++) {
		double t0 = leap_now();
		if (leap_torchref_case(r, d, (uint32_t)(i * step) % 3, &err))
			leap_die("%s", err);
		whole[i] = (leap_now() - t0) * 1e3;
		fwd[i] = leap_torchref_forward_s(r) * 1e3;
		over[i] = whole[i] - fwd[i];
	}
	double m = median(over, n);
	if (kind)
		printf("%-34.34s %-5s %10llu %10.2f %10.2f %10.2f %10.2f\n", d->desc, kind, (unsigned long long)bytes,
		       median(whole, n), median(fwd, n), over[0], m);
	free(whole);
	free(fwd);
	free(over);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: torchref TASK_DIR [ROUNDS]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 1 || n > 10000) {
		fprintf(stderr, "torchref: ROUNDS in [1, 10000]\n");
		return 2;
	}
	char *err = NULL, *libexec = leap_libexec_dir();
	struct leap_task *t = leap_task_load(argv[1], &err);
	if (!t)
		leap_die("%s", err);
	if (!t->module)
		leap_die("%s: not a module task", argv[1]);
	struct leap_torchref *r = leap_torchref_start(t, libexec, &err);
	if (!r)
		leap_die("%s", err);
	printf("%-34s %-5s %10s %10s %10s %10s %10s\n", "case of task", "sets", "in bytes", "whole", "forward",
	       "added min", "added med");
	for (size_t ci = 0; ci < t->ncases; ci++) {
		struct leap_case_data d;
		if (leap_case_prepare(&d, t, &t->cases[ci], ci, 3, 1, &err))
			leap_die("%s", err);
		uint64_t bytes = 0;
		for (size_t p = 0; p < t->nparams; p++)
			if (d.rp[p].kind == LEAP_RUN_K_IN)
				bytes += d.rp[p].bytes;
		for (uint32_t k = 0; k < 3; k++)
			leap_case_inputs(&d, k, 1, k, NULL);
		timed(r, &d, 3, 1, NULL, bytes); /* warm: the model at these sizes made once */
		timed(r, &d, n, 1, "new", bytes);
		timed(r, &d, n, 0, "same", bytes);
		fflush(stdout);
		leap_case_free(&d);
	}
	leap_torchref_stop(r);
	leap_task_free(t);
	free(libexec);
	return 0;
}
