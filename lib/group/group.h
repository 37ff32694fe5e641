/* group.h - streaming GRPO groups: collect records by group key, hand a group over once complete. */
#ifndef LEAP_GROUP_H
#define LEAP_GROUP_H

#include <stddef.h>

#include "core/hmap.h"
#include "member.h"

/* An open or completed group: the members in arrival order. */
struct leap_group {
	char *key;                 /* the group key (owned) */
	struct leap_member *m;     /* members in arrival order */
	size_t n, cap;
	long units;                /* units counted toward completion so far */
	long want;                 /* units that complete the group; 0 when unknown */
	struct leap_group *prev, *next; /* open groups in order of first arrival */
};

/* Open groups by key. Only open groups are held: a completed group is handed to the caller
 * and forgotten, so memory is bounded by the groups open at one time. */
struct leap_grouper {
	struct leap_hmap map;           /* key -> struct leap_group */
	struct leap_group *head, *tail; /* in order of first arrival */
};

/* Prepares an empty grouper. */
void leap_grouper_init(struct leap_grouper *g);

/* Adds member *m (its raw text is taken over; *m is zeroed) to the group named
 * `key`, creating the group if it is not open. `unit` (0 or 1) is added to the group's unit
 * count; when `want` > 0 it becomes the group's target (the largest target seen wins).
 * When the group's units reach a positive target, the group is removed from the grouper and
 * returned (the caller owns it and frees it with leap_group_free); otherwise NULL. */
struct leap_group *leap_grouper_add(struct leap_grouper *g, const char *key, struct leap_member *m, int unit,
				    long want);

/* Removes and returns the open group that arrived first, or NULL when none is open. Used at
 * end of input, when the remaining groups are decided with what arrived. */
struct leap_group *leap_grouper_pop(struct leap_grouper *g);

/* The open group named `key`, or NULL. */
struct leap_group *leap_grouper_get(const struct leap_grouper *g, const char *key);

/* Duplicates. A record is identified by (group, sample, turn); a second record with the same
 * identity (the sample a number >= 0) takes no part in any decision, tournament or advantage:
 * the programs write it as an error record naming the first one's position. One policy for
 * every program: this message, and the rule that the first record wins. */

/* 1 when a record of (sample, turn) is a second record of the one at (first_sample,
 * first_turn): both have the same sample, a number >= 0, and the same turn. The rule itself,
 * for the programs that keep records otherwise than in a struct leap_group. */
int leap_is_dup(long sample, long turn, long first_sample, long first_turn);

/* The index of the first member of grp with the same sample (>= 0) and turn as m, or -1. */
long leap_group_find_dup(const struct leap_group *grp, const struct leap_member *m);

/* A new string: the message for a second record of (group, sample, turn) whose first is at
 * file:line. */
char *leap_dup_message(const char *group, long sample, long turn, const char *file, long line);

/* Marks m a duplicate (m->skip: its message, warned on stderr) and returns 1 when `open`, the
 * open group named `group` (or NULL), already holds a record of the same sample and turn;
 * else 0. A marked duplicate stays in its group, so that it is written in its place, but
 * takes no part and does not count toward the group's size. */
int leap_group_mark_dup(const struct leap_group *open, const char *group, struct leap_member *m);

/* Frees a group handed out by leap_grouper_add/pop and its members. */
void leap_group_free(struct leap_group *grp);

/* Frees every open group and the table; the grouper is empty and reusable afterwards. */
void leap_grouper_free(struct leap_grouper *g);

/* Numbers the trajectories of a group: members with the same `sample` (>= 0) form one
 * trajectory; a member without a sample is a trajectory of its own. traj[i] receives the
 * trajectory of member i; trajectories are numbered 0.. in order of first arrival. Returns
 * the number of trajectories. */
size_t leap_group_trajectories(const struct leap_group *grp, size_t *traj);

#endif
