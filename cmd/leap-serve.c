/* leap-serve - leap's filters as a service: HTTP and WebSocket for trainers on other machines. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "backend/devices.h"
#include "serve/serve.h"
#include "core/util.h"
#include "core/banned.h"

static const char usage_head[] =
	"usage: leap-serve [OPTION]...\n"
	"\n"
	"Serve leap's filters over HTTP and WebSocket: every record goes through the real\n"
	"leap-compile | leap-verify | leap-bench of one device, kept running, and a turn's\n"
	"decision and feedback come from leap-prune. Endpoints: POST /v1/evaluate and /v1/turn\n"
	"(JSON Lines in, each record written back as soon as it is answered), WebSocket\n"
	"/v1/stream (records in and out as they come), OpenEnv's POST /reset and /step and\n"
	"WebSocket /ws, OpenRLHF's remote reward POST /v1/reward, GET\n"
	"/v1/prompts (turn-1 records made on this machine), /healthz and /metrics (Prometheus).\n"
	"Binds 127.0.0.1 unless told otherwise; elsewhere a bearer token is required.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 after a clean stop; killed by the signal that drained it (a shell sees\n"
	"130 or 143); 2 usage or fatal error (it could not listen, or find leap's programs).\n";

enum {
	OPT_LISTEN = LEAP_OPT_PRIVATE,
	OPT_URL_FILE,
	OPT_TOKEN_FILE,
	OPT_NO_BENCH,
	OPT_INFLIGHT,
	OPT_MAX_REQUEST,
	OPT_MAX_LINE,
	OPT_MAX_SESSIONS,
	OPT_MAX_TURNS,
	OPT_RETRY_KEEP,
	OPT_RETRY_TTL,
};

/* The options of leap-serve, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"listen", 0, required_argument, "ADDR", OPT_LISTEN,
	 "the address to bind: HOST, HOST:PORT, [IPV6] or [IPV6]:PORT\n(default 127.0.0.1; "
	 "any other needs --token-file)"},
	{"port", 'p', required_argument, "N", 0, "the TCP port (default 8750; 0: a free one, see --url-file)"},
	{"url-file", 0, required_argument, "FILE", OPT_URL_FILE,
	 "write the server's URL to FILE once it listens"},
	{"token-file", 0, required_argument, "FILE", OPT_TOKEN_FILE,
	 "require \"Authorization: Bearer TOKEN\", TOKEN the first line of\nFILE (never on the command line)"},
	{"devices", 'd', required_argument, "LIST", 0,
	 "one pipeline per listed device (default 0; e.g. 0-7): its\nleap-verify and leap-bench get --device N"},
	{"backend", 'b', required_argument, "NAME", 0,
	 "backend of records that name none, and of the prompts: cuda or\ncpu (default: cuda where a device is usable)"},
	{"jobs", 'j', required_argument, "N", 0, "-j of each pipeline's leap-compile and leap-verify"},
	{"no-bench", 0, no_argument, NULL, OPT_NO_BENCH, "leave leap-bench out (correctness only, no timing)"},
	{"queue", 'q', required_argument, "N", 0,
	 "records one device holds, queued and in its pipeline (default\n256): past it requests get 429 and Retry-After"},
	{"inflight", 0, required_argument, "N", OPT_INFLIGHT,
	 "records inside one pipeline at once (default 32)"},
	{"deadline", 't', required_argument, "SECS", 0,
	 "longest a request may take (default 600; ?timeout=SECS asks for\nless)"},
	{"max-request", 0, required_argument, "SIZE", OPT_MAX_REQUEST,
	 "largest request body or WebSocket message (default 64M)"},
	{"max-line", 0, required_argument, "SIZE", OPT_MAX_LINE, "largest record (default 4M)"},
	{"max-sessions", 0, required_argument, "N", OPT_MAX_SESSIONS,
	 "WebSocket sessions open at once (default 1024)"},
	{"max-turns", 0, required_argument, "N", OPT_MAX_TURNS,
	 "turns of an OpenEnv trajectory (leap-prune --max-turns; default 3)"},
	{"retry-keep", 0, required_argument, "N", OPT_RETRY_KEEP,
	 "reward answers kept for retried requests (default 4096)"},
	{"retry-ttl", 0, required_argument, "SECS", OPT_RETRY_TTL,
	 "how long they are kept (default 1800)"},
	LEAP_OPTS_TASKS,
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

/* The token: the first line of `path`, without its line ending. */
static char *read_token(const struct leap_common *c, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		leap_die_errno("--token-file %s", path);
	char buf[4096];
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		leap_usage_error(c, "--token-file %s: the file is empty", path);
	}
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) < 16)
		leap_usage_error(c, "--token-file %s: the token has fewer than 16 characters", path);
	return xstrdup(buf);
}

static long count_option(const struct leap_common *c, const char *name, const char *arg, long lo, long hi)
{
	int64_t v;
	if (leap_parse_i64(arg, lo, hi, &v))
		leap_usage_error(c, "--%s: '%s' is not a number from %ld to %ld", name, arg, lo, hi);
	return (long)v;
}

/* --listen ADDR: HOST, HOST:PORT, [V6], [V6]:PORT, or a bare IPv6 address (no port: in
 * "::1:8080" the port cannot be told from the address). Returns the host, allocated; *port is
 * the port it names, -1 for none. What the host resolves to is leap_serve's to find. */
static char *listen_option(const struct leap_common *c, const char *arg, long *port)
{
	const char *host = arg, *end, *colon;
	*port = -1;
	if (arg[0] == '[') {
		host = arg + 1;
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':'))
			leap_usage_error(c, "--listen: '%s' is not [IPV6] or [IPV6]:PORT", arg);
		colon = end[1] ? end + 1 : NULL;
	} else {
		colon = strchr(arg, ':');
		if (colon && strchr(colon + 1, ':')) {
			unsigned char a[16];
			if (inet_pton(AF_INET6, arg, a) != 1)
				leap_usage_error(c, "--listen: '%s' is neither HOST:PORT nor an IPv6 address ([IPV6]:PORT "
						    "takes a port)", arg);
			colon = NULL;
		}
		end = colon ? colon : arg + strlen(arg);
	}
	if (end == host)
		leap_usage_error(c, "--listen: '%s' names no host", arg);
	if (colon) {
		int64_t v;
		if (leap_parse_i64(colon + 1, 0, 65535, &v))
			leap_usage_error(c, "--listen: '%s': the port '%s' is not a number from 0 to 65535", arg, colon + 1);
		*port = (long)v;
	}
	return xstrndup(host, (size_t)(end - host));
}

static size_t size_option(const struct leap_common *c, const char *name, const char *arg)
{
	int64_t v;
	if (leap_parse_size(arg, &v) || v < 1024)
		leap_usage_error(c, "--%s: '%s' is not a size of at least 1K", name, arg);
	return (size_t)v;
}

int main(int argc, char **argv)
{
	struct leap_common c;
	leap_common_init(&c, &usage);
	struct leap_serve_opts o = {
		.listen = "127.0.0.1",
		.port = 8750,
		.bench = 1,
		.queue = 256,
		.inflight = 32,
		.deadline = 600,
		.max_request = (size_t)64 << 20,
		.max_line = (size_t)4 << 20,
		.max_sessions = 1024,
		.max_turns = 3,
		.idem_entries = 4096,
		.idem_ttl = 1800,
	};
	const char *devices = "0", *token_file = NULL, *listen = NULL;
	int opt, port_given = 0;
	while ((opt = leap_common_getopt(&c, argc, argv)) != -1) {
		if (leap_common_option(&c, opt, optarg))
			continue;
		switch (opt) {
		case OPT_LISTEN:
			listen = optarg;
			break;
		case 'p':
			o.port = (int)count_option(&c, "port", optarg, 0, 65535);
			port_given = 1;
			break;
		case OPT_URL_FILE:
			o.url_file = optarg;
			break;
		case OPT_TOKEN_FILE:
			token_file = optarg;
			break;
		case 'd':
			devices = optarg;
			break;
		case 'b':
			if (!leap_backend_find(optarg))
				leap_usage_error(&c, "--backend: '%s' is neither cuda nor cpu", optarg);
			o.backend = optarg;
			break;
		case 'j':
			o.jobs = (int)count_option(&c, "jobs", optarg, 1, 4096);
			break;
		case OPT_NO_BENCH:
			o.bench = 0;
			break;
		case 'q':
			o.queue = count_option(&c, "queue", optarg, 1, 1L << 24);
			break;
		case OPT_INFLIGHT:
			o.inflight = count_option(&c, "inflight", optarg, 1, 1L << 20);
			break;
		case 't':
			if (leap_parse_seconds(optarg, &o.deadline) || o.deadline <= 0)
				leap_usage_error(&c, "--deadline: '%s' is not a number of seconds > 0", optarg);
			break;
		case OPT_MAX_REQUEST:
			o.max_request = size_option(&c, "max-request", optarg);
			break;
		case OPT_MAX_LINE:
			o.max_line = size_option(&c, "max-line", optarg);
			break;
		case OPT_MAX_SESSIONS:
			o.max_sessions = (int)count_option(&c, "max-sessions", optarg, 1, 1 << 20);
			break;
		case OPT_MAX_TURNS:
			o.max_turns = (int)count_option(&c, "max-turns", optarg, 1, 1000);
			break;
		case OPT_RETRY_KEEP:
			o.idem_entries = count_option(&c, "retry-keep", optarg, 0, 1L << 24);
			break;
		case OPT_RETRY_TTL:
			if (leap_parse_seconds(optarg, &o.idem_ttl))
				leap_usage_error(&c, "--retry-ttl: '%s' is not a number of seconds", optarg);
			break;
		default:
			leap_usage_error(&c, "unhandled option");
		}
	}
	if (optind < argc)
		leap_usage_error(&c, "no arguments are taken (got '%s')", argv[optind]);
	char *host = NULL;
	if (listen) {
		long lport;
		o.listen = host = listen_option(&c, listen, &lport);
		if (lport >= 0 && port_given && lport != o.port)
			leap_usage_error(&c, "--listen %s names port %ld, --port %d: give the port once", listen, lport,
					 o.port);
		if (lport >= 0)
			o.port = (int)lport;
	}
	if (!leap_serve_loopback(o.listen) && !token_file)
		leap_usage_error(&c, "--listen %s reaches beyond this machine: give --token-file FILE (a bearer token "
				     "every request must carry)", o.listen);
	if (token_file)
		o.token = read_token(&c, token_file);
	if (o.max_line > o.max_request)
		o.max_line = o.max_request;
	struct leap_devices d;
	char *err = NULL;
	if (leap_devices_parse(devices, &d, &err))
		leap_usage_error(&c, "--devices: %s", err);
	o.ndev = d.n;
	o.dev = d.name;
	if (c.tasks && setenv("LEAP_TASKS", c.tasks, 1))
		leap_die_errno("setenv");
	o.bindir = leap_exe_dir();
	if (!o.bindir)
		leap_die("cannot find the directory of leap-serve (leap's programs are beside it)");
	int rc = leap_serve(&o);
	leap_devices_free(&d);
	free(o.bindir);
	free(o.token);
	free(host);
	return rc;
}
