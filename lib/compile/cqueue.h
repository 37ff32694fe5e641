/* cqueue.h - records in input order, their compiles shared by key and run by threads: leap-compile's engine. */
#ifndef LEAP_CQUEUE_H
#define LEAP_CQUEUE_H

#include <pthread.h>
#include <stddef.h>

#include "compile.h"
#include "core/jsonl.h"

/*
 * The contract.
 *
 * 1. leap_cqueue_init, then leap_cqueue_start: `workers` threads compile, one writer thread hands
 *    finished records to `emit` strictly in input order.
 * 2. The program reads records on its own thread. For each it makes a slot (a struct of its
 *    own whose first member is a struct leap_cqueue_slot, zeroed), sets its state, and for one
 *    that needs a compile calls leap_cqueue_submit (which answers it from the cache, attaches it
 *    to a running compile of the same key, or queues a compile); then leap_cqueue_push, which
 *    waits while the window of records not yet written is full.
 * 3. emit(arg, slot) runs on the writer thread with the slot's state final (never JOB or DUP:
 *    their result has been copied into slot->res, a DUP's marked cached) and owns the slot.
 *    When nothing is ready the writer flushes `out`; a reader that has gone (EPIPE) calls
 *    out->on_epipe, which must not return.
 * 4. leap_cqueue_finish after the last push: waits until every record is emitted, ends the
 *    threads. Then leap_cqueue_free.
 *
 * Signals: a program ending on a signal takes leap_cqueue_lock before it aborts the compiler and
 * keeps it until it dies, so that the writer emits no verdict of a compile it killed.
 */

/* Where a record stands. The reader sets it once; the writer's emit may turn a result that is
 * leap's own failure (internal) into LEAP_CQUEUE_ERROR. */
enum leap_cqueue_state {
	LEAP_CQUEUE_NEW,      /* not yet looked at */
	LEAP_CQUEUE_BAD,      /* the record is an error record from the reader: written as it is */
	LEAP_CQUEUE_CARRIED,  /* the record came with an earlier stage's `error`: passed on as it is */
	LEAP_CQUEUE_ERROR,    /* the record carries the `error` set here */
	LEAP_CQUEUE_NO_CODE,  /* extraction found nothing */
	LEAP_CQUEUE_RESULT,   /* the result is in `res`: from the cache, or from the compile the writer took */
	LEAP_CQUEUE_JOB,      /* waits on its own compile */
	LEAP_CQUEUE_DUP,      /* waits on another record's compile of the same key */
};

struct leap_cqueue_job;

struct leap_cqueue_slot {
	struct leap_cqueue_slot *next;
	enum leap_cqueue_state state;
	struct leap_cqueue_job *job;  /* LEAP_CQUEUE_JOB, LEAP_CQUEUE_DUP until the writer takes the result */
	struct leap_cresult res;  /* the result, once known (free it with the slot) */
};

typedef void (*leap_cqueue_emit_fn)(void *arg, struct leap_cqueue_slot *s);

struct leap_cq {
	struct leap_compiler *comp;
	struct leap_out *out;
	int workers, batch;       /* batch: --batch K (candidates per translation unit; <= 1: none) */
	leap_cqueue_emit_fn emit;
	void *arg;

	pthread_mutex_t lock;
	pthread_cond_t work_cv, done_cv, space_cv;
	struct leap_cqueue_slot *head, *tail;
	size_t window, max_window;
	struct leap_cqueue_job *qhead, *qtail;
	struct leap_cqueue_job **inflight;
	size_t ninflight, capinflight;
	int eof;
	pthread_t *threads;       /* workers, then the writer */
	const char *lock_dir;     /* the cache whose timing lock a compile takes shared (tlock.h), or NULL */
};

void leap_cqueue_init(struct leap_cq *q, struct leap_compiler *comp, struct leap_out *out, int workers, int batch,
		  leap_cqueue_emit_fn emit, void *arg);
/* Starts the threads (with the calling thread's signal mask). Dies when one cannot start. */
void leap_cqueue_start(struct leap_cq *q);
/* Sets s to the result of compiling `code` (taken over) for v under cache key `key`: from the
 * cache (LEAP_CQUEUE_RESULT), a compile of the same key running now (LEAP_CQUEUE_DUP; not with
 * --no-cache), or a new compile (LEAP_CQUEUE_JOB). */
void leap_cqueue_submit(struct leap_cq *q, struct leap_cqueue_slot *s, struct leap_variant *v, char *code, const char *key);
/* Appends s to the window, waiting while it is full. */
void leap_cqueue_push(struct leap_cq *q, struct leap_cqueue_slot *s);
/* No more slots: waits until every slot is emitted, then ends the threads. */
void leap_cqueue_finish(struct leap_cq *q);
void leap_cqueue_free(struct leap_cq *q);
void leap_cqueue_lock(struct leap_cq *q);
void leap_cqueue_unlock(struct leap_cq *q);

#endif
