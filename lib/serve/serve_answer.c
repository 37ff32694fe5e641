/* serve_answer.c - leap-serve's answers: what an endpoint writes on a connection, and its query. */
/*
 * The endpoints (serve_api.c, serve_openenv.c, serve_reward.c) answer through these few
 * calls and never touch libwebsockets: each fills the connection's answer (a whole body, a
 * stream of lines, a WebSocket message) and asks the event loop for a writable callback;
 * serve_http.c's callbacks write what is there. They sit below both sides, so that the
 * network side calls the endpoints and the endpoints answer without calling back up into it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "serve_int.h"
#include "core/banned.h"

void srv_kick(struct srv_conn *c)
{
	if (c->wsi)
		lws_callback_on_writable(c->wsi);
}

void srv_reply(struct srv_conn *c, int status, const char *ctype, const char *body, size_t len)
{
	c->status = status;
	c->ctype = ctype;
	c->chunked = 0;
	leap_buf_reset(&c->out);
	c->off = 0;
	leap_buf_add(&c->out, body, len);
	c->complete = 1;
	srv_kick(c);
}

void srv_reply_error(struct srv_conn *c, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* OpenEnv's endpoints answer errors as FastAPI does; the others as leap does */
	int openenv = c->ep == EP_RESET || c->ep == EP_STEP;
	json_t *j = openenv ? json_pack("{s:s}", "detail", msg)
			    : json_pack("{s:{s:i,s:s}}", "error", "status", status, "message", msg);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (!text)
		leap_die("out of memory");
	srv_reply(c, status, "application/json", text, strlen(text));
	free(text);
	json_decref(j);
	free(msg);
}

void srv_stream_begin(struct srv_conn *c, const char *ctype)
{
	c->status = 200;
	c->ctype = ctype;
	c->chunked = 1;
	c->complete = 0;
	srv_kick(c);
}

void srv_stream_line(struct srv_conn *c, const char *line, size_t len)
{
	leap_buf_add(&c->out, line, len);
	leap_buf_add(&c->out, "\n", 1);
	srv_kick(c);
}

void srv_stream_bytes(struct srv_conn *c, const char *data, size_t len)
{
	if (!len)
		return;
	leap_buf_add(&c->out, data, len);
	srv_kick(c);
}

void srv_stream_end(struct srv_conn *c)
{
	c->complete = 1;
	srv_kick(c);
}

void srv_ws_send(struct srv_conn *c, const char *data, size_t len)
{
	struct srv_msg *m = xmalloc(sizeof(*m) + LWS_PRE + len);
	m->next = NULL;
	m->len = len;
	memcpy(m->data + LWS_PRE, data, len);
	if (c->mtail)
		c->mtail->next = m;
	else
		c->mhead = m;
	c->mtail = m;
	srv_kick(c);
}

int srv_query(const struct srv_conn *c, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name);
	for (const char *p = c->query; *p;) {
		const char *amp = strchr(p, '&');
		size_t plen = amp ? (size_t)(amp - p) : strlen(p);
		if (plen > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			size_t vl = plen - nl - 1;
			if (vl >= len)
				return -1;
			memcpy(buf, p + nl + 1, vl);
			buf[vl] = '\0';
			return 0;
		}
		p += plen + (amp != NULL);
	}
	return -1;
}
