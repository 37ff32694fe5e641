/* serve_http.c - leap-serve's network side: libwebsockets' event loop, routing, limits, auth, drain. */
/*
 * Why libwebsockets: OpenEnv's clients (and TRL through them) talk over a WebSocket, the
 * batch endpoint and OpenRLHF over plain HTTP, and one library serves both on one port from
 * one poll loop; it is packaged by Debian (libwebsockets-dev). libmicrohttpd, the other small
 * C HTTP server there, has no WebSocket support in Debian 12.
 *
 * This file knows HTTP and WebSocket, not leap: it reads a request (headers, a body up to
 * --max-request), checks who may call (a bearer token compared in constant time), refuses
 * what cannot be served (unknown path 404, wrong method 405, a body too large 413, draining
 * 503), hands the request to serve_api.c, and writes the answers that the endpoints leave on
 * the connection (serve_answer.c) as they are given: whole, or streamed with chunked transfer
 * encoding, one record per line as each is ready. The event loop runs on one thread; the
 * engine's threads wake it with lws_cancel_service, and a tick every 100 ms notices a signal
 * and the requests past their deadline.
 *
 * Signals: SIGTERM, SIGINT or SIGHUP start the drain: new requests get 503 with Retry-After,
 * admitted ones are answered in full, and the server ends once nothing is left to write.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The network side (leap-serve):
 *
 * What leap-serve does about them:
 *
 * - The token. Read from a file (its first line, at least 16 characters), never from the
 *   command line, where `ps` shows it to every user ("... the token is never on the command
 *   line" is checked in the same test). Compared in constant time: the SHA-256 digests of the
 *   expected and the presented token are compared with OpenSSL's `CRYPTO_memcmp`, so neither
 *   the token's bytes nor its length leak through the time a refusal takes (`authorised()` in
 *   `lib/serve/serve_http.c`; the timing itself is not tested).
 * - No TLS. The token and the records travel in clear text. Off a trusted network, run
 *   leap-serve on 127.0.0.1 behind a proxy that terminates TLS, or inside a network you trust
 *   (a cluster's private network); examples/cluster.md shows both.
 * - No process outlives its work. A client that disconnects, or whose deadline passes, gets its
 *   records dropped; one already inside a pipeline is stopped with that pipeline (SIGTERM, then
 *   SIGKILL of each stage's process group after 5 s), whose sandboxes die with it ("serve: a
 *   client that disconnects cancels its work and leaves no process behind" checks that every
 *   process that worked for the request is gone). The exception is a reward request (OpenRLHF's
 *   client retries after its own 180 s timeout): it runs on until its deadline so that a retry
 *   finds it.
 * - Nothing is answered twice or lost. SIGTERM answers every admitted request in full ("serve:
 *   load: 300 requests, 32 at once, every record answered exactly once across a SIGTERM"); a
 *   retried reward request is answered from the first evaluation ("serve: an OpenRLHF-shaped
 *   reward request, retried after a client timeout, is evaluated once"). Reward requests are
 *   known by X-Request-Id or by the SHA-256 of their body: a caller who sends the same body as
 *   another within `--retry-ttl` gets the other's answer, which is the answer to the same
 *   records.
 * - What leap-serve does not do: rate limiting per caller, several tokens or scopes, audit logs
 *   of who sent what, TLS. Its log says when it listens, drains, and why a pipeline restarted.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/sig.h"
#include "core/banned.h"

/* Bytes written per writable callback. */
#define SRV_CHUNK 65536
#define SRV_HEAD 4096

static struct srv *srv_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

int leap_serve_loopback(const char *a)
{
	return !strcmp(a, "localhost") || !strcmp(a, "::1") || !strncmp(a, "127.", 4);
}

/* ---- writing ---- */

/* Ready for the next request on a kept-alive connection. */
static void conn_reset(struct srv_conn *c)
{
	leap_buf_free(&c->body);
	leap_buf_free(&c->out);
	c->off = 0;
	c->head_sent = c->chunked = c->complete = c->over = 0;
	c->status = 0;
	c->retry_after = 0;
	c->ep = EP_NONE;
	c->path[0] = c->query[0] = c->reqid[0] = '\0';
}

static int write_head(struct srv_conn *c)
{
	unsigned char *start = c->wbuf + LWS_PRE, *p = start, *end = start + SRV_HEAD;
	if (lws_add_http_common_headers(c->wsi, (unsigned)c->status, c->ctype ? c->ctype : "text/plain",
					c->chunked ? LWS_ILLEGAL_HTTP_CONTENT_LEN : (lws_filepos_t)c->out.len, &p,
					end))
		return -1;
	if (c->chunked &&
	    lws_add_http_header_by_token(c->wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING, (const unsigned char *)"chunked", 7,
					 &p, end))
		return -1;
	if (c->retry_after) {
		char ra[32];
		int n = snprintf(ra, sizeof(ra), "%d", c->retry_after);
		if (lws_add_http_header_by_token(c->wsi, WSI_TOKEN_HTTP_RETRY_AFTER, (const unsigned char *)ra, n, &p,
						 end))
			return -1;
	}
	if (c->s->draining &&
	    lws_add_http_header_by_token(c->wsi, WSI_TOKEN_CONNECTION, (const unsigned char *)"close", 5, &p, end))
		return -1;
	if (lws_finalize_write_http_header(c->wsi, start, &p, end))
		return -1;
	c->head_sent = 1;
	return 0;
}

/* Writes what it can of the answer; returns -1 to close the connection. */
static int http_writable(struct srv_conn *c)
{
	if (!c->status)
		return 0;
	if (!c->head_sent) {
		if (write_head(c))
			return -1;
		lws_callback_on_writable(c->wsi);
		return 0;
	}
	size_t avail = c->out.len - c->off;
	if (avail) {
		size_t n = avail < SRV_CHUNK ? avail : SRV_CHUNK;
		unsigned char *b = c->wbuf + LWS_PRE;
		size_t len = 0;
		if (c->chunked)
			len = (size_t)snprintf((char *)b, 32, "%zx\r\n", n);
		memcpy(b + len, c->out.s + c->off, n);
		len += n;
		if (c->chunked) {
			memcpy(b + len, "\r\n", 2);
			len += 2;
		}
		int last = !c->chunked && c->complete && n == avail;
		if (lws_write(c->wsi, b, len, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)len)
			return -1;
		c->off += n;
		if (c->off == c->out.len) {
			leap_buf_reset(&c->out);
			c->off = 0;
		}
		if (c->out.len || c->complete) {
			lws_callback_on_writable(c->wsi);
			return 0;
		}
		return 0;
	}
	if (!c->complete)
		return 0;
	if (c->chunked) {
		unsigned char *b = c->wbuf + LWS_PRE;
		memcpy(b, "0\r\n\r\n", 5);
		if (lws_write(c->wsi, b, 5, LWS_WRITE_HTTP_FINAL) < 5)
			return -1;
	}
	conn_reset(c);
	if (c->s->draining || lws_http_transaction_completed(c->wsi))
		return -1;
	return 0;
}

static int ws_writable(struct srv_conn *c)
{
	struct srv_msg *m = c->mhead;
	if (m) {
		c->mhead = m->next;
		if (!c->mhead)
			c->mtail = NULL;
		int rc = lws_write(c->wsi, (unsigned char *)m->data + LWS_PRE, m->len, LWS_WRITE_TEXT);
		free(m);
		if (rc < 0)
			return -1;
		if (c->mhead) {
			lws_callback_on_writable(c->wsi);
			return 0;
		}
	}
	if (c->close_after && !c->mhead) {
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		return -1;
	}
	return 0;
}

/* ---- reading ---- */

/* 1 when the request carries the server's bearer token (or none is required). */
static int authorised(struct srv *s, struct lws *wsi)
{
	if (!s->o->token)
		return 1;
	char h[1024];
	int n = lws_hdr_copy(wsi, h, sizeof(h), WSI_TOKEN_HTTP_AUTHORIZATION);
	if (n <= 7 || strncasecmp(h, "Bearer ", 7))
		return 0;
	/* compare digests in constant time: neither the token's bytes nor its length leak */
	unsigned char want[SHA256_DIGEST_LENGTH], got[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)s->o->token, strlen(s->o->token), want);
	SHA256((const unsigned char *)h + 7, (size_t)n - 7, got);
	return CRYPTO_memcmp(want, got, sizeof(want)) == 0;
}

static const struct {
	const char *path;
	int post;
	int ep;
} routes[] = {
	{"/v1/evaluate", 1, EP_EVALUATE}, {"/v1/turn", 1, EP_TURN},	 {"/v1/reward", 1, EP_REWARD},
	{"/get_reward", 1, EP_REWARD},	  {"/reset", 1, EP_RESET},	 {"/step", 1, EP_STEP},
	{"/v1/prompts", 0, EP_PROMPTS},	  {"/healthz", 0, EP_GET},	 {"/metrics", 0, EP_GET},
	{"/health", 0, EP_GET},		  {"/metadata", 0, EP_GET},	 {"/schema", 0, EP_GET},
	{"/state", 0, EP_GET},
};

/* Answers the GET endpoints that need no device. */
static void answer_get(struct srv_conn *c)
{
	struct srv *s = c->s;
	if (!strcmp(c->path, "/metrics")) {
		struct leap_buf b = {0};
		srv_metrics_text(s, &b);
		srv_reply(c, 200, "text/plain; version=0.0.4", b.s ? b.s : "", b.len);
		leap_buf_free(&b);
		return;
	}
	const char *body;
	if (!strcmp(c->path, "/healthz")) {
		if (s->draining) {
			srv_reply(c, 503, "application/json", "{\"status\":\"draining\"}", 21);
			return;
		}
		body = "{\"status\":\"ok\"}";
	} else if (!strcmp(c->path, "/health")) {
		body = s->draining ? "{\"status\":\"unhealthy\"}" : "{\"status\":\"healthy\"}";
	} else if (!strcmp(c->path, "/metadata")) {
		body = "{\"name\":\"leap\",\"description\":\"GPU-kernel generation: compile, verify in a sandbox, "
		       "time against a baseline; feedback turns by leap-prune\",\"version\":\"" LEAP_VERSION
		       "\",\"documentation_url\":\"man leap-serve\"}";
	} else if (!strcmp(c->path, "/schema")) {
		body = "{\"action\":{\"type\":\"object\",\"properties\":{\"completion\":{\"type\":\"string\"},"
		       "\"code\":{\"type\":\"string\"}}},\"observation\":{\"type\":\"object\",\"properties\":{"
		       "\"record\":{\"type\":\"object\"},\"next\":{\"type\":[\"object\",\"null\"]},"
		       "\"messages\":{\"type\":[\"array\",\"null\"]},\"feedback\":{\"type\":[\"string\",\"null\"]},"
		       "\"status\":{\"type\":[\"string\",\"null\"]}}},\"state\":{\"type\":\"object\",\"properties\":{"
		       "\"episode_id\":{\"type\":[\"string\",\"null\"]},\"step_count\":{\"type\":\"integer\"}}}}";
	} else { /* /state of the stateless endpoints: there is none */
		body = "{\"episode_id\":null,\"step_count\":0}";
	}
	srv_reply(c, 200, "application/json", body, strlen(body));
}

/* A new HTTP request: route it, check it; returns -1 to close the connection. */
static int http_request(struct srv_conn *c, const char *uri)
{
	struct srv *s = c->s;
	conn_reset(c);
	int post = lws_hdr_total_length(c->wsi, WSI_TOKEN_POST_URI) > 0;
	int get = lws_hdr_total_length(c->wsi, WSI_TOKEN_GET_URI) > 0;
	snprintf(c->path, sizeof(c->path), "%s", uri);
	int n = lws_hdr_total_length(c->wsi, WSI_TOKEN_HTTP_URI_ARGS);
	if (n > 0 && (size_t)n < sizeof(c->query)) {
		/* the arguments come as fragments; join them with '&' */
		size_t off = 0;
		for (int i = 0; off + 1 < sizeof(c->query); i++) {
			char frag[256];
			int fl = lws_hdr_copy_fragment(c->wsi, frag, sizeof(frag), WSI_TOKEN_HTTP_URI_ARGS, i);
			if (fl <= 0)
				break;
			off += (size_t)snprintf(c->query + off, sizeof(c->query) - off, "%s%s", off ? "&" : "", frag);
		}
	}
	if (lws_hdr_custom_copy(c->wsi, c->reqid, sizeof(c->reqid), "x-request-id:", 13) < 0)
		c->reqid[0] = '\0';
	int found = -1;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!strcmp(routes[i].path, c->path))
			found = (int)i;
	c->ep = found >= 0 ? routes[found].ep : EP_NONE;
	if (strcmp(c->path, "/healthz") && !authorised(s, c->wsi)) {
		srv_reply_error(c, 401, "a bearer token is required (Authorization: Bearer TOKEN)");
		return 0;
	}
	if (found < 0) {
		srv_reply_error(c, 404, "no such endpoint: %s", c->path);
		return 0;
	}
	if ((routes[found].post && !post) || (!routes[found].post && !get)) {
		srv_reply_error(c, 405, "%s takes %s", c->path, routes[found].post ? "POST" : "GET");
		return 0;
	}
	if (s->draining && routes[found].post) {
		c->retry_after = 5;
		srv_reply_error(c, 503, "the server is shutting down: finishing the requests it took");
		return 0;
	}
	if (!post) {
		if (c->ep == EP_PROMPTS)
			srv_dispatch(c);
		else
			answer_get(c);
		return 0;
	}
	char cl[32];
	if (lws_hdr_copy(c->wsi, cl, sizeof(cl), WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
		int64_t v;
		if (leap_parse_i64(cl, 0, INT64_MAX, &v)) {
			srv_reply_error(c, 400, "Content-Length is not a number");
			return 0;
		}
		if ((uint64_t)v > s->o->max_request) {
			srv_reply_error(c, 413, "the request body holds %" PRId64 " bytes; this server takes at most %zu (--max-request)",
					v, s->o->max_request);
			return 0;
		}
		if (v == 0)
			srv_dispatch(c);
	} else {
		srv_reply_error(c, 411, "a POST needs a Content-Length");
	}
	return 0;
}

static void http_body(struct srv_conn *c, const void *in, size_t len)
{
	if (c->status || c->over)
		return; /* already answered (an error): the rest of the body is read and dropped */
	if (c->body.len + len > c->s->o->max_request) {
		c->over = 1;
		srv_reply_error(c, 413, "the request body passed %zu bytes (--max-request)", c->s->o->max_request);
		return;
	}
	leap_buf_add(&c->body, in, len);
}

static void conn_track(struct srv_conn *c)
{
	struct srv *s = c->s;
	for (size_t i = 0; i < s->nconns; i++)
		if (s->conns[i] == c)
			return;
	xgrow((void **)&s->conns, &s->capconns, s->nconns + 1, sizeof(*s->conns));
	s->conns[s->nconns++] = c;
}

static void conn_untrack(struct srv_conn *c)
{
	struct srv *s = c->s;
	if (!s)
		return;
	for (size_t i = 0; i < s->nconns; i++)
		if (s->conns[i] == c) {
			s->conns[i] = s->conns[--s->nconns];
			break;
		}
}

static void conn_close(struct srv_conn *c)
{
	if (!c->s)
		return;
	srv_conn_gone(c);
	conn_untrack(c);
	conn_reset(c);
	free(c->wbuf);
	c->wbuf = NULL;
	while (c->mhead) {
		struct srv_msg *m = c->mhead;
		c->mhead = m->next;
		free(m);
	}
	c->mtail = NULL;
	json_decref(c->cur);
	c->cur = NULL;
	leap_hmap_free(&c->gdev);
	leap_buf_free(&c->held);
	c->wsi = NULL;
	c->s = NULL;
}

static void conn_open(struct srv_conn *c, struct lws *wsi)
{
	if (c->s)
		return;
	memset(c, 0, sizeof(*c));
	c->s = srv_of(wsi);
	c->wsi = wsi;
	c->wbuf = xmalloc(LWS_PRE + SRV_CHUNK + 64);
	conn_track(c);
}

static int ws_receive(struct srv_conn *c, const void *in, size_t len)
{
	if (c->body.len + len > c->s->o->max_request) {
		const char *m = "{\"type\":\"error\",\"data\":{\"message\":\"message larger than --max-request\","
				"\"code\":\"VALIDATION_ERROR\"}}";
		srv_ws_send(c, m, strlen(m));
		c->close_after = 1;
		leap_buf_free(&c->body);
		return 0;
	}
	leap_buf_add(&c->body, in, len);
	if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi))
		return 0;
	struct leap_buf msg = c->body;
	c->body = (struct leap_buf){0};
	srv_ws_message(c, msg.s ? msg.s : "", msg.len);
	leap_buf_free(&msg);
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct srv_conn *c = user;
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		conn_open(c, wsi);
		return http_request(c, in);
	case LWS_CALLBACK_HTTP_BODY:
		if (c && c->s)
			http_body(c, in, len);
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (c && c->s && !c->status && !c->over)
			srv_dispatch(c);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c && c->s ? http_writable(c) : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		/* libwebsockets frees the per-session memory after either (a kept-alive connection
		 * gets fresh memory for its next request): nothing may point to it after this */
		if (c)
			conn_close(c);
		return 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		struct srv *s = srv_of(wsi);
		char uri[128];
		if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
		    (strcmp(uri, "/ws") && strcmp(uri, "/v1/stream")))
			return -1; /* OpenEnv's sessions and the record stream */
		if (!authorised(s, wsi) || s->draining || s->sessions >= s->o->max_sessions)
			return -1;
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED: {
		char uri[128] = "";
		conn_open(c, wsi);
		c->ws = 1;
		c->s->sessions++;
		if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) > 0 && !strcmp(uri, "/v1/stream")) {
			c->ep = EP_STREAM;
			srv_stream_open(c);
		} else {
			c->ep = EP_WS;
		}
		return 0;
	}
	case LWS_CALLBACK_RECEIVE:
		return c && c->s ? ws_receive(c, in, len) : 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c && c->s ? ws_writable(c) : 0;
	case LWS_CALLBACK_CLOSED:
		if (c && c->s) {
			c->s->sessions--;
			conn_close(c);
		}
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {
		struct srv *s = srv_of(wsi);
		if (s)
			srv_collect(s);
		return 0;
	}
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{"http", callback, sizeof(struct srv_conn), 65536, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- the loop ---- */

static void tick(lws_sorted_usec_list_t *sul)
{
	struct srv *s = lws_container_of(sul, struct srv, sul);
	int sig = leap_signal_caught();
	if (sig && !s->draining) {
		s->draining = 1;
		s->signal = sig;
		leap_warn("signal %d: finishing the %ld request%s in progress, taking no new ones", sig, s->nreqs,
			  s->nreqs == 1 ? "" : "s");
	}
	srv_collect(s);
	srv_check_deadlines(s, leap_now());
	lws_sul_schedule(s->ctx, 0, &s->sul, tick, 100 * LWS_US_PER_MS);
}

/* 1 once a draining server has nothing left to answer or to write. */
static int drained(struct srv *s)
{
	if (!s->draining || s->nreqs)
		return 0;
	for (size_t i = 0; i < s->nconns; i++) {
		struct srv_conn *c = s->conns[i];
		if (c->ws) {
			if (!c->close_after) {
				c->close_after = 1;
				srv_kick(c);
			}
			return 0;
		}
		if (c->status && (c->out.len > c->off || !c->head_sent || c->complete))
			return 0;
	}
	return 1;
}

static void log_emit(int level, const char *line)
{
	(void)level;
	fprintf(stderr, "%s: libwebsockets: %s", leap_prog(), line);
}

/* The environment of the children: ours, with LEAP_TASKS kept as it is. */
static char **child_env(void)
{
	extern char **environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + 1, sizeof(*env));
	for (size_t i = 0; i < n; i++)
		env[i] = xstrdup(environ[i]);
	return env;
}

static int write_url_file(const char *path, const char *url)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	int rc = -1;
	if (f) {
		rc = fprintf(f, "%s\n", url) < 0;
		rc |= fclose(f) != 0;
		if (!rc)
			rc = rename(tmp, path);
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* Resolves --listen to one numeric address (into num) and binds it once, then lets it go:
 * libwebsockets reads an iface it cannot parse as an address (a name such as localhost, or
 * "127.0.0.1:8080") as a network interface not up yet, and an address it cannot bind likewise,
 * and serves on no socket while waiting for it. A failure here is fatal, with its reason; the
 * port taken between this bind and libwebsockets' is caught by FAIL_UPON_UNABLE_TO_BIND. */
static int listen_address(const struct leap_serve_opts *o, char *num, size_t n, int *v6)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *ai;
	char port[16];
	snprintf(port, sizeof(port), "%d", o->port);
	int e = getaddrinfo(o->listen, port, &hints, &ai);
	if (e) {
		leap_warn("cannot listen on %s: %s", o->listen, e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e));
		return -1;
	}
	*v6 = ai->ai_family == AF_INET6;
	/* the name was checked as written (leap_serve_loopback); what it resolves to decides */
	int loop = ai->ai_family == AF_INET
			   ? ntohl(((const struct sockaddr_in *)(const void *)ai->ai_addr)->sin_addr.s_addr) >> 24 == 127
			   : IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)ai->ai_addr)->sin6_addr);
	if (!loop && !o->token) {
		leap_warn("--listen %s resolves to an address beyond this machine: give --token-file FILE", o->listen);
		freeaddrinfo(ai);
		return -1;
	}
	e = getnameinfo(ai->ai_addr, ai->ai_addrlen, num, (socklen_t)n, NULL, 0, NI_NUMERICHOST);
	int fd = e ? -1 : socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	int rc = e || fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		 bind(fd, ai->ai_addr, ai->ai_addrlen);
	if (rc)
		leap_warn("cannot listen on %s port %d: %s", o->listen, o->port, e ? gai_strerror(e) : strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc ? -1 : 0;
}

int leap_serve(const struct leap_serve_opts *o)
{
	char addr[NI_MAXHOST];
	int v6;
	if (listen_address(o, addr, sizeof(addr), &v6))
		return LEAP_EXIT_FATAL;
	struct srv *s = xcalloc(1, sizeof(*s));
	s->o = o;
	s->ndev = o->ndev;
	s->next_tag = 1;
	if ((errno = pthread_mutex_init(&s->mu, NULL)))
		leap_die_errno("pthread_mutex_init");
	signal(SIGPIPE, SIG_IGN);
	if (leap_signals_install())
		leap_die_errno("cannot install the signal handlers");
	s->env = child_env();
	if (srv_load_prompts(s))
		return LEAP_EXIT_FATAL;

	lws_set_log_level(LLL_ERR, log_emit);
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = o->port;
	info.iface = addr;
	info.protocols = protocols;
	info.user = s;
	info.max_http_header_data = 8192;
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND |
		       LWS_SERVER_OPTION_DISABLE_IPV6 * !v6;
	info.ka_time = 60;
	info.ka_probes = 3;
	info.ka_interval = 10;
	s->ctx = lws_create_context(&info);
	if (!s->ctx) {
		leap_warn("cannot listen on %s port %d", o->listen, o->port);
		return LEAP_EXIT_FATAL;
	}
	struct lws_vhost *vh = lws_get_vhost_by_name(s->ctx, "default");
	int port = vh ? lws_get_vhost_listen_port(vh) : o->port;
	char *url = v6 ? xasprintf("http://[%s]:%d", addr, port) : xasprintf("http://%s:%d", addr, port);
	srv_engine_start(s);
	if (o->url_file && write_url_file(o->url_file, url))
		leap_die_errno("cannot write %s", o->url_file);
	leap_warn("listening on %s (%d device%s%s)", url, s->ndev, s->ndev == 1 ? "" : "s",
		  o->token ? ", bearer token required" : "");
	free(url);
	lws_sul_schedule(s->ctx, 0, &s->sul, tick, 100 * LWS_US_PER_MS);
	while (!drained(s))
		if (lws_service(s->ctx, 0) < 0)
			break;
	srv_engine_stop(s, 0);
	srv_collect(s);
	lws_context_destroy(s->ctx);
	s->ctx = NULL;
	int sig = s->signal;
	srv_free_state(s);
	leap_strv_free(s->env);
	free(s->conns);
	pthread_mutex_destroy(&s->mu);
	free(s);
	if (sig)
		leap_signal_exit(sig);
	return LEAP_EXIT_OK;
}
