/* leap-verify - check compiled candidates against their task's reference, in a sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "cli.h"
#include "jsonl.h"
#include "record.h"
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
	"  -t, --timeout SECS     wall-clock limit per candidate (default 30); CPU time is limited too\n"
	"  -m, --memory SIZE      address-space limit of a cpu child (default 4G; K, M, G suffixes)\n"
	"      --file-size SIZE   largest file or output a child may write (default 16M)\n"
	"      --nproc N          process and thread limit of the sandbox user (default 256)\n"
	"  -d, --device N         CUDA device of the cuda children (default 0)\n"
	"      --no-namespaces    do not isolate network and PID view (when the kernel forbids it)\n"
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

enum { OPT_FSIZE = LEAP_OPT_PRIVATE, OPT_NPROC, OPT_NO_NS, OPT_TASK, OPT_CACHE };

struct ctx {
	struct leap_common common;
	struct leap_suite suite;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_verifier v;
	uint64_t seed;
	long done, errors;
};

/* Verifies one parsed record and writes it. */
static void one(struct ctx *c, struct leap_in *in, json_t *rec)
{
	if (json_object_get(rec, "error")) {
		leap_out_raw(&c->out, in->buf, in->len);
		return;
	}
	json_t *compile = json_object_get(rec, "compile");
	const char *cst = leap_get_str(compile, "status", NULL);
	const char *artifact = leap_get_str(compile, "artifact", NULL);
	if (!cst || strcmp(cst, "ok") || !artifact) {
		json_t *add = json_pack("{s:{s:s,s:s}}", "verify", "status", "skipped", "message",
					!compile ? "not compiled (no compile result)" : "did not compile");
		leap_out_splice(&c->out, in->buf, in->len, rec, add);
		json_decref(add);
		return;
	}
	const char *id = leap_get_str(rec, "task", NULL);
	const char *bname = leap_get_str(rec, "backend", "cuda");
	enum leap_backend b;
	char *err = NULL;
	const struct leap_task *t = NULL;
	if (!id)
		err = xstrdup("the record has no task");
	else if (leap_backend_parse(bname, &b))
		err = xasprintf("unknown backend '%s'", bname);
	else
		t = leap_suite_get(&c->suite, id, &err);
	json_t *verify = NULL;
	enum leap_status st = LEAP_ST_NONE;
	if (t)
		verify = leap_verify_artifact(&c->v, t, b, artifact, c->seed, &st, &err);
	if (!verify) {
		leap_warn("%s:%ld: %s", in->name, in->line, err);
		leap_record_set_error(rec, in->name, in->line, "%s", err);
		leap_out_write(&c->out, rec);
		free(err);
		c->errors++;
		return;
	}
	json_t *add = json_object();
	json_object_set_new(add, "verify", verify);
	if (st != LEAP_ST_NONE)
		json_object_set_new(add, "status", json_string(leap_status_name(st)));
	else
		c->errors++; /* no_device: not verified */
	leap_out_splice(&c->out, in->buf, in->len, rec, add);
	json_decref(add);
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
		printf("%s: %s (task %s, %s, seed %s, %.1f ms)\n  %s\n", files[i], status, t->id, leap_backend_name(b),
		       leap_get_str(v, "seed", "?"), leap_get_num(v, "ms", 0), leap_get_str(v, "message", ""));
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
		{NULL, 0, NULL, 0},
	};
	struct ctx c;
	memset(&c, 0, sizeof c);
	leap_common_init(&c.common, usage);
	struct leap_verify_opts o = {
		.trials = 3,
		.sb = {.timeout = 30, .mem_bytes = 4ull << 30, .fsize_bytes = 16ull << 20, .nproc = 256, .namespaces = 1},
		.device = "0",
	};
	const char *task = NULL, *backend = NULL, *cache = NULL;
	int have_seed = 0, opt;
	int64_t v64;
	while ((opt = getopt_long(argc, argv, "n:s:t:m:d:b:hV", longopts, NULL)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'n':
			if (leap_parse_int(optarg, 1, 1000, &o.trials))
				leap_usage_error(&c.common, "--trials: '%s' is not an integer in [1, 1000]", optarg);
			break;
		case 's':
			if (leap_parse_i64(optarg, 0, INT64_MAX, &v64))
				leap_usage_error(&c.common, "--seed: '%s' is not a non-negative integer", optarg);
			c.seed = (uint64_t)v64;
			have_seed = 1;
			break;
		case 't':
			if (leap_parse_seconds(optarg, &o.sb.timeout) || o.sb.timeout > 86400)
				leap_usage_error(&c.common, "--timeout: '%s' is not a duration up to a day", optarg);
			break;
		case 'm':
			if (leap_parse_size(optarg, &o.sb.mem_bytes) || o.sb.mem_bytes < (64u << 20))
				leap_usage_error(&c.common, "--memory: '%s' is not a size of at least 64M", optarg);
			break;
		case OPT_FSIZE:
			if (leap_parse_size(optarg, &o.sb.fsize_bytes) || o.sb.fsize_bytes < 4096)
				leap_usage_error(&c.common, "--file-size: '%s' is not a size of at least 4K", optarg);
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
		default:
			leap_usage_error(&c.common, "unknown option");
		}
	}
	if (backend && !task)
		leap_usage_error(&c.common, "--backend needs --task (records name their backend)");
	if (task && optind >= argc)
		leap_usage_error(&c.common, "--task needs at least one source file");
	o.libexec = leap_libexec_dir();
	if (!o.libexec)
		leap_die("cannot find the runner leap-run-cpu (set LEAP_LIBEXEC to its directory)");
	o.cache = cache ? xstrdup(cache) : leap_cache_dir();
	c.seed = have_seed ? c.seed : leap_random_seed() >> 1;
	char *dir = leap_tasks_dir(c.common.tasks);
	leap_suite_init(&c.suite, dir);
	free(dir);
	leap_verifier_init(&c.v, &o);
	int rc;
	if (task) {
		rc = adhoc(&c, task, backend, argc - optind, argv + optind);
	} else {
		leap_out_init(&c.out, stdout);
		leap_progress_init(&c.progress, c.common.progress);
		struct leap_in in;
		leap_in_init(&in, argc - optind, argv + optind, stdout);
		json_t *rec;
		enum leap_read r;
		while ((r = leap_in_next(&in, &rec)) != LEAP_READ_EOF) {
			if (r == LEAP_READ_BAD) {
				leap_out_write(&c.out, rec);
				c.errors++;
			} else {
				one(&c, &in, rec);
			}
			json_decref(rec);
			c.done++;
			leap_progress_update(&c.progress, c.done, c.errors);
		}
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
	return rc;
}
