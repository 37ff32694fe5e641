/* serve_openenv.c - leap-serve's OpenEnv side: sessions over /ws, stateless /reset and /step, prompts. */
/*
 * openenv-core (0.3) defines the protocol: a WebSocket at /ws where each connection is one
 * environment (messages {"type": reset|step|state|close, "data"} answered by
 * {"type": observation|state|error, "data"}), and POST /reset and /step that build a fresh
 * environment per call. Here an environment is one trajectory of one task. reset answers the
 * task's turn-1 record, made by leap-prompt on this machine when the server started (so a
 * prompt states the CPU or GPU that will time the kernel, not the trainer's); step evaluates
 * the completion through a device's pipeline and lets leap-prune (--group-size 1 --preset
 * debug-all --max-turns N) say whether another turn follows and with what feedback. The
 * observation carries the evaluated record, the next-turn record and its messages, and the
 * reward is the record's pass (1) or not (0): a single trajectory has no group to rank in.
 * The stateless step takes the record in its action, so HTTP clients carry the state.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/banned.h"

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
	char *t = srv_dump(j, &len);
	if (!t)
		leap_die("internal error: an answer is not JSON");
	srv_reply(c, status, "application/json", t, len);
	free(t);
}

static void ws_json(struct srv_conn *c, const char *type, json_t *data)
{
	json_t *m = json_pack("{s:s,s:O}", "type", type, "data", data);
	size_t len;
	char *t = srv_dump(m, &len);
	json_decref(m);
	if (!t)
		leap_die("internal error: a message is not JSON");
	srv_ws_send(c, t, len);
	free(t);
}

void srv_ws_error(struct srv_conn *c, const char *code, const char *fmt, ...)
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
	char *raw = srv_dump(rec, &len);
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
	struct srv_req *r = srv_req_new(s, c, ep);
	r->n = 1;
	r->ans = xcalloc(1, sizeof(*r->ans));
	r->anslen = xcalloc(1, sizeof(*r->anslen));
	struct srv_item *it = srv_item_new(s, r, 0, raw, len);
	free(raw);
	it->out = xstrdup("");
	int status = srv_give_groups(s, r, &it, 1);
	if (status) {
		srv_item_free(it);
		r->done = 1;
		r->conn = NULL;
		c->req = NULL;
		srv_req_release(r);
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

void srv_openenv_reset(struct srv_conn *c)
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
	srv_count_request(c->s, c->ep, 200);
	json_decref(o);
	json_decref(rec);
}

void srv_openenv_step(struct srv_conn *c)
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
		srv_count_request(c->s, c->ep, st);
	}
}

void srv_openenv_message(struct srv_conn *c, const char *msg, size_t len)
{
	json_error_t je;
	json_t *m = json_loadb(msg, len, 0, &je);
	if (!json_is_object(m)) {
		json_decref(m);
		srv_ws_error(c, "INVALID_JSON", "Invalid JSON: %s", je.text);
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
		srv_ws_error(c, "EXECUTION_ERROR", "a step of this session is still being evaluated");
	} else if (c->s->draining) {
		srv_ws_error(c, "EXECUTION_ERROR", "the server is shutting down");
	} else if (!strcmp(type, "reset")) {
		char why[256];
		json_t *rec = reset_record(c->s, json_is_object(data) ? data : json_object(), why, sizeof(why));
		if (!rec) {
			srv_ws_error(c, "VALIDATION_ERROR", "%s", why);
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
			srv_ws_error(c, "EXECUTION_ERROR", "%s", c->ended ? "the trajectory has ended: reset first" : "reset first");
		} else if (!json_is_object(data)) {
			srv_ws_error(c, "VALIDATION_ERROR", "step data must be an object with 'completion' or 'code'");
		} else {
			char why[256];
			int st = start_step(c, EP_WS, step_record(c->cur, data), why, sizeof(why));
			if (st)
				srv_ws_error(c, st == 429 ? "CAPACITY_REACHED" : "VALIDATION_ERROR", "%s", why);
		}
	} else {
		srv_ws_error(c, "UNKNOWN_TYPE", "Unknown message type: %s", type);
	}
	json_decref(m);
}

void srv_step_answer(struct srv_req *r, struct srv_item *it)
{
	r->ans[0] = it->out;
	r->anslen[0] = it->outlen;
	it->out = NULL;
	srv_queue_prune(r->s, r, 0, 1, "debug-all", r->s->o->max_turns);
}

/* The step's prune run ended: the observation, its reward ([pass]) and whether it is done. */
void srv_step_pruned(struct srv_req *r, struct srv_run *run)
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
	srv_req_finish(r, 200);
}

void srv_openenv_free(struct srv *s)
{
	for (size_t i = 0; i < s->nprompts; i++) {
		free(s->prompts[i]);
		free(s->prompt_task[i]);
	}
	free(s->prompts);
	free(s->prompt_task);
}
/* ---- GET /v1/prompts ---- */

void srv_prompts(struct srv_conn *c)
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

