/* rerun.h - leap-prune's done file as it was at start: which (group, sample, turn) it decided.
 *
 * Re-running a turn (after a crash, a killed sampler, a second `make`) must not leave a
 * record twice in the done file, where leap-rank and leap-advantage would count it twice.
 * leap-prune therefore looks up each record it is about to decide among the records the done
 * file held when it started: a record found there was decided by the earlier run, and that
 * decision stands (the done file keeps its record; the next-turn record is made again from
 * it, so the next turn continues the trajectory the done file holds). A record this run has
 * already written is a duplicate in the input. The index is built per turn, on the first
 * group of that turn, and holds only that turn's keys; records carrying an `error` are no
 * decision and are not indexed. A done file that is not a regular file (/dev/null, a pipe)
 * has nothing to look up. */
#ifndef LEAP_RERUN_H
#define LEAP_RERUN_H

#include <stddef.h>
#include <sys/types.h>

#include "core/hmap.h"

struct leap_rerun_entry {
	off_t off;        /* the record's line in the done file (previous run), */
	size_t len;       /* without its newline */
	int this_run;     /* 1: written by this run (file:line is the input's) */
	const char *file; /* where the record was read: the done file, or this run's input */
	long line;
};

struct leap_rerun {
	const char *path;
	int usable;       /* the done file is a regular file */
	off_t limit;      /* its size when leap-prune opened it: what earlier runs wrote */
	long *turns;      /* the turns indexed so far */
	size_t nturns, capturns;
	struct leap_hmap keys; /* "group\x1fsample\x1fturn" -> struct leap_rerun_entry */
};

/* Starts an empty index of the done file `path`, open for appending on descriptor fd.
 * Dies with a message when fd cannot be inspected. */
void leap_rerun_init(struct leap_rerun *r, const char *path, int fd);

/* The entry of (group, sample >= 0, turn), indexing the done file's records of `turn` first
 * when this is the first look at that turn; NULL when absent. Dies with a message when the
 * done file cannot be read. */
const struct leap_rerun_entry *leap_rerun_find(struct leap_rerun *r, const char *group, long sample, long turn);

/* Notes that this run decided (group, sample >= 0, turn), read at file:line (a turn looked up
 * with leap_rerun_find before). */
void leap_rerun_note(struct leap_rerun *r, const char *group, long sample, long turn, const char *file, long line);

/* The done file's line of entry e (a previous run's), as a new NUL-terminated string of
 * e->len bytes. Dies with a message when it cannot be read. */
char *leap_rerun_line(const struct leap_rerun *r, const struct leap_rerun_entry *e);

void leap_rerun_free(struct leap_rerun *r);

#endif
