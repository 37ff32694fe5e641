/* bench.c - what leap-bench's referee keeps outside a record: the statistics of timing samples
 * and the bencher's life. The statistics are plain functions of numbers (a median's interval
 * from order statistics, widened for serial correlation; the stopping rule that reads them is
 * lib/referee/verdict.c's) so that a test (tests/fixtures/leap-bench/coverage.c) can check their
 * coverage apart from any timing. The bencher is set up once per program (cores, cgroups, the
 * freezer it refuses to time without) and ended before a worker exits. How one record is timed, and why, is lib/referee/referee.c. */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "torchbase.h"
#include "core/util.h"
#include "core/banned.h"

/* qsort comparison of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void order_ci(const double *x, size_t n, double f, struct leap_stats *s);

void leap_stats(double *x, size_t n, struct leap_stats *s)
{
	memset(s, 0, sizeof *s);
	s->n = n;
	s->rel_ci = INFINITY;
	if (!n)
		return;
	qsort(x, n, sizeof *x, cmp_double);
	s->min = x[0];
	s->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	s->ci_lo = s->ci_hi = s->median;
	if (n >= 6)
		order_ci(x, n, 1, s);
}

/* The interval of the median from the order statistics of sorted x[0..n), n >= 6: ranks
 * n/2 -+ 0.98 * sqrt(n * f), where f >= 1 is how much serial correlation inflates the
 * variance of a count of samples below the median (1: independent samples). */
static void order_ci(const double *x, size_t n, double f, struct leap_stats *s)
{
	double half = 1.959964 * sqrt((double)n * f) / 2;
	long lo = (long)floor((double)n / 2 - half), hi = (long)ceil((double)n / 2 + half); /* 1-based ranks */
	if (lo < 1)
		lo = 1;
	if (hi > (long)n)
		hi = (long)n;
	s->ci_lo = x[lo - 1];
	s->ci_hi = x[hi - 1];
	s->rel_ci = s->median > 0 ? (s->ci_hi - s->ci_lo) / 2 / s->median : INFINITY;
}

void leap_stats_serial(const double *x, size_t n, struct leap_stats *s)
{
	double *sorted = xmalloc((n ? n : 1) * sizeof *sorted);
	if (n)
		memcpy(sorted, x, n * sizeof *sorted);
	leap_stats(sorted, n, s);
	if (n >= 6) {
		/* the lag-1 autocorrelation of "above the median", in time order */
		double p = 0, num = 0, den = 0;
		for (size_t i = 0; i < n; i++)
			p += x[i] > s->median;
		p /= (double)n;
		for (size_t i = 0; i < n; i++) {
			double a = (x[i] > s->median) - p;
			den += a * a;
			if (i + 1 < n)
				num += a * ((x[i + 1] > s->median) - p);
		}
		double rho = den > 0 ? num / den : 0;
		rho = rho < 0 ? 0 : rho > 0.6 ? 0.6 : rho;
		if (rho > 0)
			order_ci(sorted, n, (1 + rho) / (1 - rho), s);
	}
	free(sorted);
}

/* ---- set-up ---- */

int leap_bencher_init(struct leap_bencher *B, struct leap_verifier *v, const struct leap_bench_opts *o, char **err)
{
	memset(B, 0, sizeof *B);
	B->v = v;
	B->o = *o;
	B->ncpus = leap_cpus_parse(o->cpus, &B->cpus, err);
	if (B->ncpus < 0)
		return -1;
	leap_cgroups_detect(&B->cg, o->cgroup_version == 1 ? LEAP_CG_V1 : LEAP_CG_NONE);
	if (o->cgroup_version && B->cg.mode[LEAP_CG_FREEZER] != (enum leap_cg_mode)o->cgroup_version) {
		*err = xasprintf("no cgroup v%d freezer (%s)", o->cgroup_version, B->cg.note[0] ? B->cg.note : "the other version serves");
		return -1;
	}
	B->sb = v->o.sb;
	B->sb.cpus = &B->cpus;
	B->sb.cgroups = &B->cg;
	B->sb.cg_ctrl = (1u << LEAP_CG_CPUSET) | (1u << LEAP_CG_CPUACCT);
	leap_verifier_memory(v, &B->sb, &B->cg); /* --memory bounds the timed sandbox too */
	enum leap_freeze f = o->freezer;
	if (f == LEAP_FREEZE_NONE)
		f = B->cg.mode[LEAP_CG_FREEZER] ? LEAP_FREEZE_CGROUP : LEAP_FREEZE_SIGNALS;
	if (f == LEAP_FREEZE_CGROUP && !B->cg.mode[LEAP_CG_FREEZER]) {
		*err = xasprintf("no cgroup freezer (%s)", B->cg.note);
		return -1;
	}
	if (f == LEAP_FREEZE_SIGNALS) {
		leap_sandbox_probe(&v->env, &v->o.sb);
		if (!v->o.sb.namespaces || v->env.ns_ok != 1) {
			*err = xasprintf("cannot freeze candidates: no cgroup freezer (%s) and no PID namespace to stop "
					 "(namespaces %s)", B->cg.note, v->o.sb.namespaces ? "unavailable" : "turned off");
			return -1;
		}
	}
	if (f == LEAP_FREEZE_CGROUP)
		B->sb.cg_ctrl |= 1u << LEAP_CG_FREEZER;
	B->o.freezer = f;
	/* a block's sets are made while nothing is timed, on the cores this process may use: more
	 * than four threads gain nothing from a memory bus they already fill */
	cpu_set_t own;
	int n = sched_getaffinity(0, sizeof own, &own) == 0 ? CPU_COUNT(&own) : 1;
	B->stage_threads = n < 1 ? 1 : n > 4 ? 4 : (unsigned)n;
	return 0;
}

const char *leap_bench_freezer_name(const struct leap_bencher *B)
{
	if (B->o.freezer == LEAP_FREEZE_SIGNALS)
		return "SIGSTOP from the PID namespace's init";
	return B->cg.mode[LEAP_CG_FREEZER] == LEAP_CG_V2 ? "cgroup v2 freezer" : "cgroup v1 freezer";
}

void leap_bencher_stop(struct leap_bencher *B)
{
	for (size_t i = 0; i < B->npools; i++) {
		struct leap_bpool *P = B->pools[i];
		if (P->have_bs)
			leap_session_end(&P->bs, NULL, NULL, NULL, 0);
		if (P->have_creg)
			leap_regions_free(&P->creg);
		P->have_bs = P->have_creg = 0;
	}
}

void leap_bencher_fork(struct leap_bencher *B, int copy)
{
	for (size_t i = 0; i < B->npools; i++)
		leap_case_fork(&B->pools[i]->d, copy);
}

void leap_bpool_free(struct leap_bpool *P)
{
	if (P->have_bs)
		leap_session_end(&P->bs, NULL, NULL, NULL, 0);
	if (P->have_creg)
		leap_regions_free(&P->creg);
	leap_case_free(&P->d);
	free(P->on_dev);
	free(P->made);
	free(P->ring_base);
	free(P->ring_seed);
	free(P);
}

void leap_bencher_free(struct leap_bencher *B)
{
	for (size_t i = 0; i < B->npools; i++)
		leap_bpool_free(B->pools[i]);
	free(B->pools);
	leap_torch_free(B->torch);
	leap_cgroups_free(&B->cg);
	memset(B, 0, sizeof *B);
}
