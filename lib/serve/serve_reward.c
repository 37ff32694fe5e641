/* serve_reward.c - leap-serve's OpenRLHF remote reward, and the answers kept for its retries. */
/*
 * OpenRLHF posts {"query": [...], "prompts": [...], "labels": [...]} to --remote_rm_url and
 * reads "rewards" (with "scores" and "extra_logs" where present); it retries a failed request
 * up to 5 times with a 180 s timeout each. The completion is the query less its prompt, the
 * label names the task, and the samples of one prompt form a group: rewards are leap-rank's
 * scores within it (after leap-prune --annotate --preset single-turn ends every trajectory),
 * scores the pass of each record. A request is known by its X-Request-Id, else by the SHA-256
 * of its body: a retry joins the evaluation in progress, or gets the kept answer, so nothing
 * is evaluated twice. That is also why a reward request runs on when its client leaves.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/banned.h"

/* ---- OpenRLHF ---- */

static void idem_reply(struct srv *s, struct srv_idem *e)
{
	for (size_t i = 0; i < e->nwait; i++) {
		struct srv_conn *c = e->wait[i];
		srv_reply(c, e->status, "application/json", e->body, e->len);
		srv_count_request(s, EP_REWARD, e->status);
		c->ep = EP_NONE;
	}
	free(e->wait);
	e->wait = NULL;
	e->nwait = 0;
}

void srv_idem_drop(struct srv *s, struct srv_idem *e)
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
void srv_idem_done(struct srv *s, struct srv_idem *e, int status, char *body, size_t len)
{
	e->status = status;
	e->body = body;
	e->len = len;
	idem_reply(s, e);
	if (status != 200) {
		srv_idem_drop(s, e);
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
		srv_idem_drop(s, s->idem_old);
}

static void sha_hex(const void *data, size_t len, char out[65])
{
	unsigned char d[SHA256_DIGEST_LENGTH];
	SHA256(data, len, d);
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void srv_reward(struct srv_conn *c)
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
		srv_count_request(s, c->ep, 400);
		return;
	}
	struct srv_req *r = srv_req_new(s, c, EP_REWARD);
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
		char *raw = srv_dump(rec, &len);
		json_decref(rec);
		if (!raw)
			leap_die("internal error: a reward record is not JSON");
		items[i] = srv_item_new(s, r, (long)i, raw, len);
		items[i]->out = xstrdup(h);
		free(raw);
	}
	leap_hmap_free(&seen);
	json_decref(body);
	int status = srv_give_groups(s, r, items, (long)n);
	if (status) {
		srv_refuse(c, r, status, items, (long)n);
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

void srv_reward_answer(struct srv_req *r, struct srv_item *it)
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
	srv_submit_run(s, run, NULL, r->n);
}

void srv_reward_ranked(struct srv_req *r, struct srv_run *run)
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
	char *t = run->failed ? NULL : srv_dump(ans, &len);
	json_decref(ans);
	if (run->failed || !t) {
		free(t);
		leap_warn("reward: %s", run->failed ? run->why : "the answer is not JSON");
		t = xasprintf("{\"error\":{\"status\":500,\"message\":\"leap-prune | leap-rank failed\"}}");
		len = strlen(t);
		srv_idem_done(s, r->idem, 500, t, len);
	} else {
		srv_idem_done(s, r->idem, 200, t, len);
	}
	r->idem = NULL;
	srv_req_finish(r, run->failed ? 500 : 200);
}

void srv_reward_forget(struct srv_conn *c)
{
	struct srv *s = c->s;
	size_t pos = 0;
	const char *k;
	void *v;
	while (leap_hmap_next(&s->idem, &pos, &k, NULL, &v)) {
		struct srv_idem *e = v;
		for (size_t i = 0; i < e->nwait; i++)
			if (e->wait[i] == c)
				e->wait[i--] = e->wait[--e->nwait];
	}
}

void srv_reward_expire(struct srv *s, double now)
{
	while (s->idem_old && now - s->idem_old->t > s->o->idem_ttl)
		srv_idem_drop(s, s->idem_old);
}

void srv_reward_free(struct srv *s)
{
	while (s->idem_old)
		srv_idem_drop(s, s->idem_old);
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
}
