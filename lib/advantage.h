/* advantage.h - advantage estimators: LEAP's rank-based one and the scalar baselines it is compared with. */
#ifndef LEAP_ADVANTAGE_H
#define LEAP_ADVANTAGE_H

#include <stddef.h>
#include <jansson.h>

#include "group.h"

enum leap_estimator {
	LEAP_EST_RANK,   /* the trajectory's rank score; positive ones discounted back to earlier turns */
	LEAP_EST_GRPO,   /* (R - mean) / (std + eps) over the group's trajectories */
	LEAP_EST_DRGRPO, /* R - mean */
	LEAP_EST_RLOO,   /* R - mean of the other trajectories */
	LEAP_EST_KEVIN,  /* per-turn discounted return minus the mean return of its (group, turn) */
	LEAP_EST_TRLOO,  /* per-turn return minus the mean return of the others at its (group, turn) */
};

enum leap_reward_kind {
	LEAP_REWARD_FIELD,     /* the record's `reward` */
	LEAP_REWARD_BINARY,    /* [pass] */
	LEAP_REWARD_KEVIN,     /* 0.3 [pass] + [pass] speedup */
	LEAP_REWARD_KERNELGYM, /* 0.5 [pass] + 0.5 [pass and speedup >= 1.01] */
};

enum leap_scale {
	LEAP_SCALE_DEFAULT, /* group for grpo, none for the others */
	LEAP_SCALE_GROUP,   /* divide by (std + eps) of the values the baseline was taken over */
	LEAP_SCALE_BATCH,   /* divide by (std + eps) of all such values in the input */
	LEAP_SCALE_NONE,
};

#define LEAP_ADV_EPS 1e-6

/* Name parsers: return 0 and set *out, or -1 for an unknown name. */
int leap_estimator_parse(const char *s, enum leap_estimator *out);
int leap_reward_parse(const char *s, enum leap_reward_kind *out);
int leap_scale_parse(const char *s, enum leap_scale *out);
const char *leap_estimator_name(enum leap_estimator e);

/* The reward of one record (as summarised in *m: reward, status, speedup) by `kind`.
 * Returns 0 and sets *r, or returns -1 with *why set to a static message when the record
 * lacks what the kind needs. */
int leap_reward_of(enum leap_reward_kind kind, const struct leap_member *m, double *r, const char **why);

/* The rank advantage of a record of turn `turn` in a trajectory of `turns` turns whose rank
 * score is `score`: score * gamma^(turns - turn) when score > 0, else score. */
double leap_advantage_rank(double score, long turns, long turn, double gamma);

/* Unbiased (N - 1) standard deviation of x[0..n); 0 when n < 2. */
double leap_std(const double *x, size_t n);

/* Centres x[0..n) into out[0..n): x - mean (loo = 0) or x - mean of the others (loo = 1).
 * A single value, or values all equal, centre to exactly 0. */
void leap_centre(const double *x, size_t n, int loo, double *out);

/* Discounted returns of per-turn scores s[0..n) in turn order: G[k] = s[k] + gamma G[k+1]. */
void leap_returns(const double *s, size_t n, double gamma, double *G);

/* Computes the scalar estimator `e` (not rank) over the members of one group that take part
 * (skip == NULL; their reward in `value`, their trajectory by sample, their turn), writing
 * the centred advantage into each member's `out` and, for scale group, dividing by (std +
 * eps) of the values the baseline was taken over. The values a batch scale would be taken
 * over are appended to *vals (a growable array: *nvals values, room for *cap) when vals != NULL. */
void leap_advantage_group(enum leap_estimator e, enum leap_scale scale, double gamma, struct leap_group *grp,
			  double **vals, size_t *nvals, size_t *cap);

#endif
