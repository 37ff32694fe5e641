/* serve.h - leap-serve: leap's filters behind HTTP and WebSocket, for trainers on other machines. */
#ifndef LEAP_SERVE_H
#define LEAP_SERVE_H

#include <stddef.h>

/* What leap-serve is started with (cmd/leap-serve.c fills it from the option table). */
struct leap_serve_opts {
	const char *listen;      /* the address to bind (default 127.0.0.1) */
	int port;                /* the TCP port; 0: a free one (written to url_file) */
	const char *url_file;    /* where the URL goes once the server listens, or NULL */
	char *token;             /* the bearer token read from --token-file, or NULL */
	int ndev;                /* the devices, one pipeline each */
	char **dev;              /* their names as leap-verify's --device takes them */
	const char *backend;     /* leap-compile's and leap-prompt's --backend, or NULL */
	int jobs;                /* -j of leap-compile and leap-verify (0: theirs) */
	int bench;               /* 0: no leap-bench in the pipeline */
	long queue;              /* records one device may hold, queued and in its pipeline */
	long inflight;           /* of which at most this many inside the pipeline at once */
	double deadline;         /* seconds a request may take (a request may ask for less) */
	size_t max_request;      /* bytes of one request body or WebSocket message */
	size_t max_line;         /* bytes of one record */
	int max_sessions;        /* concurrent OpenEnv WebSocket sessions */
	int max_turns;           /* turns of an OpenEnv session (leap-prune --max-turns) */
	long idem_entries;       /* answers of reward requests kept for retries */
	double idem_ttl;         /* seconds they are kept */
	char *bindir;            /* where leap's programs are (beside leap-serve) */
};

/* Runs the server until SIGINT, SIGTERM or SIGHUP has drained it. Returns an exit status
 * (LEAP_EXIT_FATAL when it could not start); after a signal it ends the process by that
 * signal (leap_signal_exit), as every leap program does. */
int leap_serve(const struct leap_serve_opts *o);

/* 1 when `addr` is a loopback address (127.0.0.0/8, ::1, localhost): a server bound there
 * is reachable from this machine only and needs no token. */
int leap_serve_loopback(const char *addr);

#endif
