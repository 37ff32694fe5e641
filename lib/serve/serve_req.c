/* serve_req.c - leap-serve's requests and records, as every endpoint admits and ends them. */
/*
 * What the endpoints (serve_api.c's JSON Lines ones, serve_openenv.c, serve_reward.c) share
 * of a request's life: its start (deadline from --deadline or the client's `timeout`), the
 * items its records become for the pipelines, the choice of one device per group (or the
 * refusal, 413 or 429, with nothing given), leap-prune over a finished group, the finish and
 * the cancel, and its release once nothing holds it. It knows no endpoint: each endpoint
 * calls down into it, and the engine's answers reach the endpoints through serve_api.c.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/banned.h"

char *srv_dump(const json_t *j, size_t *len)
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

struct srv_req *srv_req_new(struct srv *s, struct srv_conn *c, int ep)
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

void srv_req_free(struct srv_req *r)
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
void srv_req_release(struct srv_req *r)
{
	if (r->pending == 0 && (r->done || !r->conn))
		srv_req_free(r);
}

/* The request is answered in full (or given up): it leaves the connection. */
void srv_req_finish(struct srv_req *r, int status)
{
	r->done = 1;
	srv_count_request(r->s, r->ep, status);
	srv_hist_add(&r->s->m.request_s, leap_now() - r->t0);
	if (r->conn && r->conn->req == r)
		r->conn->req = NULL;
	r->conn = NULL;
}

/* Drops what the engine still holds of r. */
void srv_req_cancel(struct srv_req *r)
{
	struct srv *s = r->s;
	r->done = 1;
	pthread_mutex_lock(&s->mu);
	srv_cancel_items(s, r);
	pthread_mutex_unlock(&s->mu);
}

/* ---- items ---- */

/* A record as the item the pipeline reads: the tag first, then the record's own text. */
struct srv_item *srv_item_new(struct srv *s, struct srv_req *r, long idx, const char *raw, size_t len)
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

void srv_item_free(struct srv_item *it)
{
	free(it->in);
	free(it->out);
	free(it);
}

/* Gives the request's items to devices, each group to one device. Returns 0, or the HTTP
 * status that refuses the request (nothing given): 413 for a group no queue can ever hold,
 * 429 when the queues are full now. */
int srv_give_groups(struct srv *s, struct srv_req *r, struct srv_item **items, long nitems)
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
void srv_refuse(struct srv_conn *c, struct srv_req *r, int status, struct srv_item **items, long n)
{
	for (long i = 0; i < n; i++)
		srv_item_free(items[i]);
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
	srv_count_request(c->s, c->ep, status);
	srv_req_release(r);
}

/* leap-prune over one finished group of a /v1/turn request. */
void srv_queue_prune(struct srv *s, struct srv_req *r, long g, long group_size, const char *preset, int max_turns)
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
	srv_submit_run(s, run, r->grp_idx[g], r->grp_n[g]);
}
