/* adaptive.h - DCP state across steps: self-tuning easy threshold and per-task easy/hopeless streaks. */
#ifndef LEAP_ADAPTIVE_H
#define LEAP_ADAPTIVE_H

#include <jansson.h>

/* The state file (JSON):
 *   {"version":1, "target":T, "step":S, "easy_below":E, "runs":N,
 *    "tasks":{"<task>":{"easy":k, "hopeless":k, "runs":n}, ...}}
 * easy_below is the fraction leap-prune uses; target the share of turn-1 groups DCP should
 * end; "easy"/"hopeless" count the consecutive runs in which every turn-1 group of the
 * task was easy (hopeless). */
struct leap_adaptive {
	double target, step, easy_below;
	long runs;
	json_t *tasks; /* the "tasks" object (owned) */
};

/* Loads `path` into *a. A missing file gives a fresh state with the given target, step and
 * easy_below. Returns 0, or -1 with *err (new string) when the file cannot be read or is
 * not a valid state. */
int leap_adaptive_load(const char *path, double target, double step, double easy_below, struct leap_adaptive *a,
		       char **err);

/* One run's turn-1 results: `decided` groups, `pruned` of them ended (easy or hopeless);
 * `verdicts` maps task -> "easy" | "hopeless" | "expand" (mixed when a task's groups
 * differed). Moves easy_below one step towards the target share of pruned groups (up when
 * fewer were pruned than the target, down when more; clamped to [0, 1]), updates the task
 * streaks and counts the run. Pure function of its inputs. */
void leap_adaptive_apply(struct leap_adaptive *a, long decided, long pruned, const json_t *verdicts);

/* Reads the state at `path` afresh under an exclusive lock (path + ".lock"), applies the
 * run with leap_adaptive_apply and replaces the file atomically (a temporary file in the
 * same directory, fsync, rename), so that concurrent runs never lose an update or leave a
 * torn file. A fresh state takes target/step/easy_below. Returns 0, or -1 with *err. On
 * return *a holds the state written. */
int leap_adaptive_commit(const char *path, double target, double step, double easy_below, long decided,
			 long pruned, const json_t *verdicts, struct leap_adaptive *a, char **err);

void leap_adaptive_free(struct leap_adaptive *a);

/* For leap-prompt: 1 when `task` should be skipped: its easy or hopeless streak is at least
 * `after`, and a uniform draw from (seed, task) is not below `revisit`. */
int leap_adaptive_skip(const struct leap_adaptive *a, const char *task, long after, double revisit,
		       unsigned long seed);

#endif
