/* leap-compile - extract each completion's code and build it into an artifact, or into diagnostics, through a shared cache. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compile/cache.h"
#include "core/cli.h"
#include "compile/compile.h"
#include "compile/cqueue.h"
#include "compile/extract.h"
#include "referee/hand.h"
#include "core/jsonl.h"
#include "task/task.h"
#include "task/unseen.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-compile [OPTION]... [FILE]...\n"
	"   or: leap-compile [OPTION]... --task TASK SOURCE...\n"
	"\n"
	"Read records with `task` and `completion` (or `code`), extract the code, compile it into\n"
	"a shared object for the record's backend (cc for cpu, nvcc for cuda) and add `code`,\n"
	"`backend` and `compile` = {status, reason, message, ms, cached, hash, artifact,\n"
	"diagnostics, log}. A record without code gets status no_code, one that does not compile\n"
	"compile_error. Results are cached by a SHA-256 of everything that affects the build.\n"
	"With --task, compile the SOURCE files ('-': standard input) as candidates of TASK.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 every record processed (compile errors are verdicts, not failures), 1 some\n"
	"record carried an error (or, with --task, some source did not compile), 2 usage or\n"
	"fatal error.\n";

enum {
	OPT_ARCH = LEAP_OPT_PRIVATE,
	OPT_NVCC,
	OPT_CC,
	OPT_NVCC_FLAG,
	OPT_CC_FLAG,
	OPT_CACHE,
	OPT_CACHE_SIZE,
	OPT_NO_CACHE,
	OPT_TIMEOUT,
	OPT_MEMORY,
	OPT_MAX_LOG,
	OPT_BATCH,
};

/* One input record on its way to the output, in input order. */
struct slot {
	struct leap_cqueue_slot cq; /* first: the engine hands it back to emit */
	json_t *rec;            /* the record (or the error record to write as it is) */
	char *raw;              /* its raw text, for splicing; NULL: write rec re-serialised */
	size_t rawlen;
	char *msg;              /* LEAP_CQUEUE_NO_CODE: why */
	char *code;             /* extracted code to add (NULL when given) */
	char *label;            /* name for --human */
	int set_backend;        /* add `backend` */
	enum leap_backend backend;
};

struct ctx {
	struct leap_common common;
	struct leap_suite suite;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_cache cache;
	char *cache_root;             /* the cache directory: its locks/ hold the timing lock (tlock.h) */
	struct leap_compiler comp;
	int ending; /* under the engine's lock: main is freeing the compiler; a late signal does nothing */
	enum leap_backend backend;
	const char *backend_opt; /* --backend as given */
	char backend_said[256]; /* how the default backend was chosen; "" once said */
	int jobs, human, file_mode;
	int batch;        /* --batch K */
	size_t max_log;
	const char *task; /* --task */

	struct leap_cq q;  /* the engine: window, workers, writer */

	/* counters (writer thread) */
	long done, errors, compiled, cached, failed, no_code;
	long open_failed; /* input files that could not be opened (reader thread) */
};

/* Replaces NUL bytes (which C strings cannot carry) by spaces. */
static char *no_nul(const json_t *s)
{
	size_t n = json_string_length(s);
	char *p = xstrndup(json_string_value(s), n);
	const char *v = json_string_value(s);
	for (size_t i = 0; i < n; i++)
		p[i] = v[i] ? v[i] : ' ';
	p[n] = '\0';
	return p;
}

static void slot_error(struct slot *s, const char *where, long line, char *msg)
{
	if (line > 0)
		leap_warn("%s:%ld: %s", where, line, msg);
	else
		leap_warn("%s: %s", where, msg);
	leap_record_set_error(s->rec, line > 0 ? where : NULL, line, "%s", msg);
	s->cq.state = LEAP_CQUEUE_ERROR;
	free(msg);
}

/* Works out what to do with a parsed record: error, no code, cached result, or a job. */
static void prepare(struct ctx *c, struct slot *s, const char *where, long line)
{
	json_t *rec = s->rec;
	if (json_object_get(rec, "error")) { /* e.g. the sampler's: its cause stays in front */
		s->cq.state = LEAP_CQUEUE_CARRIED;
		return;
	}
	const char *id = leap_get_str(rec, "task", NULL);
	if (!id) {
		slot_error(s, where, line, xstrdup("the record has no 'task' string"));
		return;
	}
	char *err = NULL;
	const struct leap_task *t = leap_suite_get(&c->suite, id, &err);
	if (!t) {
		slot_error(s, where, line, err);
		return;
	}
	json_t *bj = json_object_get(rec, "backend");
	s->backend = c->backend;
	if (bj && (!json_is_string(bj) || leap_backend_parse(json_string_value(bj), &s->backend))) {
		slot_error(s, where, line, xstrdup("field 'backend' must be \"cuda\" or \"cpu\""));
		return;
	}
	s->set_backend = bj == NULL;
	if (!bj && c->backend_said[0]) {
		leap_warn("%s", c->backend_said);
		c->backend_said[0] = '\0';
	}
	json_t *comp = json_object_get(rec, "completion"), *code = json_object_get(rec, "code");
	char *src = NULL;
	if (json_is_string(comp)) {
		char *text = no_nul(comp);
		struct leap_extract x;
		leap_extract(text, strlen(text), t->entry, &x);
		free(text);
		if (!x.code) {
			s->cq.state = LEAP_CQUEUE_NO_CODE;
			s->msg = x.message;
			x.message = NULL;
			leap_extract_free(&x);
			return;
		}
		src = x.code;
		x.code = NULL;
		leap_extract_free(&x);
		s->code = xstrdup(src);
	} else if (json_is_string(code)) {
		src = no_nul(code);
		size_t k = 0;
		while (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r')
			k++;
		if (!src[k]) {
			s->cq.state = LEAP_CQUEUE_NO_CODE;
			s->msg = xasprintf("the code is empty: write the complete source file that defines %s()", t->entry);
			free(src);
			return;
		}
	} else {
		slot_error(s, where, line, xstrdup("the record has no 'completion' or 'code' string"));
		return;
	}
	struct leap_variant *v = leap_compiler_variant(&c->comp, t, s->backend, &err);
	if (!v) {
		slot_error(s, where, line, err);
		free(src);
		return;
	}
	char key[65];
	leap_compile_key(&c->comp, v, src, key);

	leap_cqueue_submit(&c->q, &s->cq, v, src, key);
}

/* The output's reader has gone (EPIPE): stop the compilers, remove the work directory and end
 * at once with status 0. exit() would run libcrypto's exit handlers under the worker threads,
 * which then fail to hash and die with status 2. Never returns. */
static void reader_gone(void *arg)
{
	struct ctx *c = arg;
	leap_compiler_abort(&c->comp);
	_exit(LEAP_EXIT_OK);
}

/* Prints the readable verdict of one record (--human). */
static void print_human(struct ctx *c, const struct slot *s, const struct leap_cresult *r)
{
	struct leap_buf b = {0};
	const char *label = s->label ? s->label : "record";
	if (s->cq.state == LEAP_CQUEUE_BAD || s->cq.state == LEAP_CQUEUE_ERROR || s->cq.state == LEAP_CQUEUE_CARRIED) {
		const char *m = leap_get_str(json_object_get(s->rec, "error"), "message", "error");
		leap_buf_addf(&b, "%s: error: %s\n", label, m);
	} else if (s->cq.state == LEAP_CQUEUE_NO_CODE) {
		leap_buf_addf(&b, "%s: no code: %s\n", label, s->msg);
	} else {
		leap_cresult_human(&b, label, s->label && c->file_mode ? s->label : NULL,
				   leap_get_str(s->rec, "task", "?"), s->backend, r);
	}
	leap_out_raw(&c->out, b.s, b.len ? b.len - 1 : 0);
	leap_buf_free(&b);
}

static void free_slot(struct slot *s)
{
	json_decref(s->rec);
	free(s->raw);
	free(s->msg);
	free(s->code);
	free(s->label);
	leap_cresult_free(&s->cq.res);
	free(s);
}

/* Writes the output of one finished slot and frees it (the engine's emit). */
static void emit(void *arg, struct leap_cqueue_slot *cs)
{
	struct ctx *c = arg;
	struct slot *s = (struct slot *)cs;
	const struct leap_cresult *r = s->cq.state == LEAP_CQUEUE_RESULT ? &s->cq.res : NULL;
	json_t *add = json_object();
	int remove_status = 0;
	if (s->cq.state == LEAP_CQUEUE_CARRIED) {
		/* counted by the stage that set it */
	} else if (s->cq.state == LEAP_CQUEUE_BAD) {
		c->errors++;
	} else if (s->cq.state == LEAP_CQUEUE_ERROR) {
		c->errors++;
	} else if (s->cq.state == LEAP_CQUEUE_NO_CODE) {
		c->no_code++;
		if (s->set_backend)
			json_object_set_new(add, "backend", json_string(leap_backend_name(s->backend)));
		json_object_set_new(add, "compile", json_pack("{s:s,s:s,s:f,s:b,s:[],s:s}", "status", "no_code",
							      "message", s->msg, "ms", 0.0, "cached", 0, "diagnostics",
							      "log", ""));
		json_object_set_new(add, "status", json_string("no_code"));
	} else if (r) {
		if (s->code)
			json_object_set_new(add, "code", json_string(s->code));
		if (s->set_backend)
			json_object_set_new(add, "backend", json_string(leap_backend_name(s->backend)));
		json_object_set_new(add, "compile", leap_cresult_json(r, c->max_log));
		if (r->cached)
			c->cached++;
		else if (r->status != LEAP_C_INTERNAL)
			c->compiled++;
		if (r->status == LEAP_C_OK) {
			const char *st = leap_get_str(s->rec, "status", NULL);
			remove_status = st && (!strcmp(st, "no_code") || !strcmp(st, "compile_error"));
		} else if (r->status == LEAP_C_INTERNAL) {
			leap_warn("%s: %s", s->label ? s->label : "record", r->message);
			leap_record_set_error(s->rec, NULL, 0, "%s", r->message);
			s->cq.state = LEAP_CQUEUE_ERROR;
			c->errors++;
		} else {
			c->failed++;
			json_object_set_new(add, "status", json_string("compile_error"));
		}
	}
	if (c->human) {
		print_human(c, s, &s->cq.res);
	} else if (s->cq.state == LEAP_CQUEUE_CARRIED) {
		leap_out_raw(&c->out, s->raw, s->rawlen);
	} else if (s->cq.state == LEAP_CQUEUE_BAD) {
		leap_out_write(&c->out, s->rec);
	} else if (remove_status || s->cq.state == LEAP_CQUEUE_ERROR || !s->raw) {
		if (remove_status)
			json_object_del(s->rec, "status");
		json_object_update(s->rec, add);
		leap_out_write(&c->out, s->rec);
	} else {
		leap_out_splice(&c->out, s->raw, s->rawlen, s->rec, add);
	}
	json_decref(add);
	c->done++;
	leap_progress_set(&c->progress, "compiled", c->compiled);
	leap_progress_set(&c->progress, "cached", c->cached);
	leap_progress_set(&c->progress, "compile errors", c->failed);
	leap_progress_set(&c->progress, "without code", c->no_code);
	leap_progress_update(&c->progress, c->done, c->errors);
	free_slot(s);
}

/* Reads SOURCE files as candidates of --task ('-': standard input); the backend is
 * --backend, else the file's extension. */
static void read_sources(struct ctx *c, int n, char **files)
{
	for (int i = 0; i < n; i++) {
		struct slot *s = xcalloc(1, sizeof(*s));
		s->label = xstrdup(files[i]);
		s->rec = json_object();
		json_object_set_new(s->rec, "task", json_string(c->task));
		char *err = NULL, *code = NULL;
		enum leap_backend b;
		/* read first: a directory or a missing file is an unreadable input (exit 2)
		 * whatever its name says */
		code = leap_source_read(files[i], &err);
		int unknown = code && leap_source_backend(files[i], c->backend_opt, &b, &err) != 0;
		if (unknown) {
			free(code);
			code = NULL;
		}
		if (!code) {
			leap_warn("%s", err);
			leap_record_set_error(s->rec, files[i], 0, "%s", err);
			free(err);
			s->cq.state = LEAP_CQUEUE_ERROR;
			if (!unknown)
				c->open_failed++; /* an unreadable input: exit 2 */
		} else {
			json_object_set_new(s->rec, "backend", json_string(leap_backend_name(b)));
			json_object_set_new(s->rec, "code", json_string(code));
			free(code);
			prepare(c, s, files[i], 0);
		}
		leap_cqueue_push(&c->q, &s->cq);
	}
}

static void read_records(struct ctx *c, int n, char **files)
{
	struct leap_in in;
	leap_in_init(&in, n, files, NULL);
	json_t *rec;
	enum leap_read r;
	while ((r = leap_in_next(&in, &rec)) != LEAP_READ_EOF) {
		struct slot *s = xcalloc(1, sizeof(*s));
		s->rec = rec;
		s->label = xasprintf("%s:%ld", in.name, in.line);
		if (r == LEAP_READ_BAD) {
			s->cq.state = LEAP_CQUEUE_BAD;
		} else {
			s->raw = xstrndup(in.buf, in.len);
			s->rawlen = in.len;
			prepare(c, s, in.name, in.line);
		}
		leap_cqueue_push(&c->q, &s->cq);
	}
	c->open_failed = in.open_failed; /* reported by the reader; added to errors at the end */
	leap_in_close(&in);
}

static int cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* The signals that end leap-compile with its temporary files removed. */
static sigset_t term_signals(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGHUP);
	return s;
}

/* The signal thread: waits for SIGTERM, SIGINT or SIGHUP (blocked in every other thread),
 * removes the work directory, then dies of that signal (the exit status a shell expects).
 * Running compilers die with us (PR_SET_PDEATHSIG); stale cache temporaries are evicted
 * later. Never returns while the process lives. */
static void *on_signal(void *arg)
{
	struct ctx *c = arg;
	sigset_t s = term_signals();
	int sig;
	if (sigwait(&s, &sig))
		return NULL;
	leap_cqueue_lock(&c->q);
	if (c->ending) { /* main's wake-up call, or a signal as the work ended anyway */
		leap_cqueue_unlock(&c->q);
		return NULL;
	}
	leap_compiler_abort(&c->comp); /* under the lock: main cannot free it meanwhile */
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* The options of leap-compile, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"backend", 'b', required_argument, "NAME", 0,
	 "backend of records that name none: cuda or cpu (default: cuda\n"
	 "where a CUDA device is usable, else cpu; said on stderr); with\n"
	 "--task, of every SOURCE (default: from its extension, .c cpu,\n"
	 ".cu cuda)"},
	{"jobs", 'j', required_argument, "N", 0, "compilers running at once (default: the number of CPUs)"},
	{"task", 't', required_argument, "TASK", 0,
	 "the arguments are source files of TASK, not record files"},
	{"human", 'H', no_argument, NULL, 0, "print a readable verdict per record instead of JSON Lines"},
	{"arch", 0, required_argument, "ARCH", OPT_ARCH,
	 "nvcc architecture (default: CUDA device 0's exact one, sm_90a\n"
	 "on H100/H200; without a visible GPU sm_90)"},
	{"nvcc", 0, required_argument, "PATH", OPT_NVCC,
	 "the CUDA compiler (default: $CUDA_HOME/bin/nvcc, else nvcc)"},
	{"cc", 0, required_argument, "PATH", OPT_CC, "the C compiler (default: $CC, else cc)"},
	{"nvcc-flag", 0, required_argument, "OPT", OPT_NVCC_FLAG, "pass OPT to nvcc (repeatable)"},
	{"cc-flag", 0, required_argument, "OPT", OPT_CC_FLAG, "pass OPT to cc (repeatable)"},
	{"cache", 0, required_argument, "DIR", OPT_CACHE,
	 "the cache (default: $LEAP_CACHE, else $XDG_CACHE_HOME/leap,\n"
	 "else ~/.cache/leap)"},
	{"cache-size", 0, required_argument, "SIZE", OPT_CACHE_SIZE,
	 "evict least recently used results above SIZE (default 5G)"},
	{"no-cache", 0, no_argument, NULL, OPT_NO_CACHE,
	 "run the compiler for every record (results are still stored)"},
	{"timeout", 0, required_argument, "SECONDS", OPT_TIMEOUT,
	 "wall-clock limit of one compiler run (default 120)"},
	{"memory", 0, required_argument, "SIZE", OPT_MEMORY,
	 "address-space limit of each compiler process (default 8G)"},
	{"max-log", 0, required_argument, "BYTES", OPT_MAX_LOG,
	 "bytes of compiler output kept in `log` (default 4096)"},
	{"batch", 0, required_argument, "K", OPT_BATCH,
	 "compile up to K cuda candidates of a task in one nvcc run\n"
	 "(default 1: each alone; see the man page)"},
	LEAP_OPTS_TASKS,
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

/* Parses the options into c and o (exits 2 on a usage error). Returns optind. */
static int parse_options(struct ctx *c, struct leap_compile_opts *o, int argc, char **argv, int64_t *cache_size,
			 const char **cache_opt)
{
	size_t nvcc_cap = 0, cc_cap = 0;
	int opt;
	while ((opt = leap_common_getopt(&c->common, argc, argv)) != -1) {
		if (leap_common_option(&c->common, opt, optarg))
			continue;
		int64_t v;
		switch (opt) {
		case 'b':
			if (leap_backend_parse(optarg, &c->backend))
				leap_usage_error(&c->common, "--backend: '%s' is not cuda or cpu", optarg);
			c->backend_opt = optarg;
			break;
		case 'j':
			if (leap_parse_int(optarg, 1, 1024, &c->jobs))
				leap_usage_error(&c->common, "--jobs: '%s' is not a number from 1 to 1024", optarg);
			break;
		case 't':
			c->task = optarg;
			break;
		case 'H':
			c->human = 1;
			break;
		case OPT_ARCH:
			for (const char *p = optarg; *p; p++)
				if (!(*p == '_' || *p == ',' || *p == '-' || *p == '.' || (*p >= '0' && *p <= '9') ||
				      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
					leap_usage_error(&c->common, "--arch: '%s' is not an architecture name", optarg);
			if (!*optarg)
				leap_usage_error(&c->common, "--arch: empty");
			o->arch = optarg;
			break;
		case OPT_NVCC:
			o->nvcc = optarg;
			break;
		case OPT_CC:
			o->cc = optarg;
			break;
		case OPT_NVCC_FLAG:
			xgrow((void **)&o->nvcc_flags, &nvcc_cap, o->n_nvcc_flags + 1, sizeof(char *));
			o->nvcc_flags[o->n_nvcc_flags++] = optarg;
			break;
		case OPT_CC_FLAG:
			xgrow((void **)&o->cc_flags, &cc_cap, o->n_cc_flags + 1, sizeof(char *));
			o->cc_flags[o->n_cc_flags++] = optarg;
			break;
		case OPT_CACHE:
			*cache_opt = optarg;
			break;
		case OPT_CACHE_SIZE:
			if (leap_parse_size(optarg, cache_size))
				leap_usage_error(&c->common, "--cache-size: '%s' is not a size (e.g. 512M, 5G)", optarg);
			break;
		case OPT_NO_CACHE:
			o->reuse = 0;
			break;
		case OPT_TIMEOUT:
			if (leap_parse_seconds(optarg, &o->timeout) || o->timeout > 86400)
				leap_usage_error(&c->common, "--timeout: '%s' is not a duration (e.g. 120, 30s, 2m)", optarg);
			break;
		case OPT_MEMORY:
			if (leap_parse_size(optarg, &v) || v < (64LL << 20))
				leap_usage_error(&c->common, "--memory: '%s' is not a size of at least 64M", optarg);
			o->mem_limit = v;
			break;
		case OPT_MAX_LOG:
			if (leap_parse_size(optarg, &v) || v > (64LL << 20))
				leap_usage_error(&c->common, "--max-log: '%s' is not a size up to 64M", optarg);
			c->max_log = (size_t)v;
			break;
		case OPT_BATCH:
			if (leap_parse_int(optarg, 1, 64, &c->batch))
				leap_usage_error(&c->common, "--batch: '%s' is not a number from 1 to 64", optarg);
			break;
		default:
			leap_usage_error(&c->common, "unhandled option");
		}
	}
	return optind;
}

/* Opens the cache (--cache, else LEAP_CACHE or the default), the compiler with what it must
 * not read, and the suite. Exits 2 when one cannot be had. */
static void open_compiler(struct ctx *c, struct leap_compile_opts *o, const char *cache_opt, int64_t cache_size)
{
	char *cdir = cache_opt && *cache_opt ? xstrdup(cache_opt) : leap_cache_dir();
	if (!cdir)
		leap_die("no cache directory: use --cache DIR or set LEAP_CACHE (no HOME, no home directory)");
	char *err = NULL;
	if (cdir[0] != '/') {
		char *abs = realpath(".", NULL);
		if (!abs)
			leap_die_errno("getcwd");
		char *full = xasprintf("%s/%s", abs, cdir);
		free(abs);
		free(cdir);
		cdir = full;
	}
	if (leap_cache_open(&c->cache, cdir, cache_size, &err))
		leap_die("%s", err);
	char *tdir = leap_tasks_dir(c->common.tasks);
	/* What the compilers must not read (SECURITY.md): one list for every program that builds
	 * or runs candidates (lib/task/unseen.c). */
	size_t nhide = 0;
	char **hide = leap_unseen(cdir, tdir, LEAP_UNSEEN_COMPILER, &nhide);
	o->hide = (const char *const *)hide;
	o->nhide = nhide;
	c->cache_root = cdir;
	if (leap_compiler_init(&c->comp, o, &c->cache, &err))
		leap_die("%s", err);
	leap_unseen_free(hide, nhide);
	leap_suite_init(&c->suite, tdir);
	free(tdir);
	if (c->file_mode) {
		char *terr = NULL;
		if (!leap_suite_get(&c->suite, c->task, &terr))
			leap_die("%s", terr);
	}
}

/* Compiles the inputs (n files: records, or with --task sources) with c->jobs workers and one
 * writer, the ending signals waited for by a thread of their own, which is returned still
 * running: it must outlive the output (see main). */
static pthread_t run_threads(struct ctx *c, int n, char **files)
{
	/* From here a signal must not leave the work directory behind: every thread is created
	 * with the ending signals blocked, and one thread waits for them. */
	sigset_t term = term_signals();
	pthread_t sig_thread;
	if (pthread_sigmask(SIG_BLOCK, &term, NULL) || pthread_create(&sig_thread, NULL, on_signal, c))
		leap_die("cannot start a thread");
	leap_cqueue_start(&c->q);

	if (c->file_mode)
		read_sources(c, n, files);
	else
		read_records(c, n, files);

	leap_cqueue_finish(&c->q);
	return sig_thread;
}

int main(int argc, char **argv)
{
	struct ctx *c = xcalloc(1, sizeof(*c));
	leap_common_init(&c->common, &usage);
	struct leap_compile_opts o;
	leap_compile_defaults(&o);
	c->backend = -1;
	c->jobs = cpu_count();
	c->max_log = 4096;
	int64_t cache_size = 5LL << 30;
	const char *cache_opt = NULL;
	int first = parse_options(c, &o, argc, argv, &cache_size, &cache_opt);
	c->file_mode = c->task != NULL;
	if (c->file_mode && first >= argc)
		leap_usage_error(&c->common, "--task needs source files");
	if ((int)c->backend < 0) /* probed now, before any thread; said when a record uses it */
		c->backend = leap_backend_default(c->backend_said, sizeof c->backend_said);

	open_compiler(c, &o, cache_opt, cache_size);
	leap_out_init(&c->out, stdout);
	c->out.on_epipe = reader_gone;
	c->out.epipe_arg = c;
	leap_progress_init(&c->progress, c->common.progress);
	if (c->file_mode)
		leap_progress_total(&c->progress, argc - first);
	else
		leap_progress_input(&c->progress, argc - first, argv + first);
	leap_cqueue_init(&c->q, &c->comp, &c->out, c->jobs, c->batch, emit, c);
	c->q.lock_dir = c->cache_root;

	pthread_t sig_thread = run_threads(c, argc - first, argv + first);

	leap_progress_end(&c->progress); /* the summary: the same counts as the line */
	int rc = leap_out_close(&c->out);
	leap_cqueue_lock(&c->q);
	c->ending = 1;
	leap_cqueue_unlock(&c->q);
	/* wake the signal thread (it sees `ending` and returns) and reap it */
	if (!pthread_kill(sig_thread, SIGTERM))
		pthread_join(sig_thread, NULL);
	leap_compiler_free(&c->comp);
	leap_cache_close(&c->cache);
	free(c->cache_root);
	leap_suite_free(&c->suite);
	leap_cqueue_free(&c->q);
	free(o.nvcc_flags);
	free(o.cc_flags);
	/* with --task, a source file that did not compile (or held no code) exits 1 as an error
	 * record would */
	long errors = c->errors + (c->file_mode && (c->failed || c->no_code));
	int status = leap_filter_exit(rc, c->open_failed != 0, errors);
	free(c);
	return status;
}
