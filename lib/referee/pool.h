/* pool.h - records in input order, some handed to forked workers: the ordered queue of leap-verify and leap-bench. */
#ifndef LEAP_POOL_H
#define LEAP_POOL_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "core/cli.h"
#include "core/jsonl.h"
#include "core/util.h"

/*
 * The contract. A program reads records with leap_pool_run(); for each one it is called
 * back (start) to decide the record's output at once (entry ready), or to fork a worker
 * with leap_pool_fork() that computes a JSON result in a child process and ends with
 * leap_pool_child_exit(). When a worker ends, the program is called back (done) with the
 * result to make the entry ready. Entries are written strictly in input order as soon as
 * every entry before them is written, and the output is flushed before the pool waits, so
 * a reader downstream sees every finished record at once. Worker slots 0..slots-1 are
 * handed out round robin over the free ones (a slot names the worker's sandbox user and
 * device). At most `slots` workers run at once.
 *
 * Signals (sig.h): when an ending signal is caught, leap_pool_run() returns 1 after
 * writing the entries that were ready, in order; the program then calls leap_pool_abort()
 * (which ends the workers: they end their sandboxes and remove their temporary
 * directories) and ends with leap_signal_exit(). A worker that caught a signal never sends
 * a result (its verdict could be the interruption's).
 */

/* How a ready entry is written. */
enum leap_pool_mode {
	LEAP_POOL_SPLICE = 0, /* the raw line with the members of `add` appended (leap_out_splice) */
	LEAP_POOL_RAW = 1,    /* the raw line unchanged */
	LEAP_POOL_REC = 2,    /* `rec` re-serialised (an error was set on it) */
};

/* One input record on its way through. */
struct leap_pool_entry {
	json_t *rec;            /* the parsed record (owned) */
	char *raw;              /* its raw line (owned) and length */
	size_t len;
	char *file;             /* input name and line, for messages (owned) */
	long line;
	int ready;              /* the output is decided */
	enum leap_pool_mode mode;
	json_t *add;            /* SPLICE: the members to add (owned) */
	int kind;               /* the program's class of the work (0 or 1), counted in running_kind */
	int slot;               /* the worker slot, while a worker runs */
	pid_t pid;              /* the worker, or 0 */
	int fd;                 /* the worker's result pipe */
	struct leap_buf buf;    /* what the worker wrote so far */
};

struct leap_pool;

/* Decides entry e (not yet ready, mode SPLICE, add NULL): makes it ready, forks a worker
 * (leap_pool_fork), or leaves it undecided only when a signal was caught. */
typedef void (*leap_pool_start_fn)(void *arg, struct leap_pool *p, struct leap_pool_entry *e);

/* A worker of e ended; res is its result (borrowed), NULL when it died without one. Must make
 * e ready. */
typedef void (*leap_pool_done_fn)(void *arg, struct leap_pool *p, struct leap_pool_entry *e, json_t *res);

struct leap_pool {
	int slots;                  /* worker slots (>= 1) */
	int running;                /* workers now */
	int running_kind[2];        /* of them, per entry kind */
	long done;                  /* entries written */
	long *errors;               /* the program's error count (shown in the progress line) */
	struct leap_out *out;
	struct leap_progress *progress;
	leap_pool_start_fn start;
	leap_pool_done_fn finish;
	void *arg;
	/* private */
	unsigned char *busy;        /* busy[slot] */
	int last_slot;
	struct leap_pool_entry *q;  /* a ring of qcap entries in input order */
	size_t qhead, nq, qcap;
	int child_fd;               /* in a worker: where its result goes */
};

/* Prepares a pool of `slots` worker slots writing to `out` (progress and *errors shown on
 * `progress`). Never fails (dies when out of memory). */
void leap_pool_init(struct leap_pool *p, int slots, struct leap_out *out, struct leap_progress *progress,
		    long *errors, leap_pool_start_fn start, leap_pool_done_fn finish, void *arg);

/* Reads every record of `in` and writes it, decided, in input order. Input lines that are not
 * records become error records (counted in *errors). Returns 0 when the input ended and every
 * entry was written, 1 when an ending signal was caught (leap_signal_caught): the entries
 * ready up to the first undecided one were written and the rest wait for leap_pool_abort. */
int leap_pool_run(struct leap_pool *p, struct leap_in *in);

/* Reads what running workers wrote, for up to `ms` milliseconds (-1: until one ends or a
 * signal arrives); entries of workers that ended are handed to `finish`. Flushes the output
 * first when it may wait. For use in `start`, to wait for a condition on running workers. */
void leap_pool_collect(struct leap_pool *p, int ms);

/* The slot the next leap_pool_fork takes: the first free one after the last taken (the caller
 * made sure that running < slots). For work that must be done for that slot's device before
 * the fork. */
int leap_pool_next_slot(const struct leap_pool *p);

/* Forks a worker for e on the next free slot (the caller made sure that running < slots)
 * counting it under e->kind. In the parent: returns the worker's pid (> 0). In the worker:
 * returns 0 with *slot set; the worker computes its result and ends with
 * leap_pool_child_exit. Dies when the pipe or the fork fails. */
pid_t leap_pool_fork(struct leap_pool *p, struct leap_pool_entry *e, int *slot);

/* Ends a worker: sends `res` (may be NULL: the parent then hands `finish` NULL) unless a
 * signal was caught, and exits. Never returns. */
noreturn void leap_pool_child_exit(struct leap_pool *p, json_t *res);

/* Flushes the output (a reader downstream sees every record written so far). */
void leap_pool_flush(struct leap_pool *p);

/* After leap_pool_run returned 1: ends every worker (SIGTERM, then SIGKILL after a grace of
 * a few seconds), reaps them, discards their results, and frees the queue. */
void leap_pool_abort(struct leap_pool *p);

/* Frees the queue after leap_pool_run returned 0. */
void leap_pool_free(struct leap_pool *p);

#endif
