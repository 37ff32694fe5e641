/* leap-verify - check compiled candidates against their task's reference, in a sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/cache.h"
#include "core/cli.h"
#include "backend/devices.h"
#include "referee/hand.h"
#include "core/jsonl.h"
#include "referee/pool.h"
#include "referee/recjob.h"
#include "core/record.h"
#include "referee/runopts.h"
#include "sandbox/runproto.h"
#include "core/sig.h"
#include "task/task.h"
#include "core/util.h"
#include "referee/verify.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-verify [OPTION]... [FILE]...\n"
	"   or: leap-verify [OPTION]... --task TASK SOURCE...\n"
	"\n"
	"Run each compiled candidate (compile.artifact) in a sandboxed child on every verification\n"
	"case of its task, and on cases of sizes drawn from the seed within the task's ranges, with\n"
	"fresh random inputs; compare with the task's reference computed outside the sandbox, and\n"
	"add `verify` {status, seed, cases, trials, max_abs_err, max_rel_err, mismatch, ms,\n"
	"message, output, drawn}; the record's `status` becomes pass, mismatch, runtime_error or\n"
	"timeout. Records that did not compile get verify.status \"skipped\".\n"
	"With --task, build each SOURCE (.c: cpu, .cu: cuda; '-': standard input) exactly as\n"
	"leap-compile does, through its cache, and print a readable verdict.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 every record processed, 1 some record carried an error or could not be\n"
	"verified (no device), or in ad-hoc mode a candidate did not pass; 2 usage or fatal error.\n"
	"128+N: ended by signal N (SIGINT, SIGTERM, SIGHUP) after writing the finished records.\n";

enum { OPT_SHARE_GPU = LEAP_OPT_PRIVATE, OPT_DRAWN, OPT_MEMMAX, OPT_SLOW, OPT_SLOW_FLOOR };

struct ctx {
	struct leap_common common;
	struct leap_suite suite;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_verifier v;
	struct leap_pool pool;
	uint64_t seed;
	long errors, no_device;
	int jobs, share_gpu;         /* -j, --share-gpu */
	struct leap_devices devs;    /* --devices: slot i runs on devs.idx[i] (jobs == devs.n) */
};

/* Marks e as an error record with message `err` (consumed). */
static void entry_error(struct ctx *c, struct leap_pool_entry *e, char *err)
{
	leap_warn("%s:%ld: %s", e->file, e->line, err);
	leap_record_set_error(e->rec, e->file, e->line, "%s", err);
	free(err);
	e->mode = LEAP_POOL_REC;
	e->ready = 1;
	c->errors++;
}

/* Turns a verify object and record status into the fields to add. A record that could not be
 * verified (no_device) gets an error, so that no stage after this one takes it for unchecked
 * work to do again or for the candidate's failure. */
static json_t *fields(struct ctx *c, const struct leap_pool_entry *e, json_t *verify, enum leap_status st)
{
	json_t *add = json_object();
	json_object_set_new(add, "verify", verify);
	leap_progress_count(&c->progress, st != LEAP_ST_NONE ? leap_status_name(st) : "no_device");
	if (st != LEAP_ST_NONE) {
		json_object_set_new(add, "status", json_string(leap_status_name(st)));
		return add;
	}
	json_t *err = leap_error_record(e->file, e->line, NULL, 0, "%s %s", leap_get_str(verify, "message", "Not verified."),
					LEAP_NO_DEVICE_HINT);
	json_object_set(add, "error", json_object_get(err, "error"));
	json_decref(err);
	if (!c->no_device++)
		leap_warn("%s:%ld: %s %s", e->file, e->line, leap_get_str(verify, "message", "Not verified."),
			  LEAP_NO_DEVICE_HINT);
	c->errors++;
	return add;
}

/* The pool's start: pass through, skip, fail, verify now (-j 1), or start a worker
 * (lib/referee/recjob.h decides which). An entry whose verification a signal interrupted is left
 * undecided. */
static void start(void *arg, struct leap_pool *p, struct leap_pool_entry *e)
{
	struct ctx *c = arg;
	struct leap_recjob j;
	char *err = NULL;
	switch (leap_recjob_classify(e->rec, LEAP_RECJOB_VERIFY, &c->suite, &c->v, &j)) {
	case LEAP_RECJOB_RAW:
		e->mode = LEAP_POOL_RAW;
		e->ready = 1;
		return;
	case LEAP_RECJOB_SKIP:
		e->add = j.add;
		leap_progress_count(&c->progress, "skipped");
		e->ready = 1;
		return;
	case LEAP_RECJOB_FAIL:
		entry_error(c, e, j.err);
		return;
	case LEAP_RECJOB_RUN:
		break;
	}
	if (leap_verify_prepare(&c->v, j.t, c->seed, &err)) {
		entry_error(c, e, err);
		return;
	}
	e->kind = j.kind;
	/* one cuda child per GPU at a time (--devices: one per slot) */
	leap_recjob_wait(p, j.kind, j.kind == LEAP_RECJOB_CUDA && !c->share_gpu && !c->devs.n);
	if (leap_signal_caught())
		return;
	if (c->jobs > 1 || c->devs.n) {
		int slot;
		if (leap_pool_fork(p, e, &slot))
			return;
		leap_sandbox_slot(&c->v.env, slot);
		if (c->devs.n)
			c->v.o.device = c->devs.name[slot];
		enum leap_status st = LEAP_ST_NONE;
		json_t *v = leap_verify_artifact(&c->v, j.t, j.b, j.artifact, c->seed, &st, &err);
		if (v && c->devs.n)
			json_object_set_new(v, "device_index", json_integer(c->devs.idx[slot]));
		leap_pool_child_exit(p, v ? json_pack("{s:o,s:i}", "verify", v, "st", (int)st) : json_pack("{s:s}", "err", err));
	}
	leap_pool_flush(p); /* the records before this one reach the reader while it runs */
	enum leap_status st = LEAP_ST_NONE;
	json_t *verify = leap_verify_artifact(&c->v, j.t, j.b, j.artifact, c->seed, &st, &err);
	if (leap_signal_caught()) { /* the verdict may be the interruption's */
		json_decref(verify);
		free(err);
		return;
	}
	if (!verify) {
		entry_error(c, e, err);
		return;
	}
	e->add = fields(c, e, verify, st);
	e->ready = 1;
}

/* The pool's finish: a worker's result becomes the entry's output. */
static void finish(void *arg, struct leap_pool *p, struct leap_pool_entry *e, json_t *res)
{
	struct ctx *c = arg;
	(void)p;
	json_t *v = json_object_get(res, "verify");
	if (v) {
		e->add = fields(c, e, json_incref(v), (enum leap_status)leap_get_int(res, "st", LEAP_ST_NONE));
		e->ready = 1;
	} else {
		entry_error(c, e, xstrdup(leap_get_str(res, "err", "internal error: a verifier worker died")));
	}
}

/* The options of leap-verify, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"trials", 'n', required_argument, "N", 0, "fresh input sets per case (default 3)"},
	{"drawn-cases", 0, required_argument, "N", OPT_DRAWN,
	 "cases of random sizes within the task's ranges, besides the\n"
	 "listed ones (default 3; 0: the listed cases only)"},
	LEAP_RUNOPT_TOL("task (default): each task's own atol and rtol; kernelbench:\n"
	                "KernelBench's atol = rtol = 1e-4 (fp32 outputs) or 1e-2 (half,\n"
	                "bf16); kernelbench-v0.1: 1e-2 for all, as KernelBench v0/v0.1\n"
	                "(both never tighter than the task's)"),
	LEAP_RUNOPT_SEED("seed of the inputs (default: random per run; written to verify.seed)"),
	LEAP_RUNOPT_TIMEOUT("wall-clock limit per candidate (default 30); CPU time is limited\n"
	                    "to that times the number of CPUs"),
	{"slow", 0, required_argument, "K", OPT_SLOW,
	 "a call taking more than K times the reference's time on the same\n"
	 "case, plus --slow-floor, is a timeout (default 100; 0: only\n"
	 "--timeout bounds a call)"},
	{"slow-floor", 0, required_argument, "SECS", OPT_SLOW_FLOOR,
	 "the seconds --slow adds (default 2), and the bound on loading\n"
	 "the candidate (10 s more on cuda)"},
	LEAP_RUNOPT_MEMORY("memory of a child's whole process tree (a memory cgroup), and\n"
	                   "each cpu process's address space, beyond the shared regions\n"
	                   "(default 4G; K, M, G suffixes)"),
	{"memory-max", 0, required_argument, "SIZE", OPT_MEMMAX,
	 "memory limit of a child's whole process tree through a memory\n"
	 "cgroup where this process may make one (default: --memory, plus\n"
	 "the staging regions on cuda; 0: none)"},
	LEAP_RUNOPT_FSIZE("largest file or output a child may write (default 16M)"),
	LEAP_RUNOPT_NPROC("process and thread limit of the sandbox user (default 256, or 4\n"
	                  "per CPU beyond 64 CPUs)"),
	{"jobs", 'j', required_argument, "N", 0,
	 "verify up to N candidates at once (default 1); cuda: one per GPU"},
	{"share-gpu", 0, no_argument, NULL, OPT_SHARE_GPU, "with -j: let cuda candidates share the GPU"},
	LEAP_RUNOPT_DEVICE("CUDA device of the cuda children (default 0)"),
	LEAP_RUNOPT_DEVICES("one child per listed device (e.g. 0-7 or 0,2,5), each record\n"
	                    "served by a free one, named in verify.device_index; cpu\n"
	                    "records use the list as worker slots"),
	LEAP_RUNOPT_NO_NS("no network, PID and mount isolation (when the kernel forbids it)"),
	LEAP_RUNOPT_TASK("ad-hoc mode: the arguments are source files for TASK"),
	LEAP_RUNOPT_BACKEND("ad-hoc mode: cuda or cpu (default: from the file's extension;\n"
	                    "needed for '-')"),
	LEAP_RUNOPT_CACHE("build cache (default: $LEAP_CACHE, else $XDG_CACHE_HOME/leap,\n"
	                  "else ~/.cache/leap)"),
	LEAP_OPTS_TASKS,
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

int main(int argc, char **argv)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	leap_common_init(&c.common, &usage);
	c.jobs = 1;
	struct leap_verify_opts o;
	leap_recjob_defaults(&o, LEAP_RECJOB_VERIFY);
	struct leap_runopts r = {.o = &o, .devs = &c.devs};
	int have_jobs = 0, opt;
	while ((opt = leap_common_getopt(&c.common, argc, argv)) != -1) {
		if (leap_common_option(&c.common, opt, optarg) || leap_runopts_option(&r, &c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'n':
			if (leap_parse_int(optarg, 1, 1000, &o.trials))
				leap_usage_error(&c.common, "--trials: '%s' is not an integer in [1, 1000]", optarg);
			break;
		case OPT_DRAWN:
			if (leap_parse_int(optarg, 0, 1000, &o.drawn))
				leap_usage_error(&c.common, "--drawn-cases: '%s' is not an integer in [0, 1000]", optarg);
			break;
		case OPT_SLOW:
			if (leap_parse_double(optarg, 0, 1e6, &o.slow))
				leap_usage_error(&c.common, "--slow: '%s' is not a number in [0, 1e6]", optarg);
			break;
		case OPT_SLOW_FLOOR:
			if (leap_parse_seconds(optarg, &o.slow_floor) || o.slow_floor > 86400)
				leap_usage_error(&c.common, "--slow-floor: '%s' is not a duration up to a day", optarg);
			break;
		case OPT_MEMMAX: {
			int64_t v64;
			if (leap_parse_size(optarg, &v64) || (v64 && v64 < (16 << 20)))
				leap_usage_error(&c.common, "--memory-max: '%s' is not 0 or a size of at least 16M", optarg);
			o.sb.cg_mem_bytes = (uint64_t)v64;
			o.sb.cg_mem_none = !v64;
			break;
		}
		case 'j':
			if (leap_parse_int(optarg, 1, 1024, &c.jobs))
				leap_usage_error(&c.common, "--jobs: '%s' is not an integer in [1, 1024]", optarg);
			have_jobs = 1;
			break;
		case OPT_SHARE_GPU:
			c.share_gpu = 1;
			break;
		default:
			leap_usage_error(&c.common, "unknown option");
		}
	}
	leap_runopts_check(&r, &c.common, argc - optind);
	if (c.devs.n && (have_jobs || r.have_device || r.task))
		leap_usage_error(&c.common, "--devices sets the workers and their devices: not with %s",
				 r.task ? "--task" : have_jobs ? "--jobs" : "--device");
	if (c.devs.n)
		c.jobs = c.devs.n;
	c.seed = r.have_seed ? r.seed : leap_random_seed() & LEAP_SEED_MAX;
	char *dir = leap_tasks_dir(c.common.tasks);
	leap_suite_init(&c.suite, dir);
	struct leap_unseen_set hidden;
	leap_verify_setup(&o, r.cache, dir, &hidden);
	free(dir);
	/* From here a signal ends the run in order: sandboxes killed, temp dirs removed, whole
	 * lines written (sig.h). */
	if (leap_signals_install())
		leap_die_errno("sigaction");
	leap_verifier_init(&c.v, &o);
	if (c.jobs > 1 || c.devs.n)
		leap_sandbox_probe(&c.v.env, &o.sb); /* once here, not once per worker */
	int rc;
	if (r.task) {
		rc = leap_hand_check(&c.v, &c.suite, r.task, r.backend, c.seed, argc - optind, argv + optind, NULL, NULL);
	} else {
		leap_out_init(&c.out, stdout);
		leap_progress_init(&c.progress, c.common.progress);
		leap_progress_input(&c.progress, argc - optind, argv + optind);
		struct leap_in in;
		leap_in_init(&in, argc - optind, argv + optind, stdout);
		in.on_signal = 1;
		leap_pool_init(&c.pool, c.jobs, &c.out, &c.progress, &c.errors, start, finish, &c);
		if (leap_pool_run(&c.pool, &in)) {
			/* SIGINT/SIGTERM/SIGHUP: the records written so far are whole lines; end the
			 * workers and their sandboxes, then die of the signal */
			leap_pool_abort(&c.pool);
			leap_progress_end(&c.progress);
			leap_out_close(&c.out);
			leap_signal_exit(leap_signal_caught());
		}
		leap_pool_free(&c.pool);
		leap_progress_end(&c.progress);
		if (c.no_device > 1)
			leap_warn("%ld records not verified: no usable CUDA device", c.no_device);
		int open_failed = in.open_failed;
		leap_in_close(&in);
		rc = leap_filter_exit(leap_out_close(&c.out), open_failed, c.errors);
	}
	leap_verifier_free(&c.v);
	leap_suite_free(&c.suite);
	leap_devices_free(&c.devs);
	free(o.libexec);
	free(o.cache);
	leap_unseen_set_free(&hidden);
	return rc;
}
