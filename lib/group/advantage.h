/* advantage.h - advantage estimators: LEAP's rank-based one and the scalar baselines it is compared with. */
#ifndef LEAP_ADVANTAGE_H
#define LEAP_ADVANTAGE_H

#include <stddef.h>
#include <jansson.h>

#include "group.h"

enum leap_estimator {
	LEAP_EST_RANK,   /* the trajectory's rank score; positive ones discounted back to earlier turns */
	LEAP_EST_GRPO,   /* (R - mean) / (std + eps) over the group's trajectories (verl) */
	LEAP_EST_DRGRPO, /* R - mean (verl, norm_adv_by_std_in_grpo=False) */
	LEAP_EST_RLOO,   /* R - mean of the other trajectories (verl) */
	LEAP_EST_KEVIN,  /* discounted returns, normalised over every (trajectory, turn) of the group */
	LEAP_EST_TRLOO,  /* per-turn return minus the mean return of the others at its (group, turn) */
	LEAP_EST_TURN_MEAN, /* per-turn return minus the mean return of its (group, turn) (leap's) */
};

enum leap_reward_kind {
	LEAP_REWARD_FIELD,     /* the record's `reward` */
	LEAP_REWARD_BINARY,    /* [pass] */
	LEAP_REWARD_KEVIN,     /* 0.3 [pass] + [pass] speedup (Kevin-32B) */
	LEAP_REWARD_KERNELGYM, /* 0.5 [pass] + 0.5 [pass and speedup >= 1.01] (calculate_reward_weighted) */
	LEAP_REWARD_KERNELGYM_SPEEDUP, /* 0.5 [pass] + 0.5 [pass] min(speedup, 3) (calculate_reward_speedup) */
};

enum leap_scale {
	LEAP_SCALE_DEFAULT, /* group for grpo and kevin, none for the others */
	LEAP_SCALE_GROUP,   /* divide by (std + 1e-6) of the values the baseline was taken over (verl) */
	LEAP_SCALE_BATCH,   /* divide by (std + 1e-4) of all such values in the input (TRL) */
	LEAP_SCALE_NONE,
};

/* verl's epsilon (compute_grpo_outcome_advantage) for a group's std; TRL's (GRPOTrainer,
 * scale_rewards) for the batch std. */
#define LEAP_ADV_EPS 1e-6
#define LEAP_ADV_EPS_BATCH 1e-4

/* KernelGYM's reward constants (hkust-nlp/KernelGYM, drkernel/kernel/config/kernel_trainer.yaml
 * and kernel/rewards/reward_client.py): correctness and performance weights, the speedup that
 * counts as faster (1 + speedup_eps), and the bound of the continuous speedup term. */
#define LEAP_KERNELGYM_W_CORRECT 0.5
#define LEAP_KERNELGYM_W_PERF 0.5
#define LEAP_KERNELGYM_SPEEDUP_EPS 0.01
#define LEAP_KERNELGYM_SPEEDUP_BOUND 3.0

/* A preset: the settings of one published method, one flag away. */
struct leap_adv_preset {
	const char *name;
	enum leap_estimator est;
	int has_reward;
	enum leap_reward_kind reward;
	double gamma;
	enum leap_scale scale;
};

/* The preset called `name` (leap, grpo-mt, kevin, drkernel), or NULL. */
const struct leap_adv_preset *leap_adv_preset(const char *name);

/* Name parsers: return 0 and set *out, or -1 for an unknown name. */
int leap_estimator_parse(const char *s, enum leap_estimator *out);
int leap_reward_parse(const char *s, enum leap_reward_kind *out);
int leap_scale_parse(const char *s, enum leap_scale *out);
const char *leap_estimator_name(enum leap_estimator e);

/* 1 when the reward kind uses bench.speedup. */
int leap_reward_uses_speed(enum leap_reward_kind kind);

/* The default discount of an estimator: 1 for trloo (Dr.Kernel), 0.4 for the others (Kevin's
 * value; for rank, leap's choice). */
double leap_estimator_gamma(enum leap_estimator e);

/* The reward of one record (as summarised in *m: reward, status, speedup) by `kind`.
 * Returns 0 and sets *r, or returns -1 with *why set to a static message when the record
 * lacks what the kind needs. */
int leap_reward_of(enum leap_reward_kind kind, const struct leap_member *m, double *r, const char **why);

/* Speed ties within one group (issue 28): members whose speedup intervals (bench.speedup_ci)
 * overlap, directly or through other members, cannot be told apart by their timings, so they
 * get one speedup, the geometric mean of theirs, and the rewards of `kind` that use the speedup
 * are computed again (m[i].value, for members with has_value and no skip). Members without an
 * interval keep their own. Nothing changes for a reward that does not use the speedup. */
void leap_reward_ties(enum leap_reward_kind kind, struct leap_member *m, size_t n);

/* The rank advantage of a record of turn `turn` in a trajectory of `turns` turns whose rank
 * score is `score`: score * gamma^(turns - turn) when score > 0, else score. */
double leap_advantage_rank(double score, long turns, long turn, double gamma);

/* Unbiased (N - 1) standard deviation of x[0..n); 0 when n < 2. */
double leap_std(const double *x, size_t n);

/* Centres x[0..n) into out[0..n): x - mean (loo = 0) or x - mean of the others (loo = 1).
 * Values all equal (n >= 2) centre to exactly 0; a single value has no baseline and stays as
 * it is (verl's GRPO, RLOO and Dr.Kernel's TRLOO take the mean of a group of one as 0). */
void leap_centre(const double *x, size_t n, int loo, double *out);

/* Discounted returns of per-turn scores s[0..n) in turn order: G[k] = s[k] + gamma G[k+1]. */
void leap_returns(const double *s, size_t n, double gamma, double *G);

/* Computes the scalar estimator `e` (not rank) over the members of one group that take part
 * (skip == NULL; their reward in `value`, their trajectory by sample, their turn), writing
 * the centred advantage into each member's `out` and, for scale group, dividing by (std +
 * 1e-6) of the values the baseline was taken over (a single value: by 1 + 1e-6, as verl).
 * The values a batch scale would be taken over are appended to *vals (a growable array:
 * *nvals values, room for *cap) when vals != NULL. */
void leap_advantage_group(enum leap_estimator e, enum leap_scale scale, double gamma, struct leap_group *grp,
			  double **vals, size_t *nvals, size_t *cap);

#endif
