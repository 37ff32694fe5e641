/* dcp.h - leap-prune's decision on one group: the gate that governs it, each record's decision.
 *
 * lib/group/prune.c holds the rules on numbers (a verdict from counts, a record's reason from its
 * status and turn); this module applies them to a group of held records (lib/group/group.h), so
 * that leap-prune's main loop only reads records, hands groups here and writes what comes
 * back. It also takes in the done file's earlier decisions of a re-run turn (lib/group/rerun.h):
 * which records of a group stand as an earlier run decided them is part of the decision. */
#ifndef LEAP_DCP_H
#define LEAP_DCP_H

#include "group.h"
#include "prune.h"
#include "rerun.h"

/* The gate that governs a group: the verdict, and the turn, failures and size it was taken on
 * (the turn-1 group's, carried in the records' `dcp`, unless --regate). */
struct leap_gate {
	enum leap_verdict v;
	long turn, n_fail, n;
};

/* The gate of grp (n >= 1 members) under *o: carried from the first member with a `dcp`
 * verdict unless o->regate, else taken on this turn's records. *n_fail receives this turn's
 * records that did not pass. */
struct leap_gate leap_dcp_gate(const struct leap_prune_opts *o, const struct leap_group *grp, long *n_fail);

/* Each member's decision under gate verdict v: reason[i] (lib/group/prune.h: leap_prune_reason;
 * NULL for a member an earlier run decided, in_done) and expand[i] (1: another turn; for an
 * in_done member, the earlier run's decision). Returns the number of members expanded. */
long leap_dcp_decide(const struct leap_prune_opts *o, const struct leap_group *grp, enum leap_verdict v,
		     const char **reason, int *expand);

/* Called for a member that this run already decided (a duplicate in the input): the caller
 * writes it as an error record naming the first, file:line, and clears it. */
typedef void leap_dcp_dup_fn(void *arg, const char *group, struct leap_member *m, const char *file, long line);

/* Replaces the members of grp that an earlier run decided by the done file's records of them
 * (marked in_done), and hands members this run already decided to dup (they leave grp).
 * Warns once per group of the records kept, and returns their number. Nothing happens when
 * the done file has nothing to look up (r == NULL, or not usable). */
long leap_dcp_take_rerun(struct leap_rerun *r, struct leap_group *grp, leap_dcp_dup_fn *dup, void *arg);

#endif
