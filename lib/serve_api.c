/* serve_api.c - what leap-serve's endpoints do: records in, the filters' answers out. */
/*
 * Every endpoint turns what a client sends into leap records, gives them to the devices
 * (serve_pipe.c: the real leap-compile | leap-verify | leap-bench) and turns the answers
 * back into what that client expects. Nothing here decides a verdict: a status comes from
 * the filters, a turn's decision and feedback from leap-prune, a reward from leap-rank.
 *
 * - /v1/evaluate: JSON Lines in, JSON Lines out, each record written as soon as it is
 *   answered (completion order; every record keeps its fields, so a client matches them).
 *   The records of one group (`group`, else `task`) go to one device together.
 * - /v1/turn: the same, then leap-prune over each group once all its records are answered;
 *   out come the decided records (with `prune`) and the next-turn records (without).
 * - WebSocket /v1/stream: records in as they come (messages of JSON Lines, the empty message
 *   ends them), each answer a message; a group stays on its first record's device, and while
 *   a device has no room the session is not read (lws_rx_flow_control), so the client's own
 *   sends block instead of a buffer growing here.
 * - OpenEnv (openenv-core's protocol): POST /reset and /step, stateless (the action carries
 *   the record), and the WebSocket /ws, one session per trajectory: reset gives the turn-1
 *   record from leap-prompt run on this machine (its facts are this machine's), each step
 *   evaluates the completion, and leap-prune --group-size 1 --preset debug-all decides
 *   whether the trajectory gets another turn and writes its feedback.
 * - /v1/reward: OpenRLHF's remote reward ({"query","prompts","labels"} in, {"rewards",
 *   "scores","extra_logs"} out). Samples of one prompt form a group; rewards are
 *   leap-rank's scores. A request is known by X-Request-Id, else by the SHA-256 of its body,
 *   so a retry (OpenRLHF retries up to 5 times, 180 s each) joins the evaluation in progress
 *   or gets the kept answer, and nothing is evaluated twice. For the same reason a reward
 *   request runs on when its client leaves (until its deadline); every other request is
 *   cancelled with its client.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "jsonl.h"
#include "serve_int.h"
#include "banned.h"

static const char *const ep_name[EP_COUNT] = {"other", "evaluate", "turn", "reset", "step", "reward", "ws", "prompts", "get", "stream"};

/* The group a record is given to a device with. */
static const char *group_key(const json_t *rec)
{
	const char *g = leap_get_str(rec, "group", NULL);
	return g ? g : leap_get_str(rec, "task", "");
}

static char *dump(const json_t *j, size_t *len)
{
	struct leap_buf b = {0};
	if (leap_json_append(&b, j)) {
		leap_buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return leap_buf_detach(&b);
}

/* ---- requests ---- */

static struct srv_req *req_new(struct srv *s, struct srv_conn *c, int ep)
{
	struct srv_req *r = xcalloc(1, sizeof(*r));
	r->s = s;
	r->conn = c;
	r->ep = ep;
	r->t0 = leap_now();
	double limit = s->o->deadline;
	char buf[32];
	double asked;
	if (c && !srv_query(c, "timeout", buf, sizeof(buf)) && !leap_parse_double(buf, 0.001, 1e9, &asked) &&
	    asked < limit)
		limit = asked;
	r->deadline = r->t0 + limit;
	r->next = s->reqs;
	if (s->reqs)
		s->reqs->prev = r;
	s->reqs = r;
	s->nreqs++;
	if (c)
		c->req = r;
	return r;
}

static void req_free(struct srv_req *r)
{
	struct srv *s = r->s;
	if (r->prev)
		r->prev->next = r->next;
	else
		s->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	s->nreqs--;
	if (r->conn && r->conn->req == r)
		r->conn->req = NULL;
	for (long i = 0; r->ans && i < r->n; i++)
		free(r->ans[i]);
	free(r->ans);
	free(r->anslen);
	for (long g = 0; g < r->ngrp; g++)
		free(r->grp_idx[g]);
	free(r->grp_idx);
	free(r->grp_left);
	free(r->grp_n);
	free(r);
}

/* Frees r once nobody needs it. */
static void req_release(struct srv_req *r)
{
	if (r->pending == 0 && (r->done || !r->conn))
		req_free(r);
}

static void hist_add(struct srv_hist *h, double v)
{
	static const double le[SRV_HBUCKETS] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
	for (int i = 0; i < SRV_HBUCKETS; i++)
		if (v <= le[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

static void count_request(struct srv *s, int ep, int status)
{
	int cls = status / 100;
	s->m.requests[ep][cls >= 0 && cls < 8 ? cls : 0]++;
	if (status == 429)
		s->m.rejected++;
}

/* The request is answered in full (or given up): it leaves the connection. */
static void req_finish(struct srv_req *r, int status)
{
	r->done = 1;
	count_request(r->s, r->ep, status);
	hist_add(&r->s->m.request_s, leap_now() - r->t0);
	if (r->conn && r->conn->req == r)
		r->conn->req = NULL;
	r->conn = NULL;
}

/* Drops what the engine still holds of r. */
static void req_cancel(struct srv_req *r)
{
	struct srv *s = r->s;
	r->done = 1;
	pthread_mutex_lock(&s->mu);
	srv_cancel_items(s, r);
	pthread_mutex_unlock(&s->mu);
}

/* ---- items ---- */

/* A record as the item the pipeline reads: the tag first, then the record's own text. */
static struct srv_item *item_new(struct srv *s, struct srv_req *r, long idx, const char *raw, size_t len)
{
	struct srv_item *it = xcalloc(1, sizeof(*it));
	it->req = r;
	it->idx = idx;
	it->tag = s->next_tag++;
	while (len && (*raw == ' ' || *raw == '\t'))
		raw++, len--;
	while (len && (raw[len - 1] == ' ' || raw[len - 1] == '\t' || raw[len - 1] == '\r'))
		len--;
	/* raw is a JSON object: "{" [members] "}" */
	const char *p = raw + 1;
	size_t rest = len - 1;
	while (rest && (*p == ' ' || *p == '\t'))
		p++, rest--;
	int empty = rest && *p == '}';
	struct leap_buf b = {0};
	leap_buf_addf(&b, "{\"" SRV_TAG "\":%" PRIu64 "%s", it->tag, empty ? "" : ",");
	leap_buf_add(&b, p, rest);
	leap_buf_add(&b, "\n", 1);
	it->inlen = b.len;
	it->in = leap_buf_detach(&b);
	return it;
}

static void item_free(struct srv_item *it)
{
	free(it->in);
	free(it->out);
	free(it);
}

/* A line of a request as a record: the parsed object, or NULL with an error record in *err. */
static json_t *parse_record(struct srv *s, long lineno, const char *raw, size_t len, json_t **err)
{
	*err = NULL;
	if (len > s->o->max_line) {
		*err = leap_error_record("<request>", lineno, raw, 1024, "the record holds %zu bytes; this server takes at most %zu (--max-line)",
					 len, s->o->max_line);
		return NULL;
	}
	json_error_t je;
	json_t *rec = json_loadb(raw, len, 0, &je);
	if (!rec || !json_is_object(rec)) {
		*err = leap_error_record("<request>", lineno, raw, len, "%s", rec ? "not a JSON object" : je.text);
		json_decref(rec);
		return NULL;
	}
	if (json_object_get(rec, SRV_TAG)) {
		*err = leap_error_record("<request>", lineno, raw, len, "the field '" SRV_TAG "' is leap-serve's own");
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/* Counts an answer's verdict for /metrics. */
static void count_verdict(struct srv *s, const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, 0, NULL);
	const char *st = !rec ? "error" : json_object_get(rec, "error") ? "error" : leap_get_str(rec, "status", "none");
	void **slot = leap_hmap_put(&s->m.verdicts, st, strlen(st), NULL);
	*slot = (void *)((uintptr_t)*slot + 1);
	json_decref(rec);
}

/* Gives the request's items to devices, each group to one device. Returns 0, or the HTTP
 * status that refuses the request (nothing given): 413 for a group no queue can ever hold,
 * 429 when the queues are full now. */
static int give_groups(struct srv *s, struct srv_req *r, struct srv_item **items, long nitems)
{
	struct leap_hmap groups = {0};
	long ngrp = 0;
	for (long i = 0; i < nitems; i++) {
		int added;
		const char *k = (const char *)items[i]->out; /* the group key, parked in out */
		void **slot = leap_hmap_put(&groups, k, strlen(k), &added);
		if (added)
			*slot = (void *)(uintptr_t)(++ngrp);
		items[i]->grp = (long)(uintptr_t)*slot - 1;
		free(items[i]->out);
		items[i]->out = NULL;
	}
	leap_hmap_free(&groups);
	r->ngrp = ngrp;
	r->grp_left = xcalloc((size_t)ngrp + 1, sizeof(*r->grp_left));
	r->grp_n = xcalloc((size_t)ngrp + 1, sizeof(*r->grp_n));
	r->grp_idx = xcalloc((size_t)ngrp + 1, sizeof(*r->grp_idx));
	for (long i = 0; i < nitems; i++)
		r->grp_left[items[i]->grp]++;
	for (long g = 0; g < ngrp; g++) {
		r->grp_idx[g] = xcalloc((size_t)r->grp_left[g], sizeof(long));
		if (r->grp_left[g] > s->o->queue)
			return 413;
	}
	for (long i = 0; i < nitems; i++)
		r->grp_idx[items[i]->grp][r->grp_n[items[i]->grp]++] = items[i]->idx;
	int *dev = xcalloc((size_t)ngrp + 1, sizeof(*dev));
	long *taken = xcalloc((size_t)s->ndev, sizeof(*taken));
	int status = 0;
	pthread_mutex_lock(&s->mu);
	for (long g = 0; g < ngrp && !status; g++) {
		int best = -1;
		long room = 0;
		for (int d = 0; d < s->ndev; d++) {
			long rm = srv_room(s, d) - taken[d];
			if (rm >= r->grp_left[g] && (best < 0 || rm > room))
				best = d, room = rm;
		}
		if (best < 0)
			status = 429;
		else
			dev[g] = best, taken[best] += r->grp_left[g];
	}
	if (!status) {
		for (long g = 0; g < ngrp; g++) {
			struct srv_item *head = NULL, *tail = NULL;
			for (long i = 0; i < nitems; i++)
				if (items[i]->grp == g) {
					items[i]->next = NULL;
					if (tail)
						tail->next = items[i];
					else
						head = items[i];
					tail = items[i];
				}
			srv_give(s, dev[g], head, tail, r->grp_left[g]);
		}
		r->pending += nitems;
	}
	pthread_mutex_unlock(&s->mu);
	free(dev);
	free(taken);
	return status;
}

/* Refuses a request whose records could not be given. */
static void refuse(struct srv_conn *c, struct srv_req *r, int status, struct srv_item **items, long n)
{
	for (long i = 0; i < n; i++)
		item_free(items[i]);
	r->done = 1;
	if (status == 429) {
		c->retry_after = 2;
		srv_reply_error(c, 429, "every device's queue is full (--queue %ld records each): try again later",
				c->s->o->queue);
	} else {
		srv_reply_error(c, 413, "a group of the request holds more records than a device's queue (--queue %ld)",
				c->s->o->queue);
	}
	r->conn = NULL;
	c->req = NULL;
	count_request(c->s, c->ep, status);
	req_release(r);
}

/* ---- /v1/evaluate and /v1/turn ---- */

/* The records of text[0..len), JSON Lines: items for the valid ones (their group key parked in
 * out, for the device choice), error records for the others in *errs (one line each), blank
 * lines skipped; line numbers count on from `base`. */
static void parse_lines(struct srv *s, struct srv_req *r, const char *text, size_t len, long base,
			struct srv_item ***items, long *nitems, long *lines, struct leap_buf *errs)
{
	size_t cap = 0;
	long lineno = base;
	const char *p = text ? text : "", *end = p + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		lineno++;
		const char *q = p;
		p += ll + (nl != NULL);
		size_t l = ll;
		while (l && (q[l - 1] == '\r' || q[l - 1] == ' ' || q[l - 1] == '\t'))
			l--;
		size_t lead = 0;
		while (lead < l && (q[lead] == ' ' || q[lead] == '\t'))
			lead++;
		if (lead == l)
			continue; /* blank lines are skipped, as the filters skip them */
		json_t *err, *rec = parse_record(s, lineno, q, l, &err);
		if (!rec) {
			size_t el;
			char *t = dump(err, &el);
			json_decref(err);
			if (t) {
				leap_buf_add(errs, t, el);
				leap_buf_add(errs, "\n", 1);
			}
			free(t);
			continue;
		}
		xgrow((void **)items, &cap, (size_t)*nitems + 1, sizeof(**items));
		struct srv_item *it = item_new(s, r, lineno - 1, q, l);
		it->out = xstrdup(group_key(rec));
		(*items)[(*nitems)++] = it;
		json_decref(rec);
	}
	*lines = lineno - base;
}

/* Counts the verdicts of error records written at admission. */
static void count_errors(struct srv *s, const struct leap_buf *errs)
{
	const char *p = errs->s ? errs->s : "", *end = p + errs->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		count_verdict(s, p, l);
		p += l + 1;
	}
}

static void admit_lines(struct srv_conn *c)
{
	struct srv *s = c->s;
	struct srv_req *r = req_new(s, c, c->ep);
	if (c->ep == EP_TURN) {
		char buf[32];
		int64_t g;
		if (!srv_query(c, "group_size", buf, sizeof(buf))) {
			if (leap_parse_i64(buf, 1, 1 << 20, &g)) {
				r->done = 1;
				r->conn = NULL;
				c->req = NULL;
				srv_reply_error(c, 400, "group_size=%s is not a number from 1 to 1048576", buf);
				count_request(s, c->ep, 400);
				req_release(r);
				return;
			}
			r->group_size = (long)g;
		}
	}
	struct srv_item **items = NULL;
	long nitems = 0, lineno = 0;
	struct leap_buf errs = {0};
	parse_lines(s, r, c->body.s, c->body.len, 0, &items, &nitems, &lineno, &errs);
	r->n = lineno;
	r->answered = lineno - nitems; /* blank lines and error records need no device */
	r->ans = xcalloc((size_t)lineno + 1, sizeof(*r->ans));
	r->anslen = xcalloc((size_t)lineno + 1, sizeof(*r->anslen));
	int status = nitems ? give_groups(s, r, items, nitems) : 0;
	if (status) {
		refuse(c, r, status, items, nitems);
		free(items);
		leap_buf_free(&errs);
		return;
	}
	free(items);
	count_errors(s, &errs);
	srv_stream_begin(c, "application/x-ndjson");
	srv_stream_bytes(c, errs.s, errs.len);
	leap_buf_free(&errs);
	if (!nitems) {
		srv_stream_end(c);
		req_finish(r, 200);
		req_release(r);
	}
}

/* ---- WebSocket /v1/stream ---- */

void srv_stream_open(struct srv_conn *c)
{
	struct srv_req *r = req_new(c->s, c, EP_STREAM);
	r->deadline = r->t0 + c->s->o->deadline;
}

/* Admits the records of text[0..len) to the stream's request: each group to the device it
 * already has, a new group to the device with the most room. 0 when admitted (error records
 * sent, the rest given), 1 when a device has no room now (nothing taken). */
static int stream_admit(struct srv_conn *c, const char *text, size_t len)
{
	struct srv *s = c->s;
	struct srv_req *r = c->req;
	struct srv_item **items = NULL;
	long nitems = 0, lines = 0;
	struct leap_buf errs = {0};
	parse_lines(s, r, text, len, r->n, &items, &nitems, &lines, &errs);
	if (nitems > s->o->queue) { /* it could never fit: each record says so */
		for (long i = 0; i < nitems; i++) {
			json_t *e = leap_error_record("<request>", items[i]->idx + 1, NULL, 0,
						      "a message of %ld records: a device holds at most %ld (--queue); send fewer per message",
						      nitems, s->o->queue);
			size_t el;
			char *t = dump(e, &el);
			json_decref(e);
			if (t) {
				leap_buf_add(&errs, t, el);
				leap_buf_add(&errs, "\n", 1);
			}
			free(t);
			item_free(items[i]);
		}
		nitems = 0;
	}
	int *dev = xcalloc((size_t)nitems + 1, sizeof(*dev));
	long *need = xcalloc((size_t)s->ndev, sizeof(*need));
	int full = 0;
	pthread_mutex_lock(&s->mu);
	for (long i = 0; i < nitems && !full; i++) {
		const char *k = items[i]->out;
		uintptr_t d = (uintptr_t)leap_hmap_get(&c->gdev, k, strlen(k));
		for (long j = 0; !d && j < i; j++) /* a group new in this message: where its first went */
			if (!strcmp(items[j]->out, k))
				d = (uintptr_t)dev[j] + 1;
		if (!d) {
			long room = 0;
			for (int x = 0; x < s->ndev; x++)
				if (srv_room(s, x) - need[x] > room)
					room = srv_room(s, x) - need[x], d = (uintptr_t)x + 1;
		}
		if (!d || srv_room(s, (int)d - 1) - need[d - 1] < 1)
			full = 1;
		else
			dev[i] = (int)d - 1, need[d - 1]++;
	}
	if (!full) {
		for (long i = 0; i < nitems; i++) {
			*leap_hmap_put(&c->gdev, items[i]->out, strlen(items[i]->out), NULL) = (void *)(uintptr_t)(dev[i] + 1);
			free(items[i]->out);
			items[i]->out = NULL;
			items[i]->next = NULL;
			srv_give(s, dev[i], items[i], items[i], 1);
		}
		r->pending += nitems;
	}
	pthread_mutex_unlock(&s->mu);
	free(dev);
	free(need);
	if (full) {
		for (long i = 0; i < nitems; i++)
			item_free(items[i]);
		free(items);
		leap_buf_free(&errs);
		return 1;
	}
	free(items);
	count_errors(s, &errs);
	r->n += lines;
	r->answered += lines - nitems;
	r->deadline = leap_now() + s->o->deadline; /* a stream lives while records come */
	for (const char *p = errs.s, *end = errs.s + errs.len; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		srv_ws_send(c, p, l);
		p += l + 1;
	}
	leap_buf_free(&errs);
	return 0;
}

/* The stream is over once the client said so and every record is answered. */
static void stream_maybe_end(struct srv_conn *c, struct srv_req *r)
{
	if (c->in_ended && !c->held.len && r->answered == r->n) {
		req_finish(r, 200);
		c->close_after = 1;
		lws_callback_on_writable(c->wsi);
	}
}

/* Tries the records held for room again; reading resumes once they are taken. */
static void stream_retry(struct srv_conn *c)
{
	if (!c->held.len || stream_admit(c, c->held.s, c->held.len))
		return;
	leap_buf_free(&c->held);
	lws_rx_flow_control(c->wsi, 1);
}

static void stream_message(struct srv_conn *c, const char *msg, size_t len)
{
	struct srv_req *r = c->req;
	size_t lead = 0;
	while (lead < len && (msg[lead] == ' ' || msg[lead] == '\n' || msg[lead] == '\r' || msg[lead] == '\t'))
		lead++;
	if (!r || r->done || c->in_ended)
		return;
	if (lead == len) { /* the empty message: the end of the records */
		c->in_ended = 1;
		stream_maybe_end(c, r);
		return;
	}
	if (c->held.len) { /* messages read before the pause took effect wait behind the held ones */
		leap_buf_add(&c->held, "\n", 1);
		leap_buf_add(&c->held, msg, len);
		return;
	}
	if (stream_admit(c, msg, len)) {
		leap_buf_add(&c->held, msg, len);
		lws_rx_flow_control(c->wsi, 0);
	}
}

/* leap-prune over one finished group of a /v1/turn request. */
static void queue_prune(struct srv *s, struct srv_req *r, long g, long group_size, const char *preset, int max_turns)
{
	struct srv_run *run = xcalloc(1, sizeof(*run));
	run->req = r;
	run->grp = g;
	char gs[32], mt[32];
	snprintf(gs, sizeof(gs), "%ld", group_size);
	snprintf(mt, sizeof(mt), "%d", max_turns);
	char *prune = xasprintf("%s/leap-prune", s->o->bindir);
	const char *argv[16] = {prune, "--no-progress", "--group-size", gs, "--done", "/dev/fd/3"};
	int a = 6;
	if (preset) {
		argv[a++] = "--preset";
		argv[a++] = preset;
	}
	if (max_turns > 0) {
		argv[a++] = "--max-turns";
		argv[a++] = mt;
	}
	argv[a] = NULL;
	srv_run_stage(run, argv);
	free(prune);
	for (long k = 0; k < r->grp_n[g]; k++) {
		long i = r->grp_idx[g][k];
		leap_buf_add(&run->in, r->ans[i], r->anslen[i]);
		leap_buf_add(&run->in, "\n", 1);
	}
	r->pending++;
	pthread_mutex_lock(&s->mu);
	srv_queue_run(s, run);
	pthread_mutex_unlock(&s->mu);
}

static void turn_answer(struct srv_req *r, struct srv_item *it)
{
	r->ans[it->idx] = it->out;
	r->anslen[it->idx] = it->outlen;
	it->out = NULL;
	if (--r->grp_left[it->grp] == 0) {
		long g = it->grp, n = r->grp_n[g];
		queue_prune(r->s, r, g, r->group_size ? r->group_size : n, NULL, 0);
	}
}

/* The prune run of a group ended: its decided records, then its next-turn records. */
static void turn_pruned(struct srv_req *r, struct srv_run *run)
{
	struct srv_conn *c = r->conn;
	long g = run->grp;
	if (run->failed) {
		leap_warn("leap-prune: %s", run->why);
		for (long k = 0; k < r->grp_n[g]; k++) {
			long i = r->grp_idx[g][k];
			json_t *rec = json_loadb(r->ans[i], r->anslen[i], 0, NULL);
			if (!rec)
				rec = json_object();
			leap_record_set_error(rec, "<request>", i + 1, "leap-prune failed: %s", run->why);
			size_t len;
			char *t = dump(rec, &len);
			json_decref(rec);
			if (c && t)
				srv_stream_line(c, t, len);
			free(t);
		}
	} else if (c) {
		srv_stream_bytes(c, run->out3.s, run->out3.len); /* the decided records, then the next turn's */
		srv_stream_bytes(c, run->out.s, run->out.len);
	}
	r->answered += r->grp_n[g];
	if (r->answered == r->n && c) {
		srv_stream_end(c);
		req_finish(r, 200);
	}
}

/* ---- OpenEnv ---- */

/* The turn-1 record of `task`, or NULL. */
static json_t *prompt_of(struct srv *s, const char *task)
{
	for (size_t i = 0; i < s->nprompts; i++)
		if (!strcmp(s->prompt_task[i], task))
			return json_loads(s->prompts[i], 0, NULL);
	return NULL;
}

/* {"observation":{...},"reward":R,"done":D} */
static json_t *observation(json_t *record, json_t *next, double reward, int has_reward, int done)
{
	json_t *obs = json_object();
	json_object_set(obs, "record", record ? record : json_null());
	json_object_set(obs, "next", next ? next : json_null());
	json_t *msgs = next ? json_object_get(next, "messages") : NULL;
	json_object_set(obs, "messages", msgs ? msgs : json_null());
	json_t *fb = next ? json_object_get(next, "feedback") : NULL;
	json_object_set(obs, "feedback", fb ? fb : json_null());
	json_t *st = record ? json_object_get(record, "status") : NULL;
	json_object_set(obs, "status", st ? st : json_null());
	return json_pack("{s:o,s:o,s:b}", "observation", obs, "reward", has_reward ? json_real(reward) : json_null(),
			 "done", done);
}

/* A reset's record: the task's turn-1 record with the trajectory's group and sample. */
static json_t *reset_record(struct srv *s, const json_t *data, char *why, size_t whylen)
{
	const char *task = leap_get_str(data, "task", NULL);
	if (!task) {
		snprintf(why, whylen, "reset needs 'task' (a task id: GET /v1/prompts?task=all lists them)");
		return NULL;
	}
	json_t *rec = prompt_of(s, task);
	if (!rec) {
		snprintf(why, whylen, "no task '%s' in this server's suite", task);
		return NULL;
	}
	const char *ep = leap_get_str(data, "episode_id", NULL);
	json_t *g = json_object_get(data, "group");
	if (g)
		json_object_set(rec, "group", g);
	else if (ep)
		json_object_set_new(rec, "group", json_string(ep));
	json_t *smp = json_object_get(data, "sample");
	if (smp)
		json_object_set(rec, "sample", smp);
	return rec;
}

static void reply_json(struct srv_conn *c, int status, json_t *j)
{
	size_t len;
	char *t = dump(j, &len);
	if (!t)
		leap_die("internal error: an answer is not JSON");
	srv_reply(c, status, "application/json", t, len);
	free(t);
}

static void ws_json(struct srv_conn *c, const char *type, json_t *data)
{
	json_t *m = json_pack("{s:s,s:O}", "type", type, "data", data);
	size_t len;
	char *t = dump(m, &len);
	json_decref(m);
	if (!t)
		leap_die("internal error: a message is not JSON");
	srv_ws_send(c, t, len);
	free(t);
}

static void ws_error(struct srv_conn *c, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ws_error(struct srv_conn *c, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	json_t *d = json_pack("{s:s,s:s}", "message", msg, "code", code);
	ws_json(c, "error", d);
	json_decref(d);
	free(msg);
}

/* Starts one step: `rec` (taken) with the action's completion, evaluated alone. */
static int start_step(struct srv_conn *c, int ep, json_t *rec, char *why, size_t whylen)
{
	struct srv *s = c->s;
	if (!json_object_get(rec, "turn"))
		json_object_set_new(rec, "turn", json_integer(1));
	if (!json_object_get(rec, "group") && json_object_get(rec, "task"))
		json_object_set(rec, "group", json_object_get(rec, "task"));
	if (!json_object_get(rec, "sample"))
		json_object_set_new(rec, "sample", json_integer(0));
	json_object_del(rec, SRV_TAG);
	size_t len;
	char *raw = dump(rec, &len);
	json_decref(rec);
	if (!raw) {
		snprintf(why, whylen, "the record is not strict JSON");
		return 400;
	}
	if (len > s->o->max_line) {
		free(raw);
		snprintf(why, whylen, "the record holds %zu bytes; this server takes at most %zu (--max-line)", len,
			 s->o->max_line);
		return 413;
	}
	struct srv_req *r = req_new(s, c, ep);
	r->n = 1;
	r->ans = xcalloc(1, sizeof(*r->ans));
	r->anslen = xcalloc(1, sizeof(*r->anslen));
	struct srv_item *it = item_new(s, r, 0, raw, len);
	free(raw);
	it->out = xstrdup("");
	int status = give_groups(s, r, &it, 1);
	if (status) {
		item_free(it);
		r->done = 1;
		r->conn = NULL;
		c->req = NULL;
		req_release(r);
		snprintf(why, whylen, "every device's queue is full: try again later");
		return status;
	}
	return 0;
}

/* The record a step evaluates: the action's record, or the session's, with the action's
 * other fields (completion, code) set on it. */
static json_t *step_record(const json_t *base, const json_t *action)
{
	const json_t *inner = json_object_get(action, "record");
	json_t *rec = json_is_object(inner) ? json_deep_copy(inner) : base ? json_deep_copy(base) : json_object();
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)action, k, v)
		if (strcmp(k, "record") && strcmp(k, "metadata"))
			json_object_set(rec, k, v);
	return rec;
}

static void openenv_reset_http(struct srv_conn *c)
{
	json_t *data = c->body.len ? json_loadb(c->body.s, c->body.len, 0, NULL) : json_object();
	if (!json_is_object(data)) {
		json_decref(data);
		srv_reply_error(c, 422, "the reset body must be a JSON object");
		return;
	}
	char why[256];
	json_t *rec = reset_record(c->s, data, why, sizeof(why));
	json_decref(data);
	if (!rec) {
		srv_reply_error(c, 422, "%s", why);
		return;
	}
	json_t *o = observation(rec, rec, 0, 0, 0);
	reply_json(c, 200, o);
	count_request(c->s, c->ep, 200);
	json_decref(o);
	json_decref(rec);
}

static void openenv_step_http(struct srv_conn *c)
{
	json_t *body = json_loadb(c->body.s ? c->body.s : "", c->body.len, 0, NULL);
	json_t *action = body ? json_object_get(body, "action") : NULL;
	if (!json_is_object(action)) {
		json_decref(body);
		srv_reply_error(c, 422, "the step body must be {\"action\": {...}}: the record to evaluate (observation.next of "
				   "/reset or /step) with 'completion' or 'code'");
		return;
	}
	json_t *rec = step_record(NULL, action);
	json_decref(body);
	if (!json_object_get(rec, "task")) {
		json_decref(rec);
		srv_reply_error(c, 422, "the action's record has no 'task'");
		return;
	}
	char why[256];
	int st = start_step(c, EP_STEP, rec, why, sizeof(why));
	if (st) {
		if (st == 429)
			c->retry_after = 2;
		srv_reply_error(c, st, "%s", why);
		count_request(c->s, c->ep, st);
	}
}

void srv_ws_message(struct srv_conn *c, const char *msg, size_t len)
{
	if (c->ep == EP_STREAM) {
		stream_message(c, msg, len);
		return;
	}
	json_error_t je;
	json_t *m = json_loadb(msg, len, 0, &je);
	if (!json_is_object(m)) {
		json_decref(m);
		ws_error(c, "INVALID_JSON", "Invalid JSON: %s", je.text);
		return;
	}
	const char *type = leap_get_str(m, "type", "");
	json_t *data = json_object_get(m, "data");
	if (!strcmp(type, "close")) {
		c->close_after = 1;
		lws_callback_on_writable(c->wsi);
	} else if (!strcmp(type, "state")) {
		json_t *d = json_pack("{s:s?,s:I,s:O?,s:O?,s:b}", "episode_id", c->episode[0] ? c->episode : NULL,
				      "step_count", (json_int_t)c->steps, "task", c->cur ? json_object_get(c->cur, "task") : NULL,
				      "turn", c->cur ? json_object_get(c->cur, "turn") : NULL, "done", c->ended);
		ws_json(c, "state", d);
		json_decref(d);
	} else if (c->req) {
		ws_error(c, "EXECUTION_ERROR", "a step of this session is still being evaluated");
	} else if (c->s->draining) {
		ws_error(c, "EXECUTION_ERROR", "the server is shutting down");
	} else if (!strcmp(type, "reset")) {
		char why[256];
		json_t *rec = reset_record(c->s, json_is_object(data) ? data : json_object(), why, sizeof(why));
		if (!rec) {
			ws_error(c, "VALIDATION_ERROR", "%s", why);
		} else {
			json_decref(c->cur);
			c->cur = rec;
			c->steps = 0;
			c->ended = 0;
			snprintf(c->episode, sizeof(c->episode), "%s", leap_get_str(data, "episode_id", ""));
			json_t *o = observation(rec, rec, 0, 0, 0);
			ws_json(c, "observation", o);
			json_decref(o);
		}
	} else if (!strcmp(type, "step")) {
		if (!c->cur || c->ended) {
			ws_error(c, "EXECUTION_ERROR", "%s", c->ended ? "the trajectory has ended: reset first" : "reset first");
		} else if (!json_is_object(data)) {
			ws_error(c, "VALIDATION_ERROR", "step data must be an object with 'completion' or 'code'");
		} else {
			char why[256];
			int st = start_step(c, EP_WS, step_record(c->cur, data), why, sizeof(why));
			if (st)
				ws_error(c, st == 429 ? "CAPACITY_REACHED" : "VALIDATION_ERROR", "%s", why);
		}
	} else {
		ws_error(c, "UNKNOWN_TYPE", "Unknown message type: %s", type);
	}
	json_decref(m);
}

static void step_answer(struct srv_req *r, struct srv_item *it)
{
	r->ans[0] = it->out;
	r->anslen[0] = it->outlen;
	it->out = NULL;
	queue_prune(r->s, r, 0, 1, "debug-all", r->s->o->max_turns);
}

/* The step's prune run ended: the observation, its reward ([pass]) and whether it is done. */
static void step_pruned(struct srv_req *r, struct srv_run *run)
{
	struct srv_conn *c = r->conn;
	json_t *done = NULL, *next = NULL;
	if (!run->failed) {
		done = json_loadb(run->out3.s ? run->out3.s : "", run->out3.len, JSON_DISABLE_EOF_CHECK, NULL);
		if (run->out.len)
			next = json_loadb(run->out.s, run->out.len, JSON_DISABLE_EOF_CHECK, NULL);
	}
	if (!done) {
		done = json_loadb(r->ans[0], r->anslen[0], 0, NULL);
		if (!done)
			done = json_object();
		if (run->failed)
			leap_record_set_error(done, "<request>", 1, "leap-prune failed: %s", run->why);
	}
	double reward = !strcmp(leap_get_str(done, "status", ""), "pass") ? 1.0 : 0.0;
	int finished = next == NULL;
	json_t *o = observation(done, next, reward, 1, finished);
	if (c && r->ep == EP_STEP) {
		reply_json(c, 200, o);
	} else if (c) {
		json_decref(c->cur);
		c->cur = next ? json_incref(next) : NULL;
		c->ended = finished;
		c->steps++;
		ws_json(c, "observation", o);
	}
	json_decref(o);
	json_decref(done);
	json_decref(next);
	r->answered = 1;
	req_finish(r, 200);
}

/* ---- OpenRLHF ---- */

static void idem_reply(struct srv *s, struct srv_idem *e)
{
	for (size_t i = 0; i < e->nwait; i++) {
		struct srv_conn *c = e->wait[i];
		srv_reply(c, e->status, "application/json", e->body, e->len);
		count_request(s, EP_REWARD, e->status);
		c->ep = EP_NONE;
	}
	free(e->wait);
	e->wait = NULL;
	e->nwait = 0;
}

static void idem_drop(struct srv *s, struct srv_idem *e)
{
	if (e->finished) {
		if (e->older)
			e->older->newer = e->newer;
		else
			s->idem_old = e->newer;
		if (e->newer)
			e->newer->older = e->older;
		else
			s->idem_new = e->older;
		s->nidem--;
	}
	leap_hmap_del(&s->idem, e->key, strlen(e->key));
	free(e->wait);
	free(e->key);
	free(e->body);
	free(e);
}

/* The answer of a reward request is known: sent to every connection waiting for it and kept
 * for retries (an error is not kept: a retry tries again). */
static void idem_done(struct srv *s, struct srv_idem *e, int status, char *body, size_t len)
{
	e->status = status;
	e->body = body;
	e->len = len;
	idem_reply(s, e);
	if (status != 200) {
		idem_drop(s, e);
		return;
	}
	e->finished = 1;
	e->t = leap_now();
	e->older = s->idem_new;
	if (s->idem_new)
		s->idem_new->newer = e;
	else
		s->idem_old = e;
	s->idem_new = e;
	s->nidem++;
	while (s->nidem > s->o->idem_entries)
		idem_drop(s, s->idem_old);
}

static void sha_hex(const void *data, size_t len, char out[65])
{
	unsigned char d[SHA256_DIGEST_LENGTH];
	SHA256(data, len, d);
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void reward(struct srv_conn *c)
{
	struct srv *s = c->s;
	char key[160];
	if (c->reqid[0])
		snprintf(key, sizeof(key), "id:%s", c->reqid);
	else {
		char h[65];
		sha_hex(c->body.s ? c->body.s : "", c->body.len, h);
		snprintf(key, sizeof(key), "sha256:%s", h);
	}
	struct srv_idem *e = leap_hmap_get(&s->idem, key, strlen(key));
	if (e) {
		s->m.retries_served++;
		e->wait = xrealloc(e->wait, (e->nwait + 1) * sizeof(*e->wait));
		e->wait[e->nwait++] = c;
		if (e->finished)
			idem_reply(s, e);
		return;
	}
	json_t *body = json_loadb(c->body.s ? c->body.s : "", c->body.len, 0, NULL);
	json_t *q = body ? json_object_get(body, "query") : NULL, *pr = body ? json_object_get(body, "prompts") : NULL;
	json_t *lb = body ? json_object_get(body, "labels") : NULL;
	size_t n = json_array_size(q);
	if (!json_is_array(q) || !n || !json_is_array(lb) || json_array_size(lb) != n ||
	    (pr && !json_is_null(pr) && (!json_is_array(pr) || json_array_size(pr) != n))) {
		json_decref(body);
		srv_reply_error(c, 400, "the body must be {\"query\": [text...], \"prompts\": [text...], \"labels\": [task id...]}, "
				       "the arrays of one length (OpenRLHF's remote reward; the labels name the tasks)");
		count_request(s, c->ep, 400);
		return;
	}
	struct srv_req *r = req_new(s, c, EP_REWARD);
	r->n = (long)n;
	r->ans = xcalloc(n, sizeof(*r->ans));
	r->anslen = xcalloc(n, sizeof(*r->anslen));
	struct srv_item **items = xcalloc(n, sizeof(*items));
	struct leap_hmap seen = {0};
	for (size_t i = 0; i < n; i++) {
		const char *query = json_string_value(json_array_get(q, i));
		const char *prompt = pr && json_is_array(pr) ? json_string_value(json_array_get(pr, i)) : NULL;
		const char *label = json_string_value(json_array_get(lb, i));
		const char *resp = query ? query : "";
		if (prompt && query && !strncmp(query, prompt, strlen(prompt)))
			resp += strlen(prompt);
		char h[65];
		sha_hex(prompt ? prompt : label ? label : "", strlen(prompt ? prompt : label ? label : ""), h);
		h[16] = '\0';
		int added;
		void **slot = leap_hmap_put(&seen, h, 16, &added);
		long sample = (long)(uintptr_t)*slot;
		*slot = (void *)(uintptr_t)(sample + 1);
		json_t *rec = json_pack("{s:s?,s:s,s:I,s:i,s:s,s:I}", "task", label, "group", h, "sample", (json_int_t)sample,
					"turn", 1, "completion", resp, "leap_row", (json_int_t)i);
		if (!label)
			json_object_set_new(rec, "task", json_array_get(lb, i) ? json_incref(json_array_get(lb, i)) : json_null());
		size_t len = 0;
		char *raw = dump(rec, &len);
		json_decref(rec);
		if (!raw)
			leap_die("internal error: a reward record is not JSON");
		items[i] = item_new(s, r, (long)i, raw, len);
		items[i]->out = xstrdup(h);
		free(raw);
	}
	leap_hmap_free(&seen);
	json_decref(body);
	int status = give_groups(s, r, items, (long)n);
	if (status) {
		refuse(c, r, status, items, (long)n);
		free(items);
		return;
	}
	free(items);
	e = xcalloc(1, sizeof(*e));
	e->key = xstrdup(key);
	e->wait = xcalloc(1, sizeof(*e->wait));
	e->wait[e->nwait++] = c;
	*leap_hmap_put(&s->idem, key, strlen(key), NULL) = e;
	r->idem = e;
	c->req = NULL; /* the answer goes to every waiter through the entry */
	r->conn = NULL;
}

static void reward_answer(struct srv_req *r, struct srv_item *it)
{
	struct srv *s = r->s;
	r->ans[it->idx] = it->out;
	r->anslen[it->idx] = it->outlen;
	it->out = NULL;
	if (++r->answered < r->n)
		return;
	struct srv_run *run = xcalloc(1, sizeof(*run));
	run->req = r;
	run->grp = -1;
	char *prune = xasprintf("%s/leap-prune", s->o->bindir), *rank = xasprintf("%s/leap-rank", s->o->bindir);
	const char *a1[] = {prune, "--no-progress", "--annotate", "--preset", "single-turn", NULL};
	const char *a2[] = {rank, "--no-progress", NULL};
	srv_run_stage(run, a1);
	srv_run_stage(run, a2);
	free(prune);
	free(rank);
	for (long i = 0; i < r->n; i++) {
		leap_buf_add(&run->in, r->ans[i], r->anslen[i]);
		leap_buf_add(&run->in, "\n", 1);
	}
	r->pending++;
	pthread_mutex_lock(&s->mu);
	srv_queue_run(s, run);
	pthread_mutex_unlock(&s->mu);
}

static void reward_ranked(struct srv_req *r, struct srv_run *run)
{
	struct srv *s = r->s;
	json_t *rew = json_array(), *sc = json_array(), *ps = json_array(), *sp = json_array(), *er = json_array();
	double *score = xcalloc((size_t)r->n, sizeof(double));
	const char *p = run->out.s ? run->out.s : "", *end = p + run->out.len;
	while (!run->failed && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *rec = json_loadb(p, len, 0, NULL);
		json_int_t row = leap_get_int(rec, "leap_row", -1);
		json_t *rk = rec ? json_object_get(rec, "rank") : NULL;
		if (row >= 0 && row < r->n && rk)
			score[row] = leap_get_num(rk, "score", 0);
		json_decref(rec);
		p += len + (nl != NULL);
	}
	for (long i = 0; i < r->n; i++) {
		json_t *rec = json_loadb(r->ans[i], r->anslen[i], 0, NULL);
		int pass = !strcmp(leap_get_str(rec, "status", ""), "pass");
		json_t *b = rec ? json_object_get(rec, "bench") : NULL;
		double speed = b && !strcmp(leap_get_str(b, "status", ""), "ok") ? leap_get_num(b, "speedup", 0) : 0;
		json_array_append_new(rew, json_real(score[i]));
		json_array_append_new(sc, json_real(pass));
		json_array_append_new(ps, json_real(pass));
		json_array_append_new(sp, json_real(speed));
		json_array_append_new(er, json_real(!rec || json_object_get(rec, "error") ? 1 : 0));
		json_decref(rec);
	}
	free(score);
	json_t *ans = json_pack("{s:o,s:o,s:{s:o,s:o,s:o}}", "rewards", rew, "scores", sc, "extra_logs", "pass", ps,
				"speedup", sp, "error", er);
	size_t len = 0;
	char *t = run->failed ? NULL : dump(ans, &len);
	json_decref(ans);
	if (run->failed || !t) {
		free(t);
		leap_warn("reward: %s", run->failed ? run->why : "the answer is not JSON");
		t = xasprintf("{\"error\":{\"status\":500,\"message\":\"leap-prune | leap-rank failed\"}}");
		len = strlen(t);
		idem_done(s, r->idem, 500, t, len);
	} else {
		idem_done(s, r->idem, 200, t, len);
	}
	r->idem = NULL;
	req_finish(r, run->failed ? 500 : 200);
}

/* ---- GET /v1/prompts ---- */

static void prompts(struct srv_conn *c)
{
	struct srv *s = c->s;
	char task[256], gs[32];
	int64_t g = 1;
	if (srv_query(c, "task", task, sizeof(task))) {
		srv_reply_error(c, 400, "name a task: /v1/prompts?task=ID[&group_size=G] (task=all: every task)");
		return;
	}
	if (!srv_query(c, "group_size", gs, sizeof(gs)) && leap_parse_i64(gs, 1, 4096, &g)) {
		srv_reply_error(c, 400, "group_size=%s is not a number from 1 to 4096", gs);
		return;
	}
	struct leap_buf b = {0};
	int any = 0;
	for (size_t i = 0; i < s->nprompts; i++) {
		if (strcmp(task, "all") && strcmp(task, s->prompt_task[i]))
			continue;
		any = 1;
		json_t *rec = json_loads(s->prompts[i], 0, NULL);
		for (int64_t k = 0; rec && k < g; k++) {
			json_object_set_new(rec, "sample", json_integer(k));
			if (leap_json_append(&b, rec))
				leap_die("internal error: a prompt is not JSON");
			leap_buf_add(&b, "\n", 1);
		}
		json_decref(rec);
	}
	if (!any)
		srv_reply_error(c, 404, "no task '%s' in this server's suite", task);
	else
		srv_reply(c, 200, "application/x-ndjson", b.s, b.len);
	leap_buf_free(&b);
}

/* ---- dispatch ---- */

void srv_dispatch(struct srv_conn *c)
{
	switch (c->ep) {
	case EP_EVALUATE:
	case EP_TURN:
		admit_lines(c);
		break;
	case EP_RESET:
		openenv_reset_http(c);
		break;
	case EP_STEP:
		openenv_step_http(c);
		break;
	case EP_REWARD:
		reward(c);
		break;
	case EP_PROMPTS:
		prompts(c);
		break;
	default:
		srv_reply_error(c, 404, "no such endpoint");
	}
}

/* An item came back from the engine. */
static void item_back(struct srv *s, struct srv_item *it)
{
	struct srv_req *r = it->req;
	r->pending--;
	if (it->cancel || r->done) {
		s->m.cancelled++;
		item_free(it);
		req_release(r);
		return;
	}
	count_verdict(s, it->out, it->outlen);
	hist_add(&s->m.record_s, leap_now() - r->t0);
	switch (r->ep) {
	case EP_EVALUATE:
		if (r->conn)
			srv_stream_line(r->conn, it->out, it->outlen);
		if (++r->answered == r->n) {
			if (r->conn)
				srv_stream_end(r->conn);
			req_finish(r, 200);
		}
		break;
	case EP_TURN:
		turn_answer(r, it);
		break;
	case EP_STEP:
	case EP_WS:
		step_answer(r, it);
		break;
	case EP_REWARD:
		reward_answer(r, it);
		break;
	case EP_STREAM:
		r->answered++;
		if (r->conn) {
			srv_ws_send(r->conn, it->out, it->outlen);
			stream_retry(r->conn);
			stream_maybe_end(r->conn, r);
		}
		break;
	default:
		break;
	}
	item_free(it);
	req_release(r);
}

static void run_back(struct srv_run *run)
{
	struct srv_req *r = run->req;
	r->pending--;
	if (!r->done) {
		if (r->ep == EP_TURN)
			turn_pruned(r, run);
		else if (r->ep == EP_REWARD)
			reward_ranked(r, run);
		else
			step_pruned(r, run);
	}
	srv_run_free(run);
	req_release(r);
}

void srv_collect(struct srv *s)
{
	pthread_mutex_lock(&s->mu);
	struct srv_item *items = s->dhead;
	struct srv_run *runs = s->rd_head;
	s->dhead = s->dtail = NULL;
	s->rd_head = s->rd_tail = NULL;
	pthread_mutex_unlock(&s->mu);
	while (items) {
		struct srv_item *next = items->next;
		item_back(s, items);
		items = next;
	}
	while (runs) {
		struct srv_run *next = runs->next;
		run_back(runs);
		runs = next;
	}
	/* room may have come free: streams waiting for it try again */
	for (size_t i = 0; i < s->nconns; i++) {
		struct srv_conn *c = s->conns[i];
		if (c->ep == EP_STREAM && c->held.len && c->req) {
			stream_retry(c);
			stream_maybe_end(c, c->req);
		}
	}
}

/* A request past its deadline: what is unanswered is said so, and its work dropped. */
static void expire(struct srv_req *r)
{
	struct srv *s = r->s;
	double secs = r->deadline - r->t0;
	struct srv_conn *c = r->conn;
	if (r->ep == EP_EVALUATE || r->ep == EP_TURN) {
		/* which records are unanswered only the engine knows: one error record for each
		 * record not yet written */
		long left = r->n - r->answered;
		for (long k = 0; c && k < left; k++) {
			json_t *e = leap_error_record("<request>", 0, NULL, 0,
						      "the request's deadline (%g s) passed before this record was answered", secs);
			size_t len;
			char *t = dump(e, &len);
			json_decref(e);
			if (t)
				srv_stream_line(c, t, len);
			free(t);
		}
		if (c)
			srv_stream_end(c);
		req_cancel(r);
		req_finish(r, 200);
	} else if (r->ep == EP_STREAM) {
		long left = r->n - r->answered;
		for (long k = 0; c && k < left; k++) {
			json_t *e = leap_error_record("<request>", 0, NULL, 0,
						      "the stream's deadline (%g s) passed before this record was answered", secs);
			size_t len;
			char *t = dump(e, &len);
			json_decref(e);
			if (t)
				srv_ws_send(c, t, len);
			free(t);
		}
		if (c)
			c->close_after = 1;
		req_cancel(r);
		req_finish(r, 200);
	} else if (r->ep == EP_REWARD) {
		char *t = xasprintf("{\"error\":{\"status\":504,\"message\":\"the deadline (%g s) passed\"}}", secs);
		req_cancel(r);
		if (r->idem)
			idem_done(s, r->idem, 504, t, strlen(t));
		else
			free(t);
		r->idem = NULL;
		req_finish(r, 504);
	} else {
		if (c && r->ep == EP_STEP)
			srv_reply_error(c, 504, "the step's deadline (%g s) passed before it was evaluated", secs);
		else if (c)
			ws_error(c, "EXECUTION_ERROR", "the step's deadline (%g s) passed before it was evaluated", secs);
		req_cancel(r);
		req_finish(r, 504);
	}
}

void srv_check_deadlines(struct srv *s, double now)
{
	for (struct srv_req *r = s->reqs, *next; r; r = next) {
		next = r->next;
		if (!r->done && now > r->deadline) {
			expire(r);
			req_release(r);
		}
	}
	/* answers kept for retries expire too */
	while (s->idem_old && now - s->idem_old->t > s->o->idem_ttl)
		idem_drop(s, s->idem_old);
}

void srv_conn_gone(struct srv_conn *c)
{
	struct srv *s = c->s;
	/* a connection waiting for a reward answer stops waiting; the evaluation goes on */
	size_t pos = 0;
	const char *k;
	void *v;
	while (leap_hmap_next(&s->idem, &pos, &k, NULL, &v)) {
		struct srv_idem *e = v;
		for (size_t i = 0; i < e->nwait; i++)
			if (e->wait[i] == c)
				e->wait[i--] = e->wait[--e->nwait];
	}
	struct srv_req *r = c->req;
	c->req = NULL;
	if (!r)
		return;
	r->conn = NULL;
	if (!r->done) {
		req_cancel(r);
		req_finish(r, 499);
	}
	req_release(r);
}

/* ---- /metrics ---- */

static void hist_text(struct leap_buf *b, const char *name, const char *help, const struct srv_hist *h)
{
	static const char *const le[SRV_HBUCKETS] = {"0.01", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "300"};
	leap_buf_addf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	uint64_t cum = 0;
	for (int i = 0; i < SRV_HBUCKETS; i++) {
		cum += h->bucket[i];
		leap_buf_addf(b, "%s_bucket{le=\"%s\"} %" PRIu64 "\n", name, le[i], cum);
	}
	char sum[LEAP_DOUBLE_BUF];
	leap_buf_addf(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %s\n%s_count %" PRIu64 "\n", name, h->count, name,
		      leap_fmt_double(sum, h->sum), name, h->count);
}

void srv_metrics_text(struct srv *s, struct leap_buf *b)
{
	leap_buf_adds(b, "# HELP leap_serve_records_total Records answered, by the status the filters gave (error: an error record).\n"
			 "# TYPE leap_serve_records_total counter\n");
	size_t pos = 0;
	const char *k;
	void *v;
	while (leap_hmap_next(&s->m.verdicts, &pos, &k, NULL, &v))
		leap_buf_addf(b, "leap_serve_records_total{status=\"%s\"} %" PRIuPTR "\n", k, (uintptr_t)v);
	leap_buf_adds(b, "# HELP leap_serve_requests_total Requests answered, by endpoint and status class.\n"
			 "# TYPE leap_serve_requests_total counter\n");
	for (int e = 0; e < EP_COUNT; e++)
		for (int cls = 1; cls < 6; cls++)
			if (s->m.requests[e][cls])
				leap_buf_addf(b, "leap_serve_requests_total{endpoint=\"%s\",code=\"%dxx\"} %" PRIu64 "\n", ep_name[e],
					      cls, s->m.requests[e][cls]);
	leap_buf_adds(b, "# HELP leap_serve_queue_depth Records a device holds: queued and inside its pipeline.\n"
			 "# TYPE leap_serve_queue_depth gauge\n");
	int busy = 0;
	pthread_mutex_lock(&s->mu);
	for (int d = 0; d < s->ndev; d++) {
		leap_buf_addf(b, "leap_serve_queue_depth{device=\"%s\"} %ld\n", s->dev[d].name, s->dev[d].nq + s->dev[d].nf);
		busy += s->dev[d].nf > 0;
	}
	uint64_t restarts = s->m.restarts;
	pthread_mutex_unlock(&s->mu);
	leap_buf_addf(b, "# HELP leap_serve_devices_busy Devices with records in their pipeline.\n"
			 "# TYPE leap_serve_devices_busy gauge\nleap_serve_devices_busy %d\n"
			 "# HELP leap_serve_devices Devices served.\n# TYPE leap_serve_devices gauge\nleap_serve_devices %d\n",
		      busy, s->ndev);
	leap_buf_addf(b, "# HELP leap_serve_requests_in_progress Requests admitted and not yet answered.\n"
			 "# TYPE leap_serve_requests_in_progress gauge\nleap_serve_requests_in_progress %ld\n"
			 "# HELP leap_serve_sessions WebSocket sessions open (OpenEnv and streams).\n# TYPE leap_serve_sessions gauge\n"
			 "leap_serve_sessions %d\n",
		      s->nreqs, s->sessions);
	leap_buf_addf(b, "# HELP leap_serve_rejected_total Requests refused with 429 (queues full).\n"
			 "# TYPE leap_serve_rejected_total counter\nleap_serve_rejected_total %" PRIu64 "\n"
			 "# HELP leap_serve_cancelled_records_total Records dropped: their client left or their deadline passed.\n"
			 "# TYPE leap_serve_cancelled_records_total counter\nleap_serve_cancelled_records_total %" PRIu64 "\n"
			 "# HELP leap_serve_retries_served_total Reward requests answered by an evaluation already made or in progress.\n"
			 "# TYPE leap_serve_retries_served_total counter\nleap_serve_retries_served_total %" PRIu64 "\n"
			 "# HELP leap_serve_pipeline_restarts_total Device pipelines ended to cancel work or after a failure.\n"
			 "# TYPE leap_serve_pipeline_restarts_total counter\nleap_serve_pipeline_restarts_total %" PRIu64 "\n",
		      s->m.rejected, s->m.cancelled, s->m.retries_served, restarts);
	leap_buf_addf(b, "# HELP leap_serve_draining 1 once a signal asked the server to finish.\n"
			 "# TYPE leap_serve_draining gauge\nleap_serve_draining %d\n",
		      s->draining);
	hist_text(b, "leap_serve_record_seconds", "Seconds from a record's admission to its answer.", &s->m.record_s);
	hist_text(b, "leap_serve_request_seconds", "Seconds from a request's admission to its last answer.", &s->m.request_s);
}

/* ---- prompts at start ---- */

int srv_load_prompts(struct srv *s)
{
	char *prompt = xasprintf("%s/leap-prompt", s->o->bindir);
	const char *argv[8] = {prompt, "--no-progress", "--group-size", "1", "--all"};
	int a = 5;
	if (s->o->backend) {
		argv[a++] = "--backend";
		argv[a++] = s->o->backend;
	}
	argv[a] = NULL;
	struct srv_run *run = xcalloc(1, sizeof(*run));
	srv_run_stage(run, argv);
	free(prompt);
	struct srv_pipeline p;
	char why[256] = "";
	if (srv_pipeline_start(s, &p, run->argv, 1, 0, why, sizeof(why))) {
		leap_warn("%s", why);
		srv_run_free(run);
		return -1;
	}
	close(p.in_fd);
	p.in_fd = -1;
	char chunk[65536];
	for (;;) {
		ssize_t r = read(p.out_fd, chunk, sizeof(chunk));
		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd pf = {p.out_fd, POLLIN, 0};
			(void)poll(&pf, 1, -1);
			continue;
		}
		if (r <= 0)
			break;
		leap_buf_add(&run->out, chunk, (size_t)r);
	}
	int rc = srv_pipeline_end(&p, 0, 60.0, why, sizeof(why));
	const char *q = run->out.s ? run->out.s : "", *end = q + run->out.len;
	while (q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);
		json_t *rec = json_loadb(q, len, 0, NULL);
		const char *task = leap_get_str(rec, "task", NULL);
		if (task && !json_object_get(rec, "error")) {
			s->prompts = xrealloc(s->prompts, (s->nprompts + 1) * sizeof(*s->prompts));
			s->prompt_task = xrealloc(s->prompt_task, (s->nprompts + 1) * sizeof(*s->prompt_task));
			s->prompts[s->nprompts] = xstrndup(q, len);
			s->prompt_task[s->nprompts++] = xstrdup(task);
		}
		json_decref(rec);
		q += len + (nl != NULL);
	}
	srv_run_free(run);
	if (rc || !s->nprompts) {
		leap_warn("leap-prompt --all gave no prompts%s%s", why[0] ? ": " : "", why);
		return -1;
	}
	return 0;
}

void srv_free_state(struct srv *s)
{
	while (s->reqs)
		req_free(s->reqs);
	while (s->idem_old)
		idem_drop(s, s->idem_old);
	size_t pos = 0;
	const char *k;
	void *v;
	while (leap_hmap_next(&s->idem, &pos, &k, NULL, &v)) {
		struct srv_idem *e = v;
		free(e->wait);
		free(e->key);
		free(e->body);
		free(e);
	}
	leap_hmap_free(&s->idem);
	leap_hmap_free(&s->m.verdicts);
	for (size_t i = 0; i < s->nprompts; i++) {
		free(s->prompts[i]);
		free(s->prompt_task[i]);
	}
	free(s->prompts);
	free(s->prompt_task);
	free(s->dev);
}
