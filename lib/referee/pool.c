/* pool.c - records in input order, some handed to forked workers: the ordered queue of leap-verify and leap-bench. */
/*
 * The contract (input order, slots, signals) is pool.h's. Workers are forked processes rather
 * than threads: a record's verification holds a sandbox, temporary directories and signal
 * state of its own, and a worker that dies or is killed takes only its record with it. A worker
 * sends its result as one JSON line on its own pipe; the parent polls every pipe, and writes an
 * entry only once every entry before it has been written.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fdio.h"
#include "pool.h"
#include "core/sig.h"
#include "core/banned.h"

/* Seconds a worker has to end by itself after SIGTERM before it is killed. */
#define ABORT_GRACE 5.0

void leap_pool_init(struct leap_pool *p, int slots, struct leap_out *out, struct leap_progress *progress,
		    long *errors, leap_pool_start_fn start, leap_pool_done_fn finish, void *arg)
{
	memset(p, 0, sizeof *p);
	p->slots = slots < 1 ? 1 : slots;
	p->out = out;
	p->progress = progress;
	p->errors = errors;
	p->start = start;
	p->finish = finish;
	p->arg = arg;
	p->qcap = (size_t)p->slots * 4 + 4;
	p->q = xcalloc(p->qcap, sizeof *p->q);
	p->busy = xcalloc((size_t)p->slots, 1);
	p->last_slot = p->slots - 1; /* so that the first worker gets slot 0 */
	p->child_fd = -1;
}

void leap_pool_flush(struct leap_pool *p)
{
	leap_out_flush(p->out);
}

/* Marks the worker of e as gone (its slot free again). */
static void worker_gone(struct leap_pool *p, struct leap_pool_entry *e)
{
	close(e->fd);
	e->fd = -1;
	e->pid = 0;
	p->busy[e->slot] = 0;
	p->running--;
	p->running_kind[e->kind != 0]--;
}

/* Reads what running workers wrote, and waits up to `ms` milliseconds (-1: no limit) for a
 * worker to end or, when extra_fd >= 0, for extra_fd to become readable. Ended workers are
 * handed to `finish`. Returns 1 when extra_fd is readable. */
static int wait_any(struct leap_pool *p, int ms, int extra_fd)
{
	if (ms)
		leap_pool_flush(p); /* what is finished reaches the reader while we wait */
	struct pollfd *pf = xcalloc(p->nq + 1, sizeof *pf);
	size_t *idx = xcalloc(p->nq + 1, sizeof *idx), n = 0;
	for (size_t i = 0; i < p->nq; i++) {
		struct leap_pool_entry *e = &p->q[(p->qhead + i) % p->qcap];
		if (e->pid > 0) {
			pf[n] = (struct pollfd){e->fd, POLLIN, 0};
			idx[n++] = (p->qhead + i) % p->qcap;
		}
	}
	int extra_ready = 0;
	size_t nw = n;
	if (extra_fd >= 0)
		pf[n++] = (struct pollfd){extra_fd, POLLIN, 0};
	if (n && !leap_signal_caught() && poll(pf, n, ms) > 0) {
		extra_ready = extra_fd >= 0 && pf[nw].revents != 0;
		for (size_t i = 0; i < nw; i++) {
			if (!pf[i].revents)
				continue;
			struct leap_pool_entry *e = &p->q[idx[i]];
			char chunk[4096];
			ssize_t r = read(e->fd, chunk, sizeof chunk);
			if (r > 0) {
				leap_buf_add(&e->buf, chunk, (size_t)r);
				continue;
			}
			if (r < 0 && errno == EINTR)
				continue;
			int ws;
			while (waitpid(e->pid, &ws, 0) < 0 && errno == EINTR)
				;
			worker_gone(p, e);
			json_t *res = e->buf.s ? json_loadb(e->buf.s, e->buf.len, 0, NULL) : NULL;
			leap_buf_free(&e->buf);
			p->finish(p->arg, p, e, res);
			json_decref(res);
		}
	}
	free(pf);
	free(idx);
	return extra_ready;
}

void leap_pool_collect(struct leap_pool *p, int ms)
{
	wait_any(p, ms, -1);
}

/* Frees what an entry owns and empties it. */
static void entry_free(struct leap_pool_entry *e)
{
	json_decref(e->rec);
	json_decref(e->add);
	free(e->raw);
	free(e->file);
	leap_buf_free(&e->buf);
	memset(e, 0, sizeof *e);
}

/* Writes the ready entries at the head of the queue, in input order. */
static void drain(struct leap_pool *p)
{
	while (p->nq) {
		struct leap_pool_entry *e = &p->q[p->qhead];
		if (!e->ready)
			return;
		if (e->mode == LEAP_POOL_RAW)
			leap_out_raw(p->out, e->raw, e->len);
		else if (e->mode == LEAP_POOL_REC)
			leap_out_write(p->out, e->rec);
		else
			leap_out_splice(p->out, e->raw, e->len, e->rec, e->add);
		entry_free(e);
		p->qhead = (p->qhead + 1) % p->qcap;
		p->nq--;
		p->done++;
		leap_progress_update(p->progress, p->done, *p->errors);
	}
}

int leap_pool_run(struct leap_pool *p, struct leap_in *in)
{
	json_t *rec;
	enum leap_read r;
	for (;;) {
		while ((p->nq == p->qcap || p->running >= p->slots) && !leap_signal_caught()) {
			leap_pool_collect(p, -1);
			drain(p);
		}
		/* While the input has no whole line yet, finished workers are still written out. */
		int fd;
		while (p->running && !leap_signal_caught() && (fd = leap_in_wait_fd(in)) >= 0 && !wait_any(p, -1, fd))
			drain(p);
		drain(p);
		if (leap_signal_caught())
			break;
		if ((r = leap_in_next(in, &rec)) == LEAP_READ_EOF)
			break;
		struct leap_pool_entry *e = &p->q[(p->qhead + p->nq++) % p->qcap];
		memset(e, 0, sizeof *e);
		e->fd = -1;
		e->rec = rec;
		e->raw = xstrndup(in->buf, in->len);
		e->len = in->len;
		e->file = xstrdup(in->name);
		e->line = in->line;
		if (r == LEAP_READ_BAD) {
			e->mode = LEAP_POOL_REC;
			e->ready = 1;
			(*p->errors)++;
		} else {
			p->start(p->arg, p, e);
		}
		leap_pool_collect(p, 0);
		drain(p);
	}
	while (p->nq && !leap_signal_caught()) {
		leap_pool_collect(p, -1);
		drain(p);
	}
	drain(p); /* what was decided before the signal */
	return leap_signal_caught() ? 1 : 0;
}

int leap_pool_next_slot(const struct leap_pool *p)
{
	int s = (p->last_slot + 1) % p->slots; /* the next free slot after the last one */
	while (p->busy[s])
		s = (s + 1) % p->slots;
	return s;
}

pid_t leap_pool_fork(struct leap_pool *p, struct leap_pool_entry *e, int *slot)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC))
		leap_die_errno("pipe");
	leap_pool_flush(p); /* nothing buffered may be written twice */
	int s = leap_pool_next_slot(p);
	p->last_slot = s;
	pid_t pid = fork();
	if (pid < 0)
		leap_die_errno("fork");
	if (pid == 0) {
		close(fds[0]);
		if (leap_signals_install_worker())
			_exit(1);
		p->child_fd = fds[1];
		*slot = s;
		return 0;
	}
	close(fds[1]);
	e->pid = pid;
	e->fd = fds[0];
	e->slot = s;
	p->busy[s] = 1;
	p->running++;
	p->running_kind[e->kind != 0]++;
	return pid;
}

void leap_pool_child_exit(struct leap_pool *p, json_t *res)
{
	if (leap_signal_caught() || !res)
		_exit(1);
	struct leap_buf out = {0};
	if (leap_json_append(&out, res) || leap_write_full(p->child_fd, out.s, out.len))
		_exit(1);
	_exit(0);
}

void leap_pool_abort(struct leap_pool *p)
{
	for (size_t i = 0; i < p->nq; i++) {
		struct leap_pool_entry *e = &p->q[(p->qhead + i) % p->qcap];
		if (e->pid > 0)
			kill(e->pid, SIGTERM); /* it ends its sandbox and removes its temporary directory */
	}
	double until = leap_now() + ABORT_GRACE;
	int killed = 0;
	while (p->running) {
		int left = 0;
		for (size_t i = 0; i < p->nq; i++) {
			struct leap_pool_entry *e = &p->q[(p->qhead + i) % p->qcap];
			if (e->pid <= 0)
				continue;
			if (waitpid(e->pid, NULL, WNOHANG) == e->pid)
				worker_gone(p, e);
			else
				left++;
		}
		if (!left)
			break;
		if (!killed && leap_now() > until) {
			for (size_t i = 0; i < p->nq; i++) {
				struct leap_pool_entry *e = &p->q[(p->qhead + i) % p->qcap];
				if (e->pid > 0)
					kill(e->pid, SIGKILL); /* its sandbox dies with it (parent-death signal) */
			}
			killed = 1;
		}
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	leap_pool_free(p);
}

void leap_pool_free(struct leap_pool *p)
{
	for (size_t i = 0; i < p->nq; i++)
		entry_free(&p->q[(p->qhead + i) % p->qcap]);
	free(p->q);
	free(p->busy);
	p->q = NULL;
	p->busy = NULL;
	p->nq = 0;
}
