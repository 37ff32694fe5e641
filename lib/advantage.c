/* advantage.c - advantage estimators: LEAP's rank-based one and the scalar baselines it is compared with. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advantage.h"
#include "jsonl.h"
#include "record.h"
#include "util.h"
#include "banned.h"

static const char *const estimator_names[] = {"rank", "grpo", "dr-grpo", "rloo", "kevin", "trloo"};

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
	int i = parse_name(s, estimator_names, 6);
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
	static const char *const names[] = {"field", "binary", "kevin", "kernelgym"};
	int i = parse_name(s, names, 4);
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
	double sp = m->speedup; /* 0 when unknown */
	switch (kind) {
	case LEAP_REWARD_BINARY:
		*r = pass;
		break;
	case LEAP_REWARD_KEVIN:
		*r = 0.3 * pass + pass * sp;
		break;
	default:
		*r = 0.5 * pass + 0.5 * (pass && sp >= 1.01 ? 1.0 : 0.0);
		break;
	}
	return 0;
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
	if (n < 2 || equal) {
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

/* Centres (and, for scale group, scales) x[0..n) into out[0..n). */
static void centre_scale(const double *x, size_t n, int loo, enum leap_scale scale, double *out)
{
	leap_centre(x, n, loo, out);
	if (scale == LEAP_SCALE_GROUP) {
		double sd = leap_std(x, n);
		for (size_t i = 0; i < n; i++)
			out[i] /= sd + LEAP_ADV_EPS;
	}
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
	double *x = xcalloc(np ? np : 1, sizeof(*x)), *y = xcalloc(np ? np : 1, sizeof(*y));
	if (e == LEAP_EST_GRPO || e == LEAP_EST_DRGRPO || e == LEAP_EST_RLOO) {
		/* one reward per trajectory: its last turn's */
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
	} else {
		/* per-turn returns along each trajectory */
		double *G = xcalloc(np ? np : 1, sizeof(*G));
		for (size_t j = 0; j < np; j++)
			x[j] = grp->m[o[j].i].value;
		for (size_t j = 0, start = 0; j < np; j++) {
			if (j + 1 == np || o[j + 1].a != o[j].a) {
				leap_returns(x + start, j + 1 - start, gamma, G + start);
				start = j + 1;
			}
		}
		/* baseline per turn: regroup by (turn, arrival) */
		struct ord *t = xcalloc(np ? np : 1, sizeof(*t));
		for (size_t j = 0; j < np; j++) {
			t[j] = (struct ord){(size_t)o[j].b, (long)o[j].i, j};
			push(vals, nvals, cap, G[j]);
		}
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
		free(G);
	}
	free(x);
	free(y);
	free(o);
	free(traj);
}
