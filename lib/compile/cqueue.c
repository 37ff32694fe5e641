/* cqueue.c - records in input order, their compiles shared by key and run by threads: leap-compile's engine. */
/*
 * leap-compile reads records on one thread, compiles on `workers` threads and writes on one,
 * and the output must keep the input's order while compiles finish in any order. The records
 * not yet written form a window (a list in input order, bounded, so that a slow compile at
 * its head cannot make the reader hold the whole input); a compile is a job in a FIFO queue
 * that the workers take from. Threads rather than processes (as in pool.c) because a compile
 * is a child process already: the threads only wait on compilers, and the cache, the shim
 * objects and the running-compile table are shared in memory.
 *
 * A job is shared by every record with the same cache key while it runs (the inflight table),
 * reference-counted by the slots waiting on it, so that a stream of duplicates runs the
 * compiler once. With --batch, a worker takes queued cuda jobs of the same variant along and
 * compiles them in one translation unit (cbatch.c); whichever the batch does not build is
 * compiled alone. One mutex guards the window, the queue and the table; the three condition
 * variables wake the workers (work), the writer (done) and the reader (space).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cqueue.h"
#include "referee/tlock.h"
#include "core/util.h"
#include "core/banned.h"

/* A compile shared by every record with the same key while it runs. */
struct leap_cqueue_job {
	struct leap_cqueue_job *qnext; /* work queue */
	char key[65];
	struct leap_variant *v;
	char *code;
	int done;
	int refs;                  /* slots waiting on it */
	struct leap_cresult res;
};

static void job_unref(struct leap_cqueue_job *j)
{
	if (--j->refs > 0)
		return;
	free(j->code);
	leap_cresult_free(&j->res);
	free(j);
}

void leap_cqueue_init(struct leap_cq *q, struct leap_compiler *comp, struct leap_out *out, int workers, int batch,
		  leap_cqueue_emit_fn emit, void *arg)
{
	memset(q, 0, sizeof(*q));
	q->comp = comp;
	q->out = out;
	q->workers = workers < 1 ? 1 : workers;
	q->batch = batch;
	q->emit = emit;
	q->arg = arg;
	q->max_window = (size_t)q->workers * 8 < 64 ? 64 : (size_t)q->workers * 8;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work_cv, NULL);
	pthread_cond_init(&q->done_cv, NULL);
	pthread_cond_init(&q->space_cv, NULL);
}

void leap_cqueue_lock(struct leap_cq *q)
{
	pthread_mutex_lock(&q->lock);
}

void leap_cqueue_unlock(struct leap_cq *q)
{
	pthread_mutex_unlock(&q->lock);
}

void leap_cqueue_submit(struct leap_cq *q, struct leap_cqueue_slot *s, struct leap_variant *v, char *code, const char *key)
{
	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; q->comp->o.reuse && i < q->ninflight; i++) { /* --no-cache: a compiler each */
		if (!strcmp(q->inflight[i]->key, key)) {
			s->job = q->inflight[i];
			s->job->refs++;
			s->state = LEAP_CQUEUE_DUP;
			pthread_mutex_unlock(&q->lock);
			free(code);
			return;
		}
	}
	pthread_mutex_unlock(&q->lock);

	if (leap_compile_lookup(q->comp, v, key, &s->res)) {
		s->state = LEAP_CQUEUE_RESULT;
		free(code);
		return;
	}
	struct leap_cqueue_job *j = xcalloc(1, sizeof(*j));
	memcpy(j->key, key, sizeof(j->key));
	j->v = v;
	j->code = code;
	j->refs = 1;
	s->job = j;
	s->state = LEAP_CQUEUE_JOB;
	pthread_mutex_lock(&q->lock);
	xgrow((void **)&q->inflight, &q->capinflight, q->ninflight + 1, sizeof(*q->inflight));
	q->inflight[q->ninflight++] = j;
	if (q->qtail)
		q->qtail->qnext = j;
	else
		q->qhead = j;
	q->qtail = j;
	pthread_cond_signal(&q->work_cv);
	pthread_mutex_unlock(&q->lock);
}

void leap_cqueue_push(struct leap_cq *q, struct leap_cqueue_slot *s)
{
	pthread_mutex_lock(&q->lock);
	while (q->window >= q->max_window)
		pthread_cond_wait(&q->space_cv, &q->lock);
	if (q->tail)
		q->tail->next = s;
	else
		q->head = s;
	q->tail = s;
	q->window++;
	pthread_cond_broadcast(&q->done_cv);
	pthread_mutex_unlock(&q->lock);
}

/* A worker thread: takes the next job (and, with --batch, queued jobs of the same variant) and
 * compiles it, until the queue is empty after the last record. */
static void *worker(void *arg)
{
	struct leap_cq *q = arg;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->qhead && !q->eof)
			pthread_cond_wait(&q->work_cv, &q->lock);
		struct leap_cqueue_job *j = q->qhead;
		if (!j)
			break;
		q->qhead = j->qnext;
		if (!q->qhead)
			q->qtail = NULL;
		/* --batch: take queued candidates of the same task and backend along */
		size_t n = 1;
		struct leap_cqueue_job **group = xcalloc((size_t)(q->batch > 1 ? q->batch : 1), sizeof(*group));
		group[0] = j;
		if (q->batch > 1 && (leap_backend_of(j->v->backend)->flags & LEAP_BK_BATCH) && leap_compile_batchable(j->code)) {
			if (!q->eof) {
				/* give the reader a moment to queue more of them (throughput over latency) */
				pthread_mutex_unlock(&q->lock);
				struct timespec ts = {0, 100000000};
				nanosleep(&ts, NULL);
				pthread_mutex_lock(&q->lock);
			}
			struct leap_cqueue_job *prev = NULL;
			for (struct leap_cqueue_job *o = q->qhead; o && n < (size_t)q->batch;) {
				struct leap_cqueue_job *next = o->qnext;
				if (o->v == j->v && leap_compile_batchable(o->code)) {
					if (prev)
						prev->qnext = next;
					else
						q->qhead = next;
					if (q->qtail == o)
						q->qtail = prev;
					group[n++] = o;
				} else {
					prev = o;
				}
				o = next;
			}
		}
		pthread_mutex_unlock(&q->lock);
		int tl = leap_timing_share(q->lock_dir, 1); /* a compiler runs on the cpu (tlock.h) */
		if (n > 1) {
			const char **codes = xcalloc(n, sizeof(char *)), **keys = xcalloc(n, sizeof(char *));
			struct leap_cresult *res = xcalloc(n, sizeof(*res));
			int *done = xcalloc(n, sizeof(int));
			for (size_t i = 0; i < n; i++) {
				codes[i] = group[i]->code;
				keys[i] = group[i]->key;
			}
			leap_compile_batch(q->comp, j->v, n, codes, keys, res, done);
			for (size_t i = 0; i < n; i++) {
				if (done[i])
					group[i]->res = res[i];
				else
					leap_compile_run(q->comp, group[i]->v, group[i]->code, group[i]->key, &group[i]->res);
			}
			free(codes);
			free(keys);
			free(res);
			free(done);
		} else {
			leap_compile_run(q->comp, j->v, j->code, j->key, &j->res);
		}
		leap_timing_unshare(tl);
		pthread_mutex_lock(&q->lock);
		for (size_t g = 0; g < n; g++) {
			group[g]->done = 1;
			for (size_t i = 0; i < q->ninflight; i++)
				if (q->inflight[i] == group[g]) {
					q->inflight[i] = q->inflight[--q->ninflight];
					break;
				}
		}
		free(group);
		pthread_cond_broadcast(&q->done_cv);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static int ready(const struct leap_cqueue_slot *s)
{
	return !s->job || s->job->done;
}

/* Takes the result of the job s waits on into s->res and lets go of the job. */
static void take_result(struct leap_cq *q, struct leap_cqueue_slot *s)
{
	leap_cresult_copy(&s->res, &s->job->res);
	if (s->state == LEAP_CQUEUE_DUP) {
		/* a duplicate of a record compiled in this run: no compiler ran for it */
		s->res.compiled_ms = s->res.ms;
		s->res.ms = 0;
		s->res.cached = 1;
	}
	pthread_mutex_lock(&q->lock);
	job_unref(s->job);
	pthread_mutex_unlock(&q->lock);
	s->job = NULL;
	s->state = LEAP_CQUEUE_RESULT;
}

/* The writer thread: hands the slots to emit in input order as they become ready, flushing the
 * output whenever it has to wait, until the last one after the end of the input. */
static void *writer(void *arg)
{
	struct leap_cq *q = arg;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (!q->head || !ready(q->head)) {
			if (!q->head && q->eof)
				break;
			/* nothing to write now: let the next stage see what we have */
			pthread_mutex_unlock(&q->lock);
			if (fflush(q->out->fp) == EOF) {
				if (errno == EPIPE && q->out->on_epipe)
					q->out->on_epipe(q->out->epipe_arg);
				leap_die_errno("write error");
			}
			pthread_mutex_lock(&q->lock);
			while ((!q->head && !q->eof) || (q->head && !ready(q->head)))
				pthread_cond_wait(&q->done_cv, &q->lock);
			continue;
		}
		struct leap_cqueue_slot *s = q->head;
		q->head = s->next;
		if (!q->head)
			q->tail = NULL;
		q->window--;
		pthread_cond_signal(&q->space_cv);
		pthread_mutex_unlock(&q->lock);
		if (s->job)
			take_result(q, s);
		q->emit(q->arg, s);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

void leap_cqueue_start(struct leap_cq *q)
{
	q->threads = xcalloc((size_t)q->workers + 1, sizeof(pthread_t));
	for (int i = 0; i < q->workers; i++)
		if (pthread_create(&q->threads[i], NULL, worker, q))
			leap_die("cannot start a thread");
	if (pthread_create(&q->threads[q->workers], NULL, writer, q))
		leap_die("cannot start a thread");
}

void leap_cqueue_finish(struct leap_cq *q)
{
	pthread_mutex_lock(&q->lock);
	q->eof = 1;
	pthread_cond_broadcast(&q->work_cv);
	pthread_cond_broadcast(&q->done_cv);
	pthread_mutex_unlock(&q->lock);
	for (int i = 0; i <= q->workers; i++)
		pthread_join(q->threads[i], NULL);
	free(q->threads);
	q->threads = NULL;
}

void leap_cqueue_free(struct leap_cq *q)
{
	free(q->inflight);
	pthread_cond_destroy(&q->work_cv);
	pthread_cond_destroy(&q->done_cv);
	pthread_cond_destroy(&q->space_cv);
	pthread_mutex_destroy(&q->lock);
	memset(q, 0, sizeof(*q));
}
