/* serve_pipe.c - leap-serve's engine: one long-lived filter pipeline per device, and short runs. */
/*
 * The server gives no verdict of its own: each device keeps one pipeline of the real programs,
 * `leap-compile | leap-verify --device N [| leap-bench --device N]`, started through
 * lib/core/child.h, and feeds it records as a shell pipe would. The filters answer every record
 * once and in input order, so the answers are matched in that order; each record also carries
 * a tag, its first field (the filters pass fields they do not own through untouched), which
 * is checked and removed. A long-lived pipeline keeps the filters' start-up (task loading,
 * reference builds, sandbox set-up) off every request, and lets a device compile one group
 * while it verifies the one before.
 *
 * Cancelling is the reason this module restarts pipelines: a record already inside one (a
 * candidate that runs for its whole timeout) can only be stopped with its pipeline, so a
 * client that leaves or runs out of time makes its device end the pipeline (SIGTERM: the
 * filters kill their sandboxes and remove their temporaries), put the other requests'
 * unanswered records back at the front of the queue in their order, and start afresh. A
 * pipeline that ends by itself is restarted the same way; a record it could not answer twice
 * gets an error record, so that one record that kills a filter cannot stall a device.
 *
 * Short runs (leap-prune over a finished group, leap-prune | leap-rank over a reward batch)
 * are started per run by one more thread, with their input written and output read by poll.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/banned.h"

/* The largest answer line a pipeline may write before it is taken for broken. */
#define SRV_MAX_ANSWER ((size_t)256 << 20)

/* The child's signal dispositions: leap-serve ignores SIGPIPE, its children must not. */
static void child_early(const struct leap_child *ch, void *arg)
{
	(void)ch;
	(void)arg;
	signal(SIGPIPE, SIG_DFL);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int srv_pipeline_start(struct srv *s, struct srv_pipeline *p, char *const argv[][SRV_ARGS], int n,
		       int want3, char *why, size_t whylen)
{
	p->n = 0;
	p->in_fd = p->out_fd = p->fd3 = -1;
	int in[2], prev = -1, p3[2] = {-1, -1};
	if (pipe2(in, O_CLOEXEC)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (want3 && pipe2(p3, O_CLOEXEC)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return -1;
	}
	prev = in[0];
	p->in_fd = in[1];
	for (int i = 0; i < n; i++) {
		int out[2];
		if (pipe2(out, O_CLOEXEC)) {
			snprintf(why, whylen, "pipe: %s", strerror(errno));
			close(prev);
			goto fail;
		}
		struct leap_child *ch = &p->st[i];
		leap_child_init(ch);
		ch->argv = argv[i];
		ch->env = s->env;
		ch->fd[0] = prev;
		ch->fd[1] = out[1];
		ch->fd[2] = 2;
		ch->nfd = 3;
		if (want3 && i == n - 1) {
			ch->fd[3] = p3[1];
			ch->nfd = 4;
		}
		ch->early = child_early;
		ch->fail_prefix = "leap-serve: ";
		ch->fail_slot = 2;
		ch->report_slot = -1;
		int rc = leap_child_start(ch);
		int err = errno;
		close(prev);
		close(out[1]);
		prev = out[0];
		if (rc) {
			snprintf(why, whylen, "cannot start %s: %s", argv[i][0], strerror(err));
			close(prev);
			goto fail;
		}
		p->n++;
	}
	p->out_fd = prev;
	if (want3) {
		close(p3[1]);
		p->fd3 = p3[0];
	}
	set_nonblock(p->in_fd);
	set_nonblock(p->out_fd);
	if (p->fd3 >= 0)
		set_nonblock(p->fd3);
	return 0;
fail:
	if (want3) {
		close_fd(&p3[0]);
		close_fd(&p3[1]);
	}
	srv_pipeline_end(p, 1, 0, why + strlen(why), 0);
	return -1;
}

int srv_pipeline_end(struct srv_pipeline *p, int kill_now, double grace, char *why, size_t whylen)
{
	close_fd(&p->in_fd);
	close_fd(&p->out_fd);
	close_fd(&p->fd3);
	if (kill_now)
		for (int i = 0; i < p->n; i++)
			if (p->st[i].pid > 0)
				kill(p->st[i].pid, SIGTERM);
	int bad = 0;
	for (int i = 0; i < p->n; i++) {
		struct leap_child *ch = &p->st[i];
		if (ch->pid <= 0)
			continue;
		leap_child_finish(ch, grace);
		if (bad || kill_now)
			continue;
		if (ch->setup_error[0]) {
			bad = 1;
			if (whylen)
				snprintf(why, whylen, "%s", ch->setup_error);
		} else if (ch->exit_code != 0 && ch->exit_code != 1) {
			bad = 1;
			if (whylen && ch->term_signal)
				snprintf(why, whylen, "%s was killed by signal %d", ch->argv[0], ch->term_signal);
			else if (whylen)
				snprintf(why, whylen, "%s exited with status %d", ch->argv[0], ch->exit_code);
		}
	}
	p->n = 0;
	return bad ? -1 : 0;
}

/* ---- the device threads ---- */

/* The device's pipeline as argument vectors. */
static int device_argv(struct srv_dev *d, char *argv[][SRV_ARGS])
{
	const struct leap_serve_opts *o = d->s->o;
	int n = 0, a = 0;
	argv[n][a++] = xasprintf("%s/leap-compile", o->bindir);
	argv[n][a++] = xstrdup("--no-progress");
	if (o->backend) {
		argv[n][a++] = xstrdup("--backend");
		argv[n][a++] = xstrdup(o->backend);
	}
	if (o->jobs) {
		argv[n][a++] = xstrdup("--jobs");
		argv[n][a++] = xasprintf("%d", o->jobs);
	}
	argv[n++][a] = NULL;
	a = 0;
	argv[n][a++] = xasprintf("%s/leap-verify", o->bindir);
	argv[n][a++] = xstrdup("--no-progress");
	argv[n][a++] = xstrdup("--device");
	argv[n][a++] = xstrdup(d->name);
	if (o->jobs) {
		argv[n][a++] = xstrdup("--jobs");
		argv[n][a++] = xasprintf("%d", o->jobs);
	}
	argv[n++][a] = NULL;
	if (o->bench) {
		a = 0;
		argv[n][a++] = xasprintf("%s/leap-bench", o->bindir);
		argv[n][a++] = xstrdup("--no-progress");
		argv[n][a++] = xstrdup("--device");
		argv[n][a++] = xstrdup(d->name);
		argv[n++][a] = NULL;
	}
	return n;
}

static void argv_free(char *argv[][SRV_ARGS], int n)
{
	for (int i = 0; i < n; i++)
		for (int a = 0; argv[i][a]; a++)
			free(argv[i][a]);
}

/* Hands an item back to the event loop. Under mu. */
static void hand_back(struct srv *s, struct srv_item *it)
{
	it->next = NULL;
	if (s->dtail)
		s->dtail->next = it;
	else
		s->dhead = it;
	s->dtail = it;
}

static void wake_loop(struct srv *s)
{
	if (s->ctx)
		lws_cancel_service(s->ctx);
}

static void wake_fd(int fd)
{
	char c = 1;
	ssize_t r = write(fd, &c, 1);
	(void)r; /* a full wake pipe already wakes the thread */
}

/* Answers `it` with an error record saying why (the pipeline could not). Under mu. */
static void answer_error(struct srv *s, struct srv_item *it, const char *why)
{
	json_t *rec = json_loadb(it->in, it->inlen, 0, NULL);
	if (rec && json_is_object(rec)) {
		json_object_del(rec, SRV_TAG);
		leap_record_set_error(rec, "<request>", it->idx + 1, "%s", why);
	} else {
		json_decref(rec);
		rec = leap_error_record("<request>", it->idx + 1, NULL, 0, "%s", why);
	}
	struct leap_buf b = {0};
	if (leap_json_append(&b, rec))
		leap_die("internal error: an error record is not JSON");
	json_decref(rec);
	free(it->out);
	it->outlen = b.len;
	it->out = leap_buf_detach(&b);
	hand_back(s, it);
}

/* The pipeline ended (by itself, or to cancel): its unanswered items go back to the front of
 * the queue in their order, those cancelled or failed twice are handed back. Under mu. */
static void requeue(struct srv_dev *d, const char *why)
{
	struct srv *s = d->s;
	struct srv_item *keep = NULL, **tail = &keep;
	long nkeep = 0;
	for (struct srv_item *it = d->fhead, *next; it; it = next) {
		next = it->next;
		it->sent = 0;
		if (it->cancel) {
			hand_back(s, it);
		} else if (why && ++it->attempts >= 2) {
			answer_error(s, it, why);
		} else {
			*tail = it;
			tail = &it->next;
			nkeep++;
		}
	}
	d->fhead = d->ftail = NULL;
	d->nf = 0;
	d->ncancel = 0;
	if (keep) {
		struct srv_item *last = keep;
		while (last->next)
			last = last->next;
		last->next = d->qhead;
		if (!d->qhead)
			d->qtail = last;
		d->qhead = keep;
		d->nq += nkeep;
	}
	wake_loop(s);
}

/* Ends the device's pipeline; `why` (NULL when we ended it to cancel) counts toward the
 * items' attempts. Takes mu. */
static void device_stop_pipeline(struct srv_dev *d, int kill_now, const char *why)
{
	char buf[256] = "";
	if (d->running) {
		srv_pipeline_end(&d->p, kill_now, kill_now ? 5.0 : 60.0, buf, sizeof(buf));
		d->running = 0;
	}
	d->wcur = NULL;
	d->woff = 0;
	leap_buf_reset(&d->rbuf);
	pthread_mutex_lock(&d->s->mu);
	d->s->m.restarts++;
	requeue(d, why ? (buf[0] ? buf : why) : NULL);
	pthread_mutex_unlock(&d->s->mu);
}

/* One answer line from the pipeline: matched with the oldest item written. Under mu. Returns
 * -1 when the line answers no item (the pipeline is then restarted). */
static int take_answer(struct srv_dev *d, char *line, size_t len)
{
	struct srv *s = d->s;
	struct srv_item *it = d->fhead;
	if (!it) {
		leap_warn("device %s: the pipeline wrote a line no record was waiting for", d->name);
		return -1;
	}
	if (srv_untag(line, &len, it->tag)) {
		leap_warn("device %s: the pipeline's answer does not carry the tag of the record it answers", d->name);
		return -1;
	}
	d->fhead = it->next;
	if (!d->fhead)
		d->ftail = NULL;
	d->nf--;
	d->ncancel -= it->cancel;
	if (d->wcur == it) /* answered before we saw its last byte written: cannot happen */
		d->wcur = NULL;
	it->sent = 0;
	it->out = xstrndup(line, len);
	it->outlen = len;
	hand_back(s, it);
	return 0;
}

/* Reads what the pipeline wrote; returns 1 at its end (or a broken answer), else 0. */
static int device_read(struct srv_dev *d)
{
	char chunk[65536];
	for (;;) {
		ssize_t r = read(d->p.out_fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r <= 0)
			return 1;
		leap_buf_add(&d->rbuf, chunk, (size_t)r);
		if (d->rbuf.len > SRV_MAX_ANSWER)
			return 1;
	}
	size_t start = 0;
	int bad = 0, any = 0;
	pthread_mutex_lock(&d->s->mu);
	for (;;) {
		char *nl = memchr(d->rbuf.s + start, '\n', d->rbuf.len - start);
		if (!nl)
			break;
		size_t len = (size_t)(nl - (d->rbuf.s + start));
		if (len && take_answer(d, d->rbuf.s + start, len)) {
			bad = 1;
			break;
		}
		any |= len > 0;
		start += len + 1;
	}
	if (any)
		wake_loop(d->s);
	pthread_mutex_unlock(&d->s->mu);
	if (start) {
		memmove(d->rbuf.s, d->rbuf.s + start, d->rbuf.len - start);
		d->rbuf.len -= start;
	}
	return bad;
}

/* Writes what it can of the item being written; returns -1 when the pipeline is gone. */
static int device_write(struct srv_dev *d)
{
	while (d->wcur && d->woff < d->wcur->inlen) {
		ssize_t w = write(d->p.in_fd, d->wcur->in + d->woff, d->wcur->inlen - d->woff);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w < 0)
			return -1;
		d->woff += (size_t)w;
	}
	if (d->wcur) {
		d->wcur = NULL;
		d->woff = 0;
	}
	return 0;
}

/* Takes the next queued item into the pipeline when there is room. Under mu. */
static void device_next(struct srv_dev *d)
{
	if (d->wcur || !d->qhead || d->nf >= d->s->o->inflight)
		return;
	struct srv_item *it = d->qhead;
	d->qhead = it->next;
	if (!d->qhead)
		d->qtail = NULL;
	d->nq--;
	it->next = NULL;
	it->sent = 1;
	if (d->ftail)
		d->ftail->next = it;
	else
		d->fhead = it;
	d->ftail = it;
	d->nf++;
	d->wcur = it;
	d->woff = 0;
}

static void drain_wake(int fd)
{
	char buf[256];
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void *device_main(void *arg)
{
	struct srv_dev *d = arg;
	struct srv *s = d->s;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		int restart = d->restart, stop = s->stop;
		d->restart = 0;
		int idle = !d->qhead && !d->fhead && !d->wcur;
		if (!restart)
			device_next(d);
		int want = d->qhead || d->fhead;
		pthread_mutex_unlock(&s->mu);
		if (restart) {
			device_stop_pipeline(d, 1, NULL);
			continue;
		}
		if (stop && idle)
			break;
		if (want && !d->running) {
			char *argv[SRV_STAGES][SRV_ARGS] = {{0}};
			int n = device_argv(d, argv);
			char why[256] = "";
			int rc = srv_pipeline_start(s, &d->p, argv, n, 0, why, sizeof(why));
			argv_free(argv, n);
			if (rc) {
				leap_warn("device %s: %s", d->name, why);
				pthread_mutex_lock(&s->mu);
				/* every record queued gets the reason, once tried twice */
				for (struct srv_item *it = d->qhead; it; it = it->next)
					it->attempts++;
				while (d->qhead && d->qhead->attempts >= 2) {
					struct srv_item *it = d->qhead;
					d->qhead = it->next;
					if (!d->qhead)
						d->qtail = NULL;
					d->nq--;
					answer_error(s, it, why);
				}
				pthread_mutex_unlock(&s->mu);
				sleep(1);
				continue;
			}
			d->running = 1;
		}
		struct pollfd pf[3] = {{d->wake[0], POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
		if (d->running) {
			pf[1] = (struct pollfd){d->p.out_fd, POLLIN, 0};
			if (d->wcur)
				pf[2] = (struct pollfd){d->p.in_fd, POLLOUT, 0};
		}
		if (poll(pf, 3, d->running ? 1000 : -1) < 0 && errno != EINTR)
			leap_die_errno("poll");
		if (pf[0].revents)
			drain_wake(d->wake[0]);
		if (!d->running)
			continue;
		int ended = 0;
		if (pf[2].revents & (POLLOUT | POLLERR | POLLHUP))
			ended |= device_write(d) < 0;
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR))
			ended |= device_read(d);
		if (ended) {
			leap_warn("device %s: the pipeline ended with records in it; restarting it", d->name);
			device_stop_pipeline(d, 1, "the pipeline ended before it answered the record");
		}
	}
	if (d->running) {
		char why[256] = "";
		if (srv_pipeline_end(&d->p, 0, 60.0, why, sizeof(why)))
			leap_warn("device %s: %s", d->name, why);
		d->running = 0;
	}
	return NULL;
}

long srv_room(const struct srv *s, int d)
{
	const struct srv_dev *dv = &s->dev[d];
	return s->o->queue - dv->nq - (dv->nf - dv->ncancel);
}

void srv_give(struct srv *s, int d, struct srv_item *head, struct srv_item *tail, long n)
{
	struct srv_dev *dv = &s->dev[d];
	for (struct srv_item *it = head; it; it = it->next)
		it->dev = d;
	if (dv->qtail)
		dv->qtail->next = head;
	else
		dv->qhead = head;
	dv->qtail = tail;
	dv->nq += n;
	wake_fd(dv->wake[1]);
}

void srv_cancel_items(struct srv *s, struct srv_req *req)
{
	for (int i = 0; i < s->ndev; i++) {
		struct srv_dev *d = &s->dev[i];
		struct srv_item **pp = &d->qhead, *last = NULL;
		while (*pp) {
			struct srv_item *it = *pp;
			if (it->req == req) {
				*pp = it->next;
				d->nq--;
				it->cancel = 1;
				hand_back(s, it);
			} else {
				last = it;
				pp = &it->next;
			}
		}
		d->qtail = last;
		int inside = 0;
		for (struct srv_item *it = d->fhead; it; it = it->next)
			if (it->req == req && !it->cancel) {
				it->cancel = 1;
				d->ncancel++;
				inside = 1;
			}
		if (inside) {
			d->restart = 1;
			wake_fd(d->wake[1]);
		}
	}
	wake_loop(s);
}

/* ---- short runs ---- */

void srv_run_stage(struct srv_run *r, const char *const *argv)
{
	int a = 0;
	for (; argv[a] && a < SRV_ARGS - 1; a++)
		r->argv[r->nstage][a] = xstrdup(argv[a]);
	r->argv[r->nstage][a] = NULL;
	r->nstage++;
}

void srv_run_free(struct srv_run *r)
{
	if (!r)
		return;
	argv_free(r->argv, r->nstage);
	leap_buf_free(&r->in);
	leap_buf_free(&r->out);
	leap_buf_free(&r->out3);
	free(r);
}

void srv_queue_run(struct srv *s, struct srv_run *r)
{
	r->next = NULL;
	if (s->rq_tail)
		s->rq_tail->next = r;
	else
		s->rq_head = r;
	s->rq_tail = r;
	wake_fd(s->run_wake[1]);
}

void srv_submit_run(struct srv *s, struct srv_run *run, const long *idx, long n)
{
	struct srv_req *r = run->req;
	for (long k = 0; k < n; k++) {
		long i = idx ? idx[k] : k;
		leap_buf_add(&run->in, r->ans[i], r->anslen[i]);
		leap_buf_add(&run->in, "\n", 1);
	}
	r->pending++;
	pthread_mutex_lock(&s->mu);
	srv_queue_run(s, run);
	pthread_mutex_unlock(&s->mu);
}

/* Reads what fd has into b; 1 at its end. */
static int slurp(int fd, struct leap_buf *b)
{
	char chunk[65536];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0)
			return 1;
		leap_buf_add(b, chunk, (size_t)r);
	}
}

/* Runs r to its end (its input written, its outputs read). */
static void run_one(struct srv *s, struct srv_run *r)
{
	struct srv_pipeline p;
	if (srv_pipeline_start(s, &p, r->argv, r->nstage, 1, r->why, sizeof(r->why))) {
		r->failed = 1;
		return;
	}
	size_t off = 0;
	int out_end = 0, end3 = 0;
	if (!r->in.len)
		close_fd(&p.in_fd);
	while (!out_end || !end3) {
		struct pollfd pf[3] = {{p.out_fd, POLLIN, 0}, {p.fd3, POLLIN, 0}, {p.in_fd, POLLOUT, 0}};
		if (out_end)
			pf[0].fd = -1;
		if (end3)
			pf[1].fd = -1;
		if (poll(pf, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			leap_die_errno("poll");
		}
		if (pf[2].revents) {
			ssize_t w = write(p.in_fd, r->in.s + off, r->in.len - off);
			if (w > 0)
				off += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || off == r->in.len)
				close_fd(&p.in_fd);
		}
		if (pf[0].revents && slurp(p.out_fd, &r->out))
			out_end = 1;
		if (pf[1].revents && slurp(p.fd3, &r->out3))
			end3 = 1;
	}
	if (srv_pipeline_end(&p, 0, 60.0, r->why, sizeof(r->why)))
		r->failed = 1;
}

static void *run_main(void *arg)
{
	struct srv *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		struct srv_run *r = s->rq_head;
		if (r) {
			s->rq_head = r->next;
			if (!s->rq_head)
				s->rq_tail = NULL;
		}
		int stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (!r) {
			if (stop)
				break;
			struct pollfd pf = {s->run_wake[0], POLLIN, 0};
			if (poll(&pf, 1, -1) < 0 && errno != EINTR)
				leap_die_errno("poll");
			drain_wake(s->run_wake[0]);
			continue;
		}
		run_one(s, r);
		pthread_mutex_lock(&s->mu);
		r->next = NULL;
		if (s->rd_tail)
			s->rd_tail->next = r;
		else
			s->rd_head = r;
		s->rd_tail = r;
		wake_loop(s);
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

/* ---- start and stop ---- */

static void wake_pipe(int fd[2])
{
	if (pipe2(fd, O_CLOEXEC | O_NONBLOCK))
		leap_die_errno("pipe");
}

int srv_engine_start(struct srv *s)
{
	s->dev = xcalloc((size_t)s->ndev, sizeof(*s->dev));
	wake_pipe(s->run_wake);
	for (int i = 0; i < s->ndev; i++) {
		struct srv_dev *d = &s->dev[i];
		d->s = s;
		d->index = i;
		d->name = s->o->dev[i];
		wake_pipe(d->wake);
		if ((errno = pthread_create(&d->th, NULL, device_main, d)))
			leap_die_errno("cannot start a device thread");
	}
	if ((errno = pthread_create(&s->run_th, NULL, run_main, s)))
		leap_die_errno("cannot start the run thread");
	return 0;
}

void srv_engine_stop(struct srv *s, int now)
{
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	for (int i = 0; i < s->ndev; i++) {
		if (now && (s->dev[i].fhead || s->dev[i].qhead))
			s->dev[i].restart = 1;
		wake_fd(s->dev[i].wake[1]);
	}
	wake_fd(s->run_wake[1]);
	pthread_mutex_unlock(&s->mu);
	for (int i = 0; i < s->ndev; i++) {
		pthread_join(s->dev[i].th, NULL);
		close(s->dev[i].wake[0]);
		close(s->dev[i].wake[1]);
		leap_buf_free(&s->dev[i].rbuf);
	}
	pthread_join(s->run_th, NULL);
	close(s->run_wake[0]);
	close(s->run_wake[1]);
}

/* ---- tags ---- */

int srv_untag(char *line, size_t *len, uint64_t tag)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "{\"" SRV_TAG "\":%" PRIu64, tag);
	if (*len > (size_t)n && !memcmp(line, head, (size_t)n) && (line[n] == ',' || line[n] == '}')) {
		/* the tag is first, as it was sent: cut it out of the raw text */
		size_t cut = (size_t)n + (line[n] == ',');
		memmove(line + 1, line + cut, *len - cut);
		*len -= cut - 1;
		return 0;
	}
	/* re-serialised by a filter: find the tag as a member */
	json_t *rec = json_loadb(line, *len, 0, NULL);
	json_t *t = rec ? json_object_get(rec, SRV_TAG) : NULL;
	if (!t || !json_is_integer(t) || (uint64_t)json_integer_value(t) != tag) {
		json_decref(rec);
		return -1;
	}
	json_object_del(rec, SRV_TAG);
	struct leap_buf b = {0};
	int rc = leap_json_append(&b, rec);
	json_decref(rec);
	if (rc || b.len > *len) {
		leap_buf_free(&b);
		return -1;
	}
	memcpy(line, b.s, b.len);
	*len = b.len;
	leap_buf_free(&b);
	return 0;
}
