/* leap-verify - check compiled candidates against their task's reference, in a sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "cache.h"
#include "cli.h"
#include "jsonl.h"
#include "record.h"
#include "runproto.h"
#include "task.h"
#include "util.h"
#include "verify.h"
#include "banned.h"

static const char usage[] =
	"usage: leap-verify [OPTION]... [FILE]...\n"
	"   or: leap-verify [OPTION]... --task TASK SOURCE...\n"
	"\n"
	"Run each compiled candidate (compile.artifact) in a sandboxed child on every verification\n"
	"case of its task with fresh random inputs, compare with the task's reference computed\n"
	"outside the sandbox, and add `verify` {status, seed, cases, trials, max_abs_err,\n"
	"max_rel_err, mismatch, ms, message, output}; the record's `status` becomes pass, mismatch,\n"
	"runtime_error or timeout. Records that did not compile get verify.status \"skipped\".\n"
	"With --task, build each SOURCE (.c: cpu, .cu: cuda) and print a readable verdict.\n"
	"\n"
	"  -n, --trials N         fresh input sets per case (default 3)\n"
	"  -s, --seed N           seed of the inputs (default: random per run; written to verify.seed)\n"
	"  -t, --timeout SECS     wall-clock limit per candidate (default 30); CPU time is limited\n"
	"                         to that times the number of CPUs\n"
	"  -m, --memory SIZE      address-space limit of a cpu child (default 4G; K, M, G suffixes)\n"
	"      --file-size SIZE   largest file or output a child may write (default 16M)\n"
	"      --nproc N          process and thread limit of the sandbox user (default 256, or 4\n"
	"                         per CPU beyond 64 CPUs)\n"
	"  -j, --jobs N           verify up to N candidates at once (default 1); cuda: one per GPU\n"
	"      --share-gpu        with -j: let cuda candidates share the GPU\n"
	"  -d, --device N         CUDA device of the cuda children (default 0)\n"
	"      --no-namespaces    no network, PID and mount isolation (when the kernel forbids it)\n"
	"      --task TASK        ad-hoc mode: the arguments are source files for TASK\n"
	"  -b, --backend NAME     ad-hoc mode: cuda or cpu (default: from the file's extension)\n"
	"      --cache DIR        build cache (default: $LEAP_CACHE, else ~/.cache/leap)\n"
	"      --tasks DIR        the task suite (default: $LEAP_TASKS, else the bundled suite)\n"
	"      --progress, --no-progress  force the progress line on stderr on or off\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Exit status: 0 every record processed, 1 some record carried an error or could not be\n"
	"verified (no device), or in ad-hoc mode a candidate did not pass; 2 usage or fatal error.\n";

enum { OPT_FSIZE = LEAP_OPT_PRIVATE, OPT_NPROC, OPT_NO_NS, OPT_TASK, OPT_CACHE, OPT_SHARE_GPU };

struct ctx {
	struct leap_common common;
	struct leap_suite suite;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_verifier v;
	uint64_t seed;
	long done, errors;
	int jobs, share_gpu;         /* -j, --share-gpu */
	int running, running_cuda;   /* workers now */
	unsigned char *busy;         /* busy[slot] for slot < jobs */
	struct entry *q;             /* records in input order, a ring of qcap */
	size_t qhead, nq, qcap;
};

/* One input record on its way through: decided at once, or verified by a worker. */
struct entry {
	json_t *rec;
	char *raw;
	size_t len;
	char *file;
	long line;
	int ready;        /* the output is decided */
	int mode;         /* when ready: 0 splice `add`, 1 raw line, 2 write rec (error set) */
	json_t *add;
	pid_t pid;        /* a worker verifying it, or 0 */
	int fd;           /* the worker's result pipe */
	int cuda;
	int slot;         /* the worker slot (its sandbox user), while running */
	struct leap_buf buf;
};

static void collect(struct ctx *c, int ms);

/* Marks e as an error record with message `err` (consumed). */
static void entry_error(struct ctx *c, struct entry *e, char *err)
{
	leap_warn("%s:%ld: %s", e->file, e->line, err);
	leap_record_set_error(e->rec, e->file, e->line, "%s", err);
	free(err);
	e->mode = 2;
	e->ready = 1;
	c->errors++;
}

/* Turns a verify object and record status into the fields to add. */
static json_t *fields(struct ctx *c, json_t *verify, enum leap_status st)
{
	json_t *add = json_object();
	json_object_set_new(add, "verify", verify);
	if (st != LEAP_ST_NONE)
		json_object_set_new(add, "status", json_string(leap_status_name(st)));
	else
		c->errors++; /* no_device: not verified */
	return add;
}

/* Decides what to do with a record: pass through, skip, fail, verify now (-j 1), or start a
 * worker (returns with e->pid set). */
static void start(struct ctx *c, struct entry *e)
{
	json_t *rec = e->rec;
	if (json_object_get(rec, "error")) {
		e->mode = 1;
		e->ready = 1;
		return;
	}
	json_t *compile = json_object_get(rec, "compile");
	const char *cst = leap_get_str(compile, "status", NULL);
	const char *artifact = leap_get_str(compile, "artifact", NULL);
	if (!cst || strcmp(cst, "ok") || !artifact) {
		e->add = json_pack("{s:{s:s,s:s}}", "verify", "status", "skipped", "message",
				   !compile ? "not compiled (no compile result)" : "did not compile");
		e->ready = 1;
		return;
	}
	const char *id = leap_get_str(rec, "task", NULL);
	const char *bname = leap_get_str(rec, "backend", "cuda");
	enum leap_backend b = LEAP_BACKEND_CUDA;
	char *err = NULL;
	const struct leap_task *t = NULL;
	if (!id)
		err = xstrdup("the record has no task");
	else if (leap_backend_parse(bname, &b))
		err = xasprintf("unknown backend '%s'", bname);
	else
		t = leap_suite_get(&c->suite, id, &err);
	if (!t || leap_verify_prepare(&c->v, t, c->seed, &err)) {
		entry_error(c, e, err);
		return;
	}
	e->cuda = b == LEAP_BACKEND_CUDA;
	while (e->cuda && c->running_cuda && !c->share_gpu)
		collect(c, -1); /* one cuda child per GPU at a time */
	if (c->jobs > 1) {
		int fds[2];
		if (pipe2(fds, O_CLOEXEC))
			leap_die_errno("pipe");
		if (fflush(stdout))
			leap_die_errno("write error");
		int slot = 0;
		while (c->busy[slot])
			slot++;
		pid_t pid = fork();
		if (pid < 0)
			leap_die_errno("fork");
		if (pid == 0) {
			close(fds[0]);
			leap_sandbox_slot(&c->v.env, slot);
			enum leap_status st = LEAP_ST_NONE;
			json_t *v = leap_verify_artifact(&c->v, t, b, artifact, c->seed, &st, &err);
			json_t *res = v ? json_pack("{s:o,s:i}", "verify", v, "st", (int)st) : json_pack("{s:s}", "err", err);
			struct leap_buf out = {0};
			if (!res || leap_json_append(&out, res) || leap_write_full(fds[1], out.s, out.len))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		e->pid = pid;
		e->fd = fds[0];
		e->slot = slot;
		c->busy[slot] = 1;
		c->running++;
		if (e->cuda)
			c->running_cuda++;
		return;
	}
	enum leap_status st = LEAP_ST_NONE;
	json_t *verify = leap_verify_artifact(&c->v, t, b, artifact, c->seed, &st, &err);
	if (!verify) {
		entry_error(c, e, err);
		return;
	}
	e->add = fields(c, verify, st);
	e->ready = 1;
}

/* Reads what running workers wrote, for up to `ms` milliseconds (-1: until one finishes);
 * finished workers make their entries ready. */
static void collect(struct ctx *c, int ms)
{
	struct pollfd *pf = xcalloc(c->nq ? c->nq : 1, sizeof *pf);
	size_t *idx = xcalloc(c->nq ? c->nq : 1, sizeof *idx), n = 0;
	for (size_t i = 0; i < c->nq; i++) {
		struct entry *e = &c->q[(c->qhead + i) % c->qcap];
		if (e->pid > 0) {
			pf[n] = (struct pollfd){e->fd, POLLIN, 0};
			idx[n++] = (c->qhead + i) % c->qcap;
		}
	}
	if (n && poll(pf, n, ms) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (!pf[i].revents)
				continue;
			struct entry *e = &c->q[idx[i]];
			char chunk[4096];
			ssize_t r = read(e->fd, chunk, sizeof chunk);
			if (r > 0) {
				leap_buf_add(&e->buf, chunk, (size_t)r);
				continue;
			}
			if (r < 0 && errno == EINTR)
				continue;
			close(e->fd);
			int ws;
			while (waitpid(e->pid, &ws, 0) < 0 && errno == EINTR)
				;
			e->pid = 0;
			c->busy[e->slot] = 0;
			c->running--;
			if (e->cuda)
				c->running_cuda--;
			json_t *res = e->buf.s ? json_loadb(e->buf.s, e->buf.len, 0, NULL) : NULL;
			leap_buf_free(&e->buf);
			json_t *v = json_object_get(res, "verify");
			if (v) {
				e->add = fields(c, json_incref(v), (enum leap_status)leap_get_int(res, "st", LEAP_ST_NONE));
				e->ready = 1;
			} else {
				entry_error(c, e, xstrdup(leap_get_str(res, "err", "internal error: a verifier worker died")));
			}
			json_decref(res);
		}
	}
	free(pf);
	free(idx);
}

/* Writes the ready entries at the head of the queue, in input order. */
static void drain(struct ctx *c)
{
	while (c->nq) {
		struct entry *e = &c->q[c->qhead];
		if (!e->ready)
			return;
		if (e->mode == 1)
			leap_out_raw(&c->out, e->raw, e->len);
		else if (e->mode == 2)
			leap_out_write(&c->out, e->rec);
		else
			leap_out_splice(&c->out, e->raw, e->len, e->rec, e->add);
		json_decref(e->rec);
		json_decref(e->add);
		free(e->raw);
		free(e->file);
		memset(e, 0, sizeof *e);
		c->qhead = (c->qhead + 1) % c->qcap;
		c->nq--;
		c->done++;
		leap_progress_update(&c->progress, c->done, c->errors);
	}
}

/* Whether another worker may start. */
static int room(const struct ctx *c)
{
	return c->running < c->jobs;
}

/* The filter: records in, records out in the same order, up to c->jobs verified at once. */
static void filter(struct ctx *c, struct leap_in *in)
{
	c->qcap = (size_t)c->jobs * 4 + 4;
	c->q = xcalloc(c->qcap, sizeof *c->q);
	c->busy = xcalloc((size_t)c->jobs, 1);
	json_t *rec;
	enum leap_read r;
	for (;;) {
		while (c->nq == c->qcap || !room(c)) {
			collect(c, -1);
			drain(c);
		}
		if (c->running == 0)
			drain(c);
		if ((r = leap_in_next(in, &rec)) == LEAP_READ_EOF)
			break;
		struct entry *e = &c->q[(c->qhead + c->nq++) % c->qcap];
		memset(e, 0, sizeof *e);
		e->rec = rec;
		e->raw = xstrndup(in->buf, in->len);
		e->len = in->len;
		e->file = xstrdup(in->name);
		e->line = in->line;
		if (r == LEAP_READ_BAD) {
			e->mode = 2;
			e->ready = 1;
			c->errors++;
		} else {
			start(c, e);
		}
		collect(c, 0);
		drain(c);
	}
	while (c->nq) {
		collect(c, -1);
		drain(c);
	}
	free(c->q);
	free(c->busy);
}

/* Ad-hoc mode: builds and verifies each source file, printing a readable verdict. */
static int adhoc(struct ctx *c, const char *task, const char *backend, int n, char **files)
{
	char *err = NULL;
	const struct leap_task *t = leap_suite_get(&c->suite, task, &err);
	if (!t)
		leap_die("%s", err);
	int bad = 0;
	for (int i = 0; i < n; i++) {
		enum leap_backend b = LEAP_BACKEND_CPU;
		const char *dot = strrchr(files[i], '.');
		if (backend ? leap_backend_parse(backend, &b) : (dot && !strcmp(dot, ".cu") ? (b = LEAP_BACKEND_CUDA, 0) : 0))
			leap_die("unknown backend '%s'", backend);
		size_t len;
		char *src = leap_read_file(files[i], &len, &err);
		if (!src)
			leap_die("%s", err);
		char *so = leap_build_artifact(t, b, src, len, c->v.o.cache, &err);
		free(src);
		if (!so) {
			printf("%s: compile_error\n%s\n", files[i], err);
			free(err);
			bad = 1;
			continue;
		}
		enum leap_status st;
		json_t *v = leap_verify_artifact(&c->v, t, b, so, c->seed, &st, &err);
		free(so);
		if (!v)
			leap_die("%s: %s", files[i], err);
		const char *status = leap_get_str(v, "status", "?");
		printf("%s: %s (task %s, %s, seed %lld, %.1f ms)\n  %s\n", files[i], status, t->id, leap_backend_name(b),
		       (long long)leap_get_int(v, "seed", -1), leap_get_num(v, "ms", 0), leap_get_str(v, "message", ""));
		const char *output = leap_get_str(v, "output", NULL);
		if (output)
			printf("  output of the code:\n%s\n", output);
		bad |= strcmp(status, "pass") != 0;
		json_decref(v);
	}
	if (fflush(stdout) || ferror(stdout))
		leap_die_errno("write error");
	return bad ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		LEAP_COMMON_LONGOPTS,
		LEAP_TASKS_LONGOPT,
		{"trials", required_argument, NULL, 'n'},
		{"seed", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"memory", required_argument, NULL, 'm'},
		{"file-size", required_argument, NULL, OPT_FSIZE},
		{"nproc", required_argument, NULL, OPT_NPROC},
		{"device", required_argument, NULL, 'd'},
		{"no-namespaces", no_argument, NULL, OPT_NO_NS},
		{"task", required_argument, NULL, OPT_TASK},
		{"backend", required_argument, NULL, 'b'},
		{"cache", required_argument, NULL, OPT_CACHE},
		{"jobs", required_argument, NULL, 'j'},
		{"share-gpu", no_argument, NULL, OPT_SHARE_GPU},
		{NULL, 0, NULL, 0},
	};
	struct ctx c;
	memset(&c, 0, sizeof c);
	leap_common_init(&c.common, usage);
	c.jobs = 1;
	struct leap_verify_opts o = {
		.trials = 3,
		.sb = {.timeout = 30, .mem_bytes = 4ull << 30, .fsize_bytes = 16ull << 20, .nproc = 0, .namespaces = 1},
		.device = "0",
	};
	const char *task = NULL, *backend = NULL, *cache = NULL;
	int have_seed = 0, opt;
	int64_t v64;
	while ((opt = getopt_long(argc, argv, "n:s:t:m:d:b:j:hV", longopts, NULL)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'n':
			if (leap_parse_int(optarg, 1, 1000, &o.trials))
				leap_usage_error(&c.common, "--trials: '%s' is not an integer in [1, 1000]", optarg);
			break;
		case 's':
			if (leap_parse_i64(optarg, 0, LEAP_SEED_MAX, &v64))
				leap_usage_error(&c.common, "--seed: '%s' is not an integer in [0, 2^53)", optarg);
			c.seed = (uint64_t)v64;
			have_seed = 1;
			break;
		case 't':
			if (leap_parse_seconds(optarg, &o.sb.timeout) || o.sb.timeout > 86400)
				leap_usage_error(&c.common, "--timeout: '%s' is not a duration up to a day", optarg);
			break;
		case 'm':
			if (leap_parse_size(optarg, &v64) || v64 < (64 << 20))
				leap_usage_error(&c.common, "--memory: '%s' is not a size of at least 64M", optarg);
			o.sb.mem_bytes = (uint64_t)v64;
			break;
		case OPT_FSIZE:
			if (leap_parse_size(optarg, &v64) || v64 < 4096)
				leap_usage_error(&c.common, "--file-size: '%s' is not a size of at least 4K", optarg);
			o.sb.fsize_bytes = (uint64_t)v64;
			break;
		case OPT_NPROC:
			if (leap_parse_i64(optarg, 4, 1 << 20, &v64))
				leap_usage_error(&c.common, "--nproc: '%s' is not an integer in [4, 1048576]", optarg);
			o.sb.nproc = (long)v64;
			break;
		case 'd':
			if (leap_parse_i64(optarg, 0, 1023, &v64))
				leap_usage_error(&c.common, "--device: '%s' is not a device index", optarg);
			o.device = optarg;
			break;
		case OPT_NO_NS:
			o.sb.namespaces = 0;
			break;
		case OPT_TASK:
			task = optarg;
			break;
		case 'b':
			backend = optarg;
			break;
		case OPT_CACHE:
			cache = optarg;
			break;
		case 'j':
			if (leap_parse_int(optarg, 1, 1024, &c.jobs))
				leap_usage_error(&c.common, "--jobs: '%s' is not an integer in [1, 1024]", optarg);
			break;
		case OPT_SHARE_GPU:
			c.share_gpu = 1;
			break;
		default:
			leap_usage_error(&c.common, "unknown option");
		}
	}
	if (backend && !task)
		leap_usage_error(&c.common, "--backend needs --task (records name their backend)");
	if (task && optind >= argc)
		leap_usage_error(&c.common, "--task needs at least one source file");
	if (!o.sb.nproc) { /* room for a thread per CPU (OpenMP) and then some */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.sb.nproc = n > 64 ? 4 * n : 256;
	}
	o.libexec = leap_libexec_dir();
	if (!o.libexec)
		leap_die("cannot find the runner leap-run-cpu (set LEAP_LIBEXEC to its directory)");
	o.cache = cache ? xstrdup(cache) : leap_cache_dir();
	c.seed = have_seed ? c.seed : leap_random_seed() & LEAP_SEED_MAX;
	char *dir = leap_tasks_dir(c.common.tasks);
	leap_suite_init(&c.suite, dir);
	/* The candidate must not find the references: hide the suite and the build cache. */
	leap_mkdirs(o.cache); /* so that it exists, and can be hidden, from the start */
	char *tasks_real = realpath(dir, NULL), *cache_real = realpath(o.cache, NULL);
	const char *hide[2];
	size_t nhide = 0;
	if (tasks_real)
		hide[nhide++] = tasks_real;
	if (cache_real)
		hide[nhide++] = cache_real;
	o.sb.hide = hide;
	o.sb.nhide = nhide;
	free(dir);
	leap_verifier_init(&c.v, &o);
	if (c.jobs > 1)
		leap_sandbox_probe(&c.v.env, &o.sb); /* once here, not once per worker */
	int rc;
	if (task) {
		rc = adhoc(&c, task, backend, argc - optind, argv + optind);
	} else {
		leap_out_init(&c.out, stdout);
		leap_progress_init(&c.progress, c.common.progress);
		struct leap_in in;
		leap_in_init(&in, argc - optind, argv + optind, stdout);
		filter(&c, &in);
		leap_progress_end(&c.progress);
		int open_failed = in.open_failed;
		leap_in_close(&in);
		rc = leap_out_close(&c.out);
		if (rc == LEAP_EXIT_OK && (c.errors || open_failed))
			rc = open_failed ? LEAP_EXIT_FATAL : LEAP_EXIT_RECORDS;
	}
	leap_verifier_free(&c.v);
	leap_suite_free(&c.suite);
	free(o.libexec);
	free(o.cache);
	free(tasks_real);
	free(cache_real);
	return rc;
}
