/* advantage.c - advantage estimators: LEAP's rank-based one and the scalar baselines it is compared with. */
/*
 * LEAP's estimator and the ones it is compared with live in one file and share one group walk
 * (leap_advantage_group: members in (trajectory, turn, arrival) order), so that a comparison
 * between them differs only in the rule, not in how a group was read. Each estimator is the
 * formula of its source (man/leap-advantage.1 cites them), and each published method is a
 * preset of estimator, reward and scaling, one flag away, rather than something a user must
 * assemble. Rewards come from the record (reward, status, speedup) by a named rule.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advantage.h"
#include "core/jsonl.h"
#include "core/record.h"
#include "core/util.h"
#include "core/banned.h"

static const char *const estimator_names[] = {"rank", "grpo", "dr-grpo", "rloo", "kevin", "trloo", "turn-mean"};

/* The published methods, one flag away (man/leap-advantage.1 cites each value's source).
 * NAN gamma: the estimator's default. */
static const struct leap_adv_preset presets[] = {
	{"leap", LEAP_EST_RANK, 0, LEAP_REWARD_FIELD, 0.4, LEAP_SCALE_DEFAULT},
	{"grpo-mt", LEAP_EST_GRPO, 1, LEAP_REWARD_BINARY, NAN, LEAP_SCALE_GROUP},
	{"kevin", LEAP_EST_KEVIN, 1, LEAP_REWARD_KEVIN, 0.4, LEAP_SCALE_GROUP},
	{"drkernel", LEAP_EST_TRLOO, 1, LEAP_REWARD_KERNELGYM_SPEEDUP, 1.0, LEAP_SCALE_NONE},
};

const struct leap_adv_preset *leap_adv_preset(const char *name)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(name, presets[i].name))
			return &presets[i];
	return NULL;
}

double leap_estimator_gamma(enum leap_estimator e)
{
	return e == LEAP_EST_TRLOO ? 1.0 : 0.4;
}

int leap_reward_uses_speed(enum leap_reward_kind kind)
{
	return kind == LEAP_REWARD_KEVIN || kind == LEAP_REWARD_KERNELGYM || kind == LEAP_REWARD_KERNELGYM_SPEEDUP;
}

/* The index of s in names[0..n), or -1. */
static int parse_name(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

int leap_estimator_parse(const char *s, enum leap_estimator *out)
{
	int i = parse_name(s, estimator_names, sizeof(estimator_names) / sizeof(estimator_names[0]));
	if (i < 0)
		return -1;
	*out = (enum leap_estimator)i;
	return 0;
}

const char *leap_estimator_name(enum leap_estimator e)
{
	return estimator_names[e];
}

int leap_reward_parse(const char *s, enum leap_reward_kind *out)
{
	static const char *const names[] = {"field", "binary", "kevin", "kernelgym", "kernelgym-speedup"};
	int i = parse_name(s, names, 5);
	if (i < 0)
		return -1;
	*out = (enum leap_reward_kind)i;
	return 0;
}

int leap_scale_parse(const char *s, enum leap_scale *out)
{
	static const char *const names[] = {"default", "group", "batch", "none"};
	int i = parse_name(s, names, 4);
	if (i <= 0)
		return -1;
	*out = (enum leap_scale)i;
	return 0;
}

int leap_reward_of(enum leap_reward_kind kind, const struct leap_member *m, double *r, const char **why)
{
	if (kind == LEAP_REWARD_FIELD) {
		if (!m->has_reward) {
			*why = "the record has no numeric 'reward' (or choose --reward binary, kevin or kernelgym)";
			return -1;
		}
		*r = m->reward;
		return 0;
	}
	if (m->status == LEAP_ST_NONE) {
		*why = "the record has no valid 'status' for the reward preset";
		return -1;
	}
	double pass = m->status == LEAP_ST_PASS;
	double sp = pass ? m->speedup : 0; /* 0 when unknown or not trusted (bench.status not ok) */
	switch (kind) {
	case LEAP_REWARD_BINARY:
		*r = pass;
		break;
	case LEAP_REWARD_KEVIN:
		*r = 0.3 * pass + sp;
		break;
	case LEAP_REWARD_KERNELGYM:
		*r = LEAP_KERNELGYM_W_CORRECT * pass +
		     LEAP_KERNELGYM_W_PERF * (sp >= 1 + LEAP_KERNELGYM_SPEEDUP_EPS ? 1.0 : 0.0);
		break;
	default:
		*r = LEAP_KERNELGYM_W_CORRECT * pass +
		     LEAP_KERNELGYM_W_PERF * (sp < LEAP_KERNELGYM_SPEEDUP_BOUND ? sp : LEAP_KERNELGYM_SPEEDUP_BOUND);
		break;
	}
	return 0;
}

/* qsort order of member pointers by the lower end of their speedup interval. */
static int cmp_lo(const void *p, const void *q)
{
	const struct leap_member *a = *(const struct leap_member *const *)p, *b = *(const struct leap_member *const *)q;
	return (a->speed_lo > b->speed_lo) - (a->speed_lo < b->speed_lo);
}

void leap_reward_ties(enum leap_reward_kind kind, struct leap_member *m, size_t n)
{
	if (!leap_reward_uses_speed(kind))
		return;
	struct leap_member **v = xcalloc(n ? n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].has_value && !m[i].skip && m[i].status == LEAP_ST_PASS && m[i].speedup > 0 && m[i].speed_hi > 0)
			v[k++] = &m[i];
	qsort(v, k, sizeof *v, cmp_lo);
	/* a sweep by lower ends: a cluster goes on while the next interval starts below the
	 * highest end seen in it */
	for (size_t a = 0, b; a < k; a = b) {
		double hi = v[a]->speed_hi, logsum = log(v[a]->speedup);
		for (b = a + 1; b < k && v[b]->speed_lo <= hi; b++) {
			hi = v[b]->speed_hi > hi ? v[b]->speed_hi : hi;
			logsum += log(v[b]->speedup);
		}
		double tied = exp(logsum / (double)(b - a));
		for (size_t i = a; b - a > 1 && i < b; i++) {
			const char *why;
			v[i]->speedup = tied;
			leap_reward_of(kind, v[i], &v[i]->value, &why);
		}
	}
	free(v);
}

double leap_advantage_rank(double score, long turns, long turn, double gamma)
{
	if (score <= 0)
		return score;
	long k = turns - turn;
	return k > 0 ? score * pow(gamma, (double)k) : score;
}

double leap_std(const double *x, size_t n)
{
	if (n < 2)
		return 0;
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	return sqrt(ss / (double)(n - 1));
}

void leap_centre(const double *x, size_t n, int loo, double *out)
{
	int equal = 1;
	for (size_t i = 1; i < n; i++)
		if (x[i] != x[0])
			equal = 0;
	if (n == 1) {
		out[0] = x[0]; /* no baseline: verl and Dr.Kernel take the mean of one as 0 */
		return;
	}
	if (equal) {
		/* exactly 0, not the rounding error of a mean */
		for (size_t i = 0; i < n; i++)
			out[i] = 0;
		return;
	}
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	for (size_t i = 0; i < n; i++)
		out[i] = loo ? x[i] - (sum - x[i]) / (double)(n - 1) : x[i] - sum / (double)n;
}

void leap_returns(const double *s, size_t n, double gamma, double *G)
{
	double next = 0;
	for (size_t k = n; k-- > 0;) {
		G[k] = s[k] + gamma * next;
		next = G[k];
	}
}

struct ord {
	size_t a;   /* first sort key */
	long b;     /* second */
	size_t i;   /* member index, last key */
};

/* qsort order of struct ord: by a, then b, then member index. */
static int cmp_ord(const void *p, const void *q)
{
	const struct ord *x = p, *y = q;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Appends v to the growable array *vals when vals is not NULL. */
static void push(double **vals, size_t *nvals, size_t *cap, double v)
{
	if (!vals)
		return;
	xgrow((void **)vals, cap, *nvals + 1, sizeof(**vals));
	(*vals)[(*nvals)++] = v;
}

/* Centres (and, for scale group, scales) x[0..n) into out[0..n). The std of a single value
 * is taken as 1, as verl does for a group of one. */
static void centre_scale(const double *x, size_t n, int loo, enum leap_scale scale, double *out)
{
	leap_centre(x, n, loo, out);
	if (scale == LEAP_SCALE_GROUP) {
		double sd = n == 1 ? 1.0 : leap_std(x, n);
		for (size_t i = 0; i < n; i++)
			out[i] /= sd + LEAP_ADV_EPS;
	}
}

/* The outcome estimators (grpo, dr-grpo, rloo): one reward per trajectory, its last turn's,
 * given to every record of the trajectory. o[0..np) are the members ordered by (trajectory,
 * turn, arrival). */
static void outcome(enum leap_estimator e, enum leap_scale scale, struct leap_group *grp, const struct ord *o,
		    size_t np, double **vals, size_t *nvals, size_t *cap)
{
	double *x = xcalloc(np ? np : 1, sizeof(*x)), *y = xcalloc(np ? np : 1, sizeof(*y));
	size_t nt = 0;
	for (size_t j = 0; j < np; j++)
		if (j + 1 == np || o[j + 1].a != o[j].a)
			x[nt++] = grp->m[o[j].i].value;
	centre_scale(x, nt, e == LEAP_EST_RLOO, scale, y);
	for (size_t k = 0; k < nt; k++)
		push(vals, nvals, cap, x[k]);
	size_t k = 0;
	for (size_t j = 0; j < np; j++) {
		grp->m[o[j].i].out = y[k];
		if (j + 1 == np || o[j + 1].a != o[j].a)
			k++;
	}
	free(x);
	free(y);
}

/* The per-turn baselines (trloo, turn-mean): the returns G[0..np) (in the order of o) of each
 * turn against the others of that turn (trloo) or all of that turn (turn-mean). */
static void per_turn(enum leap_estimator e, enum leap_scale scale, struct leap_group *grp, const struct ord *o,
		     size_t np, const double *G)
{
	/* regroup by (turn, arrival) */
	struct ord *t = xcalloc(np ? np : 1, sizeof(*t));
	for (size_t j = 0; j < np; j++)
		t[j] = (struct ord){(size_t)o[j].b, (long)o[j].i, j};
	qsort(t, np, sizeof(*t), cmp_ord);
	double *gx = xcalloc(np ? np : 1, sizeof(*gx)), *gy = xcalloc(np ? np : 1, sizeof(*gy));
	for (size_t j = 0, start = 0; j < np; j++) {
		if (j + 1 == np || t[j + 1].a != t[j].a) {
			size_t m = j + 1 - start;
			for (size_t q = 0; q < m; q++)
				gx[q] = G[t[start + q].i];
			centre_scale(gx, m, e == LEAP_EST_TRLOO, scale, gy);
			for (size_t q = 0; q < m; q++)
				grp->m[o[t[start + q].i].i].out = gy[q];
			start = j + 1;
		}
	}
	free(gx);
	free(gy);
	free(t);
}

/* The return estimators (kevin, trloo, turn-mean): discounted returns along each trajectory,
 * then Kevin's normalisation over all of the group's returns, or a per-turn baseline. */
static void returns(enum leap_estimator e, enum leap_scale scale, double gamma, struct leap_group *grp,
		    const struct ord *o, size_t np, double **vals, size_t *nvals, size_t *cap)
{
	double *x = xcalloc(np ? np : 1, sizeof(*x)), *G = xcalloc(np ? np : 1, sizeof(*G));
	for (size_t j = 0; j < np; j++)
		x[j] = grp->m[o[j].i].value;
	for (size_t j = 0, start = 0; j < np; j++) {
		if (j + 1 == np || o[j + 1].a != o[j].a) {
			leap_returns(x + start, j + 1 - start, gamma, G + start);
			start = j + 1;
		}
	}
	for (size_t j = 0; j < np; j++)
		push(vals, nvals, cap, G[j]);
	if (e == LEAP_EST_KEVIN) {
		/* every (trajectory, turn) return of the group against them all */
		centre_scale(G, np, 0, scale, x);
		for (size_t j = 0; j < np; j++)
			grp->m[o[j].i].out = x[j];
	} else {
		per_turn(e, scale, grp, o, np, G);
	}
	free(x);
	free(G);
}

void leap_advantage_group(enum leap_estimator e, enum leap_scale scale, double gamma, struct leap_group *grp,
			  double **vals, size_t *nvals, size_t *cap)
{
	size_t n = grp->n;
	size_t *traj = xcalloc(n ? n : 1, sizeof(*traj));
	leap_group_trajectories(grp, traj);
	/* participating members ordered by (trajectory, turn, arrival) */
	struct ord *o = xcalloc(n ? n : 1, sizeof(*o));
	size_t np = 0;
	for (size_t i = 0; i < n; i++)
		if (!grp->m[i].skip)
			o[np++] = (struct ord){traj[i], grp->m[i].turn, i};
	qsort(o, np, sizeof(*o), cmp_ord);
	if (e == LEAP_EST_GRPO || e == LEAP_EST_DRGRPO || e == LEAP_EST_RLOO)
		outcome(e, scale, grp, o, np, vals, nvals, cap);
	else
		returns(e, scale, gamma, grp, o, np, vals, nvals, cap);
	free(o);
	free(traj);
}
