/* rank.h - LEAP's rank-based reward: a pairwise tournament between the trajectories of a group. */
#ifndef LEAP_RANK_H
#define LEAP_RANK_H

#include <stddef.h>

#include "group.h"

/* Components of the outcome key, compared in the order given. */
enum leap_key {
	LEAP_KEY_TURN,   /* solved at an earlier turn beats a later one; solved beats unsolved */
	LEAP_KEY_STATUS, /* the best status reached (pass > mismatch > timeout > runtime_error > ...) */
	LEAP_KEY_SPEED,  /* both solved: speedup greater by more than the tie margin wins */
	LEAP_KEY_TOKENS, /* both solved: fewer total tokens wins */
};

struct leap_rank_opts {
	enum leap_key key[8];
	int nkey;
	double speed_tie; /* relative margin: a is faster than b when s_a > (1 + margin) * s_b (for
			   * speedups without an interval; with intervals, overlap is a tie) */
};

/* Sets the default key, turn (the LEAP paper's gold > silver > time-out: first-turn success
 * over second-turn success over failure), and a 2% speed margin for a key that holds speed. */
void leap_rank_defaults(struct leap_rank_opts *o);

/* Parses a comma-separated key ("turn,speed,tokens"; components turn, status, speed,
 * tokens, each at most once). Returns 0, or -1 (o unchanged) when it is not one. */
int leap_rank_key_parse(const char *s, struct leap_rank_opts *o);

/* One trajectory's outcome, summarised from its records. */
struct leap_traj {
	long solved_turn; /* the first turn whose status is pass; 0 when never solved */
	int best_status;  /* the best status over its records (enum leap_status) */
	double speedup;   /* bench.speedup of the solving record; 0 when unknown or not trusted
			   * (bench.status not "ok": lib/group/group.c) */
	double speed_lo, speed_hi; /* its bench.speedup_ci (0 when it has none) */
	int has_tokens;   /* every record of it has `tokens` */
	long tokens;      /* their sum */
	long turns;       /* the largest turn among its records */
	int final;        /* some record of it ended it */
	long wins, losses, ties;
	double score;     /* (wins - losses) / (G - 1); 0 when G == 1 */
};

/* Starts an empty trajectory summary. */
void leap_rank_traj_init(struct leap_traj *t);

/* Adds one record (as summarised in *m) to trajectory summary *t. */
void leap_rank_traj_add(struct leap_traj *t, const struct leap_member *m);

/* Summarises the trajectories of `grp` (numbered by leap_group_trajectories into traj[],
 * which must hold grp->n entries) into *out (a new array of the returned length). Members
 * with a `skip` (duplicates) take no part. */
size_t leap_rank_summarise(const struct leap_group *grp, size_t *traj, struct leap_traj **out);

/* Compares two trajectories by the key: 1 when a beats b, -1 when b beats a, 0 for a tie.
 * Pure function. */
int leap_rank_compare(const struct leap_rank_opts *o, const struct leap_traj *a, const struct leap_traj *b);

/* Plays every pair of t[0..n) once and sets wins, losses, ties and score. The scores sum to
 * zero (up to rounding) and lie in [-1, 1]. */
void leap_rank_tournament(const struct leap_rank_opts *o, struct leap_traj *t, size_t n);

#endif
