/* serve_int.h - what the parts of leap-serve share: the server, its devices, records in flight. */
#ifndef LEAP_SERVE_INT_H
#define LEAP_SERVE_INT_H

#include <pthread.h>
#include <stdint.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "core/child.h"
#include "core/hmap.h"
#include "serve.h"
#include "core/util.h"

/*
 * Threads and ownership. One thread runs libwebsockets' event loop (serve_http.c) and owns
 * every connection and request. Each device has a thread (serve_pipe.c) that feeds its
 * pipeline; one more thread runs the short filters (leap-prune, leap-rank) over finished
 * groups. They meet in struct srv under srv.mu: device queues, the pipelines' in-flight
 * lists and two hand-back lists (records answered, short runs ended), after which the event
 * loop is woken with lws_cancel_service. A record or a run belongs to exactly one list or
 * thread at a time and always comes back through a hand-back list, cancelled or not, so the
 * event loop knows when a request holds nothing more and may be freed.
 */

struct srv;
struct srv_req;

/* The stages of a pipeline: at most this many programs. */
enum { SRV_STAGES = 4, SRV_ARGS = 16 };

/* One record of a request, from its admission to its answer. */
struct srv_item {
	struct srv_item *next;
	struct srv_req *req;
	uint64_t tag;          /* the pipeline's key for it (the field SRV_TAG, first in the line) */
	long idx;              /* its place in the request */
	long grp;              /* its group in the request */
	char *in;              /* the tagged line written to the pipeline, with its newline */
	size_t inlen;
	char *out;             /* the answer (tag removed, no newline), or NULL */
	size_t outlen;
	int attempts;          /* pipelines that ended before answering it */
	int dev;               /* the device it was given to */
	int cancel;            /* srv.mu: its request is gone; drop it */
	int sent;              /* srv.mu: written (or being written) into the pipeline */
};

/* The field that carries an item's tag through the filters (they pass it through). */
#define SRV_TAG "leap_serve_tag"

/* A short filter run (leap-prune, leap-rank) over finished records, by the run thread. */
struct srv_run {
	struct srv_run *next;
	struct srv_req *req;
	long grp;                           /* the group it decides, or -1 */
	char *argv[SRV_STAGES][SRV_ARGS];   /* owned strings; NULL-terminated per stage */
	int nstage;
	struct leap_buf in;                 /* what the first stage reads */
	struct leap_buf out;                /* what the last stage wrote */
	struct leap_buf out3;               /* what the last stage wrote on descriptor 3 */
	int failed;                         /* a stage did not end with status 0 or 1 */
	char why[256];
};

/* A pipeline of filters started through lib/core/child.h. */
struct srv_pipeline {
	struct leap_child st[SRV_STAGES];
	int n;
	int in_fd;   /* the first stage's standard input (ours to write), or -1 */
	int out_fd;  /* the last stage's standard output (ours to read), or -1 */
	int fd3;     /* the last stage's descriptor 3 (ours to read), or -1 */
};

/* A device: its queue, its pipeline and the thread between them. */
struct srv_dev {
	struct srv *s;
	int index;
	const char *name;           /* leap-verify's and leap-bench's --device */
	pthread_t th;
	int wake[2];                /* a byte here wakes the thread */
	/* srv.mu: */
	struct srv_item *qhead, *qtail;  /* given, not yet written */
	long nq;
	struct srv_item *fhead, *ftail;  /* written, answers awaited in this order */
	long nf;
	long ncancel;               /* of those, cancelled (they hold no room: see srv_room) */
	int restart;                /* a cancelled record is in the pipeline: end it */
	/* the thread's own: */
	struct srv_pipeline p;
	int running;
	struct srv_item *wcur;      /* being written */
	size_t woff;
	struct leap_buf rbuf;
};

/* Counters for /metrics (the event loop's, except those under mu). */
enum { SRV_HBUCKETS = 12 };
struct srv_hist {
	uint64_t bucket[SRV_HBUCKETS]; /* cumulative counts are made when written */
	uint64_t count;
	double sum;
};

struct srv_metrics {
	struct leap_hmap verdicts;   /* status -> (uintptr_t) count of records answered */
	uint64_t requests[16][8];    /* [endpoint (enum srv_ep)][status class] */
	uint64_t rejected;           /* 429 */
	uint64_t cancelled;          /* records dropped because their client left or timed out */
	uint64_t retries_served;     /* reward requests answered from the retry cache */
	uint64_t restarts;           /* pipelines ended to cancel work or after a failure */
	struct srv_hist record_s;    /* admission to answer, per record */
	struct srv_hist request_s;   /* admission to the last answer, per request */
};

struct srv {
	lws_sorted_usec_list_t sul;      /* the event loop's tick (signals, deadlines) */
	const struct leap_serve_opts *o;
	struct lws_context *ctx;
	pthread_mutex_t mu;
	struct srv_dev *dev;
	int ndev;
	/* srv.mu: */
	struct srv_item *dhead, *dtail;  /* answered or cancelled items, for the event loop */
	struct srv_run *rq_head, *rq_tail; /* runs waiting for the run thread */
	struct srv_run *rd_head, *rd_tail; /* runs ended */
	int stop;                        /* the threads end once their work is done */
	pthread_t run_th;
	int run_wake[2];
	/* the event loop's: */
	struct srv_req *reqs;            /* requests in progress */
	long nreqs;
	int sessions;                    /* OpenEnv WebSocket sessions open */
	uint64_t next_tag;
	int draining;                    /* a signal came: finish what was admitted */
	int signal;
	struct srv_metrics m;
	struct leap_hmap idem;           /* reward request id -> struct srv_idem */
	struct srv_idem *idem_old, *idem_new; /* in order of completion, for eviction */
	long nidem;
	char **prompts;                  /* turn-1 record of every task (leap-prompt at start) */
	char **prompt_task;
	size_t nprompts;
	char **env;                      /* the children's environment */
	struct srv_conn **conns;         /* open connections (draining waits for their output) */
	size_t nconns, capconns;
};

/* The endpoints, for routing and for the request counters of /metrics. */
enum srv_ep { EP_NONE, EP_EVALUATE, EP_TURN, EP_RESET, EP_STEP, EP_REWARD, EP_WS, EP_PROMPTS, EP_GET, EP_STREAM, EP_COUNT };

/* A WebSocket message waiting to be sent. */
struct srv_msg {
	struct srv_msg *next;
	size_t len;
	char data[];
};

/* One connection (libwebsockets' per-session memory): the request it reads, the answer it
 * writes; for a WebSocket, the OpenEnv session. */
struct srv_conn {
	struct srv *s;
	struct lws *wsi;
	int ws;                  /* an OpenEnv WebSocket session */
	int ep;
	char path[128];
	char query[512];
	char reqid[128];         /* X-Request-Id, or "" */
	struct leap_buf body;    /* the request body, or the WebSocket message being received */
	int over;                /* the body passed --max-request */
	/* the answer */
	int status;
	int head_sent;
	int chunked;             /* streamed: chunked transfer encoding, ended by `complete` */
	int complete;            /* nothing will be added to out */
	int retry_after;         /* seconds, for 429 and 503; 0: none */
	const char *ctype;
	struct leap_buf out;
	size_t off;
	unsigned char *wbuf;     /* LWS_PRE + a chunk, for lws_write */
	struct srv_req *req;     /* the request whose answers it carries */
	/* a WebSocket session */
	struct srv_msg *mhead, *mtail;
	json_t *cur;             /* the record the session's next step answers */
	char episode[256];
	long steps;
	int ended;               /* the trajectory is done */
	int close_after;         /* close once the queued messages are sent */
	/* a /v1/stream WebSocket */
	struct leap_hmap gdev;   /* group key -> its device + 1: a group stays on one device */
	struct leap_buf held;    /* records that found no room yet (reading is paused) */
	int in_ended;            /* the client sent the empty message: no more records */
};

/* One request in progress: its records, their answers, and where they go. */
struct srv_req {
	struct srv *s;
	struct srv_req *prev, *next;  /* in srv.reqs */
	struct srv_conn *conn;        /* NULL once the client has gone */
	int ep;
	double t0, deadline;
	long n;                       /* records */
	long answered;
	long pending;                 /* items and runs the engine still holds */
	int done;                     /* answered in full, or given up */
	char **ans;                   /* per record: its answer (endpoints that answer at the end) */
	size_t *anslen;
	long ngrp;
	long *grp_left;               /* per group: records not yet answered */
	long **grp_idx;               /* per group: its records */
	long *grp_n;
	long group_size;              /* /v1/turn: leap-prune's --group-size (0: the group's count) */
	struct srv_idem *idem;        /* /v1/reward: its entry in the retry cache */
};

/* A reward request's answer, kept for its retries. */
struct srv_idem {
	struct srv_idem *older, *newer; /* finished entries, oldest first */
	char *key;
	int finished;
	int status;
	char *body;                   /* the answer */
	size_t len;
	double t;
	struct srv_conn **wait;       /* connections waiting for it (retries) */
	size_t nwait;
};

/* serve_answer.c: answers on a connection, below the endpoints and the network side alike. */
/* Asks the event loop to write what c holds (a no-op once its client is gone). */
void srv_kick(struct srv_conn *c);
/* A whole answer: status, content type and body. */
void srv_reply(struct srv_conn *c, int status, const char *ctype, const char *body, size_t len);
/* A JSON error answer {"error":{"status":N,"message":M}} (OpenEnv's endpoints: {"detail":M}). */
void srv_reply_error(struct srv_conn *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A streamed answer: the status line now, then lines as they come, then the end. */
void srv_stream_begin(struct srv_conn *c, const char *ctype);
void srv_stream_line(struct srv_conn *c, const char *line, size_t len);
/* Whole lines already ended by their newlines. */
void srv_stream_bytes(struct srv_conn *c, const char *data, size_t len);
void srv_stream_end(struct srv_conn *c);
/* A WebSocket text message. */
void srv_ws_send(struct srv_conn *c, const char *data, size_t len);
/* The value of query parameter `name` of the request on c into buf: 0, or -1 when absent. */
int srv_query(const struct srv_conn *c, const char *name, char *buf, size_t len);

/* serve_api.c: what each endpoint does (the network side's one way in), and the engine's
 * answers handed to the endpoint that waits for them. */
/* A request whose body has been read. */
void srv_dispatch(struct srv_conn *c);
/* A WebSocket message: of an OpenEnv session, or records of a /v1/stream. */
void srv_ws_message(struct srv_conn *c, const char *msg, size_t len);
/* A /v1/stream WebSocket opened: its request. */
void srv_stream_open(struct srv_conn *c);
/* Items and runs handed back by the engine; deadlines. */
void srv_collect(struct srv *s);
void srv_check_deadlines(struct srv *s, double now);
/* The connection is gone: its request is cancelled (a reward request runs on for retries). */
void srv_conn_gone(struct srv_conn *c);
/* The Prometheus text of /metrics. */
void srv_metrics_text(struct srv *s, struct leap_buf *b);
void srv_free_state(struct srv *s);

/* serve_req.c: requests and records, shared by the endpoints. */
char *srv_dump(const json_t *j, size_t *len);
struct srv_req *srv_req_new(struct srv *s, struct srv_conn *c, int ep);
void srv_req_free(struct srv_req *r);
/* Frees r once nothing holds it (no item or run, and answered or its client gone). */
void srv_req_release(struct srv_req *r);
/* r is answered in full or given up: counted, and off its connection. */
void srv_req_finish(struct srv_req *r, int status);
/* Drops what the engine still holds of r. */
void srv_req_cancel(struct srv_req *r);
/* The item of the record raw[0..len) (a JSON object), tagged for the pipeline. */
struct srv_item *srv_item_new(struct srv *s, struct srv_req *r, long idx, const char *raw, size_t len);
void srv_item_free(struct srv_item *it);
/* Gives items (their group keys parked in out) to devices, each group to one: 0, or 413/429
 * with nothing given. */
int srv_give_groups(struct srv *s, struct srv_req *r, struct srv_item **items, long nitems);
/* Answers a request whose records could not be given (413 or 429) and frees them. */
void srv_refuse(struct srv_conn *c, struct srv_req *r, int status, struct srv_item **items, long n);
/* Queues leap-prune over group g of r's answers. */
void srv_queue_prune(struct srv *s, struct srv_req *r, long g, long group_size, const char *preset, int max_turns);

/* serve_openenv.c */
/* Runs leap-prompt once for the turn-1 record of every task (OpenEnv's reset). */
int srv_load_prompts(struct srv *s);
void srv_openenv_reset(struct srv_conn *c);
void srv_openenv_step(struct srv_conn *c);
void srv_openenv_message(struct srv_conn *c, const char *msg, size_t len);
void srv_ws_error(struct srv_conn *c, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void srv_step_answer(struct srv_req *r, struct srv_item *it);
void srv_step_pruned(struct srv_req *r, struct srv_run *run);
void srv_prompts(struct srv_conn *c);
void srv_openenv_free(struct srv *s);

/* serve_reward.c */
void srv_reward(struct srv_conn *c);
void srv_reward_answer(struct srv_req *r, struct srv_item *it);
void srv_reward_ranked(struct srv_req *r, struct srv_run *run);
/* Gives the entry its answer (kept for retries when status is 200, else dropped). */
void srv_idem_done(struct srv *s, struct srv_idem *e, int status, char *body, size_t len);
void srv_idem_drop(struct srv *s, struct srv_idem *e);
/* The connection no longer waits for a reward answer. */
void srv_reward_forget(struct srv_conn *c);
/* Drops the kept answers older than --retry-ttl. */
void srv_reward_expire(struct srv *s, double now);
void srv_reward_free(struct srv *s);

/* serve_metrics.c */
void srv_hist_add(struct srv_hist *h, double v);
void srv_count_request(struct srv *s, int ep, int status);
void srv_count_verdict(struct srv *s, const char *line, size_t len);

/* serve_pipe.c: the engine. */
int srv_engine_start(struct srv *s);
/* Stops the threads after they finished everything given (the caller waits for answers
 * first); kills the pipelines when `now`. */
void srv_engine_stop(struct srv *s, int now);
/* The records device d may still take: --queue less those queued and those in its pipeline
 * that are not cancelled (they leave with the restart under way). Under mu. */
long srv_room(const struct srv *s, int d);
/* Gives items (a list linked by next) to device d. Under mu. */
void srv_give(struct srv *s, int d, struct srv_item *head, struct srv_item *tail, long n);
/* Drops every item of req: queued ones are moved to the answered list (cancelled), those in
 * a pipeline make it restart. Under mu. */
void srv_cancel_items(struct srv *s, struct srv_req *req);
/* Queues a short run. Under mu. */
void srv_queue_run(struct srv *s, struct srv_run *r);
/* Gives run, as its input, the answers of its request numbered idx[0..n) (idx NULL: the first n),
 * one line each, counts it pending and queues it. Takes mu. */
void srv_submit_run(struct srv *s, struct srv_run *run, const long *idx, long n);
/* Starts the stages argv[0..n) as a pipeline (descriptor 3 of the last one a pipe when
 * want3): 0, or -1 with why filled (nothing left running). */
int srv_pipeline_start(struct srv *s, struct srv_pipeline *p, char *const argv[][SRV_ARGS], int n,
		       int want3, char *why, size_t whylen);
/* Ends a pipeline: closes our ends, asks each stage to stop (SIGTERM when `kill_now`),
 * waits up to grace seconds, kills what is left; returns 0 when every stage ended with
 * status 0 or 1, else -1 with why filled. */
int srv_pipeline_end(struct srv_pipeline *p, int kill_now, double grace, char *why, size_t whylen);
/* Frees a run. */
void srv_run_free(struct srv_run *r);
/* Adds one stage (argv ends with NULL) to a run. */
void srv_run_stage(struct srv_run *r, const char *const *argv);
/* Removes the tag from the answer line[0..len) of the item with `tag`: 0 with the line
 * rewritten in place (*len updated), -1 when the line does not carry that tag. */
int srv_untag(char *line, size_t *len, uint64_t tag);

#endif
