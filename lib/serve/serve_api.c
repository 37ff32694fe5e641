/* serve_api.c - leap-serve's requests: records in, the filters' answers out, and what a client sees. */
/*
 * Every endpoint turns what a client sends into leap records, gives them to the devices
 * (serve_pipe.c: the real leap-compile | leap-verify | leap-bench) and turns the answers
 * back into what that client expects. Nothing here decides a verdict: a status comes from
 * the filters, a turn's decision and feedback from leap-prune, a reward from leap-rank.
 * This file routes a request to its endpoint, holds the JSON Lines endpoints, hands what the
 * engine answers back to the endpoint that waits for it, and checks deadlines; serve_openenv.c
 * and serve_reward.c hold the OpenEnv and OpenRLHF endpoints, serve_req.c the life of a
 * request that all of them share (admission, items, a group to one device, cancel),
 * serve_answer.c what they write on a connection, serve_metrics.c the counters. The network
 * side calls down into this file and the endpoints, never the other way round.
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
 *
 * A request is cancelled with its client (srv_conn_gone), except a reward request, which
 * runs on for its retries (serve_reward.c); one past its deadline answers what is left with
 * error records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/banned.h"

/* The group a record is given to a device with. */
static const char *group_key(const json_t *rec)
{
	const char *g = leap_get_str(rec, "group", NULL);
	return g ? g : leap_get_str(rec, "task", "");
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
			char *t = srv_dump(err, &el);
			json_decref(err);
			if (t) {
				leap_buf_add(errs, t, el);
				leap_buf_add(errs, "\n", 1);
			}
			free(t);
			continue;
		}
		xgrow((void **)items, &cap, (size_t)*nitems + 1, sizeof(**items));
		struct srv_item *it = srv_item_new(s, r, lineno - 1, q, l);
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
		srv_count_verdict(s, p, l);
		p += l + 1;
	}
}

static void admit_lines(struct srv_conn *c)
{
	struct srv *s = c->s;
	struct srv_req *r = srv_req_new(s, c, c->ep);
	if (c->ep == EP_TURN) {
		char buf[32];
		int64_t g;
		if (!srv_query(c, "group_size", buf, sizeof(buf))) {
			if (leap_parse_i64(buf, 1, 1 << 20, &g)) {
				r->done = 1;
				r->conn = NULL;
				c->req = NULL;
				srv_reply_error(c, 400, "group_size=%s is not a number from 1 to 1048576", buf);
				srv_count_request(s, c->ep, 400);
				srv_req_release(r);
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
	int status = nitems ? srv_give_groups(s, r, items, nitems) : 0;
	if (status) {
		srv_refuse(c, r, status, items, nitems);
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
		srv_req_finish(r, 200);
		srv_req_release(r);
	}
}

/* ---- WebSocket /v1/stream ---- */

void srv_stream_open(struct srv_conn *c)
{
	struct srv_req *r = srv_req_new(c->s, c, EP_STREAM);
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
			char *t = srv_dump(e, &el);
			json_decref(e);
			if (t) {
				leap_buf_add(&errs, t, el);
				leap_buf_add(&errs, "\n", 1);
			}
			free(t);
			srv_item_free(items[i]);
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
			srv_item_free(items[i]);
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
		srv_req_finish(r, 200);
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

static void turn_answer(struct srv_req *r, struct srv_item *it)
{
	r->ans[it->idx] = it->out;
	r->anslen[it->idx] = it->outlen;
	it->out = NULL;
	if (--r->grp_left[it->grp] == 0) {
		long g = it->grp, n = r->grp_n[g];
		srv_queue_prune(r->s, r, g, r->group_size ? r->group_size : n, NULL, 0);
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
			char *t = srv_dump(rec, &len);
			json_decref(rec);
			if (c && t)
				srv_stream_line(c, t, len);
			free(t);
		}
	} else if (c) {
		srv_stream_bytes(c, run->out3.s, run->out3.len); /* the decided records, then the next turn's */
		srv_stream_bytes(c, run->out.s, run->out.len);
	}
	for (long k = 0; k < r->grp_n[g]; k++) { /* written: a deadline now has nothing of it to say */
		long i = r->grp_idx[g][k];
		free(r->ans[i]);
		r->ans[i] = NULL;
	}
	r->answered += r->grp_n[g];
	if (r->answered == r->n && c) {
		srv_stream_end(c);
		srv_req_finish(r, 200);
	}
}

/* ---- dispatch ---- */

void srv_ws_message(struct srv_conn *c, const char *msg, size_t len)
{
	if (c->ep == EP_STREAM)
		stream_message(c, msg, len);
	else
		srv_openenv_message(c, msg, len);
}

void srv_dispatch(struct srv_conn *c)
{
	switch (c->ep) {
	case EP_EVALUATE:
	case EP_TURN:
		admit_lines(c);
		break;
	case EP_RESET:
		srv_openenv_reset(c);
		break;
	case EP_STEP:
		srv_openenv_step(c);
		break;
	case EP_REWARD:
		srv_reward(c);
		break;
	case EP_PROMPTS:
		srv_prompts(c);
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
		srv_item_free(it);
		srv_req_release(r);
		return;
	}
	srv_count_verdict(s, it->out, it->outlen);
	srv_hist_add(&s->m.record_s, leap_now() - r->t0);
	switch (r->ep) {
	case EP_EVALUATE:
		if (r->conn)
			srv_stream_line(r->conn, it->out, it->outlen);
		if (++r->answered == r->n) {
			if (r->conn)
				srv_stream_end(r->conn);
			srv_req_finish(r, 200);
		}
		break;
	case EP_TURN:
		turn_answer(r, it);
		break;
	case EP_STEP:
	case EP_WS:
		srv_step_answer(r, it);
		break;
	case EP_REWARD:
		srv_reward_answer(r, it);
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
	srv_item_free(it);
	srv_req_release(r);
}

static void run_back(struct srv_run *run)
{
	struct srv_req *r = run->req;
	r->pending--;
	if (!r->done) {
		if (r->ep == EP_TURN)
			turn_pruned(r, run);
		else if (r->ep == EP_REWARD)
			srv_reward_ranked(r, run);
		else
			srv_step_pruned(r, run);
	}
	srv_run_free(run);
	srv_req_release(r);
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
/* The record raw[0..len) (tagged or not) with `error` set to why, as one line. */
static char *error_line(const char *raw, size_t rawlen, long idx, const char *why, size_t *len)
{
	json_t *rec = json_loadb(raw, rawlen, 0, NULL);
	if (rec && json_is_object(rec)) {
		json_object_del(rec, SRV_TAG);
		leap_record_set_error(rec, "<request>", idx + 1, "%s", why);
	} else {
		json_decref(rec);
		rec = leap_error_record("<request>", idx + 1, NULL, 0, "%s", why);
	}
	char *t = srv_dump(rec, len);
	json_decref(rec);
	return t;
}

/* Sends the line to r's client, as its endpoint sends answers. */
static void send_line(struct srv_req *r, const char *t, size_t len)
{
	if (!r->conn)
		return;
	if (r->ep == EP_STREAM)
		srv_ws_send(r->conn, t, len);
	else
		srv_stream_line(r->conn, t, len);
}

/* The records of a JSON Lines request past its deadline: each one not yet answered comes back
 * with an error saying so, its fields kept (those the engine holds, and for /v1/turn those
 * whose group leap-prune has not decided yet), and its work is dropped. */
static void expire_lines(struct srv_req *r, double secs)
{
	struct srv *s = r->s;
	char *why = xasprintf("the request's deadline (%g s) passed before this record was answered", secs);
	pthread_mutex_lock(&s->mu);
	for (int d = 0; d < s->ndev; d++)
		for (int list = 0; list < 2; list++)
			for (struct srv_item *it = list ? s->dev[d].fhead : s->dev[d].qhead; it; it = it->next) {
				if (it->req != r || it->cancel)
					continue;
				size_t len;
				char *t = error_line(it->in, it->inlen, it->idx, why, &len);
				if (t)
					send_line(r, t, len);
				free(t);
			}
	pthread_mutex_unlock(&s->mu);
	for (long g = 0; r->ep == EP_TURN && g < r->ngrp; g++)
		for (long k = 0; k < r->grp_n[g]; k++) {
			long i = r->grp_idx[g][k];
			if (!r->ans[i])
				continue;
			size_t len;
			char *t = error_line(r->ans[i], r->anslen[i], i, why, &len);
			if (t)
				send_line(r, t, len);
			free(t);
		}
	free(why);
	srv_req_cancel(r);
	if (r->conn && r->ep == EP_STREAM)
		r->conn->close_after = 1;
	else if (r->conn)
		srv_stream_end(r->conn);
	srv_req_finish(r, 200);
}

static void expire(struct srv_req *r)
{
	struct srv *s = r->s;
	double secs = r->deadline - r->t0;
	struct srv_conn *c = r->conn;
	if (r->ep == EP_EVALUATE || r->ep == EP_TURN || r->ep == EP_STREAM) {
		expire_lines(r, secs);
	} else if (r->ep == EP_REWARD) {
		char *t = xasprintf("{\"error\":{\"status\":504,\"message\":\"the deadline (%g s) passed\"}}", secs);
		srv_req_cancel(r);
		if (r->idem)
			srv_idem_done(s, r->idem, 504, t, strlen(t));
		else
			free(t);
		r->idem = NULL;
		srv_req_finish(r, 504);
	} else {
		if (c && r->ep == EP_STEP)
			srv_reply_error(c, 504, "the step's deadline (%g s) passed before it was evaluated", secs);
		else if (c)
			srv_ws_error(c, "EXECUTION_ERROR", "the step's deadline (%g s) passed before it was evaluated", secs);
		srv_req_cancel(r);
		srv_req_finish(r, 504);
	}
}

void srv_check_deadlines(struct srv *s, double now)
{
	for (struct srv_req *r = s->reqs, *next; r; r = next) {
		next = r->next;
		if (!r->done && now > r->deadline) {
			expire(r);
			srv_req_release(r);
		}
	}
	srv_reward_expire(s, now);
}

void srv_conn_gone(struct srv_conn *c)
{
	srv_reward_forget(c);
	struct srv_req *r = c->req;
	c->req = NULL;
	if (!r)
		return;
	r->conn = NULL;
	if (!r->done) {
		srv_req_cancel(r);
		srv_req_finish(r, 499);
	}
	srv_req_release(r);
}

void srv_free_state(struct srv *s)
{
	while (s->reqs)
		srv_req_free(s->reqs);
	srv_reward_free(s);
	srv_openenv_free(s);
	leap_hmap_free(&s->m.verdicts);
	free(s->dev);
}
