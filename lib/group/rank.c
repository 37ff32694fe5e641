/* rank.c - LEAP's rank-based reward: a pairwise tournament between the trajectories of a group. */
/*
 * A group's trajectories are ranked by a round robin of pairwise comparisons on an ordered key
 * (--key: solved at an earlier turn, the best status, speed, tokens), and a trajectory's score is
 * (wins - losses) / (n - 1), in [-1, 1]. Pairwise rather than a weighted sum, so that no scale
 * has to be chosen between a turn and a speedup: a later component only breaks a tie of the
 * earlier ones. Speeds within the tie margin, or with overlapping intervals, are a tie, so that
 * timing noise never decides a win.
 */
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "core/record.h"
#include "core/util.h"
#include "core/banned.h"

void leap_rank_defaults(struct leap_rank_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->key[0] = LEAP_KEY_TURN;
	o->nkey = 1;
	o->speed_tie = 0.02;
}

int leap_rank_key_parse(const char *s, struct leap_rank_opts *o)
{
	static const char *const names[] = {"turn", "status", "speed", "tokens"};
	enum leap_key key[8];
	int n = 0, seen = 0;
	char *copy = xstrdup(s), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = -1;
		for (int i = 0; i < 4; i++)
			if (!strcmp(tok, names[i]))
				k = i;
		if (k < 0 || (seen & (1 << k))) {
			free(copy);
			return -1;
		}
		seen |= 1 << k;
		key[n++] = (enum leap_key)k;
	}
	free(copy);
	if (n == 0)
		return -1;
	memcpy(o->key, key, sizeof(key));
	o->nkey = n;
	return 0;
}

void leap_rank_traj_init(struct leap_traj *t)
{
	memset(t, 0, sizeof(*t));
	t->best_status = LEAP_ST_NONE;
	t->has_tokens = 1;
}

void leap_rank_traj_add(struct leap_traj *x, const struct leap_member *m)
{
	if (m->status > x->best_status)
		x->best_status = m->status;
	if (m->status == LEAP_ST_PASS && (x->solved_turn == 0 || m->turn < x->solved_turn)) {
		x->solved_turn = m->turn;
		x->speedup = m->speedup;
		x->speed_lo = m->speed_lo;
		x->speed_hi = m->speed_hi;
	}
	if (m->has_tokens)
		x->tokens += m->tokens;
	else
		x->has_tokens = 0;
	if (m->turn > x->turns)
		x->turns = m->turn;
	if (m->final)
		x->final = 1;
}

size_t leap_rank_summarise(const struct leap_group *grp, size_t *traj, struct leap_traj **out)
{
	size_t nt = leap_group_trajectories(grp, traj);
	struct leap_traj *t = xcalloc(nt ? nt : 1, sizeof(*t));
	for (size_t j = 0; j < nt; j++)
		leap_rank_traj_init(&t[j]);
	for (size_t i = 0; i < grp->n; i++)
		if (!grp->m[i].skip)
			leap_rank_traj_add(&t[traj[i]], &grp->m[i]);
	*out = t;
	return nt;
}

/* The speed component for two solved trajectories with usable speedups: with both intervals
 * (bench.speedup_ci), a wins only when its interval lies wholly above b's, and overlapping
 * intervals tie (the timings cannot tell them apart); without, the --speed-tie margin. */
static int speed_cmp(const struct leap_rank_opts *o, const struct leap_traj *a, const struct leap_traj *b)
{
	if (a->speed_hi > 0 && b->speed_hi > 0)
		return a->speed_lo > b->speed_hi ? 1 : b->speed_lo > a->speed_hi ? -1 : 0;
	if (a->speedup > (1 + o->speed_tie) * b->speedup)
		return 1;
	if (b->speedup > (1 + o->speed_tie) * a->speedup)
		return -1;
	return 0;
}

int leap_rank_compare(const struct leap_rank_opts *o, const struct leap_traj *a, const struct leap_traj *b)
{
	int solved = a->solved_turn > 0 && b->solved_turn > 0;
	for (int k = 0; k < o->nkey; k++) {
		switch (o->key[k]) {
		case LEAP_KEY_TURN:
			if (a->solved_turn != b->solved_turn) {
				if (!a->solved_turn)
					return -1;
				if (!b->solved_turn)
					return 1;
				return a->solved_turn < b->solved_turn ? 1 : -1;
			}
			break;
		case LEAP_KEY_STATUS:
			if (a->best_status != b->best_status)
				return a->best_status > b->best_status ? 1 : -1;
			break;
		case LEAP_KEY_SPEED:
			if (solved && a->speedup > 0 && b->speedup > 0) {
				int c = speed_cmp(o, a, b);
				if (c)
					return c;
			}
			break;
		case LEAP_KEY_TOKENS:
			if (solved && a->has_tokens && b->has_tokens && a->tokens != b->tokens)
				return a->tokens < b->tokens ? 1 : -1;
			break;
		}
	}
	return 0;
}

void leap_rank_tournament(const struct leap_rank_opts *o, struct leap_traj *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		t[i].wins = t[i].losses = t[i].ties = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			int c = leap_rank_compare(o, &t[i], &t[j]);
			if (c > 0) {
				t[i].wins++;
				t[j].losses++;
			} else if (c < 0) {
				t[j].wins++;
				t[i].losses++;
			} else {
				t[i].ties++;
				t[j].ties++;
			}
		}
	for (size_t i = 0; i < n; i++)
		t[i].score = n > 1 ? (double)(t[i].wins - t[i].losses) / (double)(n - 1) : 0.0;
}
