/* leap-bench - time verified candidates against their task's baseline, in a sandbox. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h" /* before util.h, whose <stdnoreturn.h> redefines noreturn */
#include "referee/bench.h"
#include "compile/cache.h"
#include "backend/devices.h"
#include "referee/hand.h"
#include "core/jsonl.h"
#include "referee/pool.h"
#include "referee/recjob.h"
#include "core/record.h"
#include "referee/runopts.h"
#include "referee/torchbase.h"
#include "core/sig.h"
#include "task/task.h"
#include "core/util.h"
#include "referee/verdict.h"
#include "referee/verify.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-bench [OPTION]... [FILE]...\n"
	"   or: leap-bench [OPTION]... --task TASK SOURCE...\n"
	"   or: leap-bench --stats [FILE]...\n"
	"\n"
	"Time each record whose status is pass on its task's benchmark case against the task's\n"
	"baseline (cuda: baseline.cu, cpu: reference.c), each in a sandboxed runner, from a referee\n"
	"the candidate cannot reach: blocks of calls timed on leap-bench's own clock with the\n"
	"candidate frozen in between, every call checked on inputs it cannot predict; the speedup is\n"
	"the median ratio of pairs of blocks, the candidate's and the baseline's. Adds `bench`\n"
	"{status, speedup, speedup_ci, median_ms, n, calls, baseline_ms, roofline, cpu_ms, message...};\n"
	"status ok, noisy, suspicious, mismatch, runtime_error, timeout or no_device (only ok carries\n"
	"a speedup); a wrong output, a crash or a timing that ends early also sets the record's\n"
	"status. Other records get bench.status skipped. With --task, build each SOURCE exactly as\n"
	"leap-compile does, verify and time it, and print a table. With --stats, summarise the\n"
	"numbers read (one sample each) as the timing loop does.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 every record processed, 1 some record carried an error or could not be\n"
	"timed (no device), or in ad-hoc mode a source did not pass or time cleanly; 2 usage or\n"
	"fatal error.\n"
	"128+N: ended by signal N (SIGINT, SIGTERM, SIGHUP) after writing the finished records.\n";

enum {
	OPT_TARGET = LEAP_OPT_PRIVATE, OPT_MIN_RUNS, OPT_MAX_RUNS, OPT_MAX_TIME, OPT_POOL, OPT_HOT, OPT_NO_BCACHE,
	OPT_STATS, OPT_BLOCK_MS, OPT_BTOL, OPT_CPUS, OPT_FREEZER, OPT_WALL, OPT_BASELINE,
};

struct ctx {
	struct leap_common common;
	struct leap_suite suite;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_verifier v;
	struct leap_bencher bench;
	struct leap_pool pool;       /* --devices: one timing worker per device */
	uint64_t seed;
	long done, errors;
	struct leap_devices devs;    /* --devices: slot i times on devs.idx[i] */
};

/* Times one parsed record and writes it. */
static void one(struct ctx *c, struct leap_in *in, json_t *rec)
{
	struct leap_recjob j;
	char *err = NULL;
	switch (leap_recjob_classify(rec, LEAP_RECJOB_BENCH, &c->suite, &c->v, &j)) {
	case LEAP_RECJOB_RAW:
		leap_out_raw(&c->out, in->buf, in->len);
		return;
	case LEAP_RECJOB_SKIP:
		leap_progress_count(&c->progress, "skipped");
		leap_out_splice(&c->out, in->buf, in->len, rec, j.add);
		json_decref(j.add);
		return;
	case LEAP_RECJOB_FAIL:
		err = j.err;
		break;
	case LEAP_RECJOB_RUN:
		break;
	}
	leap_out_flush(&c->out); /* the records before this one reach the reader while it runs */
	enum leap_status st = LEAP_ST_NONE;
	json_t *bench = j.t ? leap_bench_artifact(&c->bench, j.t, j.b, j.artifact, c->seed, &st, &err) : NULL;
	if (leap_signal_caught()) { /* the timing may be the interruption's: not written */
		json_decref(bench);
		free(err);
		return;
	}
	if (!bench) {
		leap_warn("%s:%ld: %s", in->name, in->line, err);
		leap_record_set_error(rec, in->name, in->line, "%s", err);
		leap_out_write(&c->out, rec);
		free(err);
		c->errors++;
		return;
	}
	leap_progress_count(&c->progress, leap_get_str(bench, "status", "?"));
	if (!strcmp(leap_get_str(bench, "status", ""), "no_device"))
		c->errors++;
	json_t *add = json_object();
	json_object_set_new(add, "bench", bench);
	if (st != LEAP_ST_NONE) /* wrong or crashing while timed: the record fails */
		json_object_set_new(add, "status", json_string(leap_status_name(st)));
	leap_out_splice(&c->out, in->buf, in->len, rec, add);
	json_decref(add);
}

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

/* The pool's finish: a worker's result becomes the entry's output. */
static void finish(void *arg, struct leap_pool *p, struct leap_pool_entry *e, json_t *res)
{
	struct ctx *c = arg;
	(void)p;
	json_t *bench = json_object_get(res, "bench");
	if (bench) {
		leap_progress_count(&c->progress, leap_get_str(bench, "status", "?"));
		if (!strcmp(leap_get_str(bench, "status", ""), "no_device"))
			c->errors++;
		e->add = json_pack("{s:O}", "bench", bench);
		const char *st = leap_get_str(res, "status", NULL);
		if (st)
			json_object_set_new(e->add, "status", json_string(st));
		e->ready = 1;
	} else {
		entry_error(c, e, xstrdup(leap_get_str(res, "err", "internal error: a timing worker died")));
	}
}

/* The pool's start (--devices): decides what to do with a record, or starts a worker timing
 * it on the next free slot (cuda: one timing per device; cpu: one timing at a time, as the
 * cpu lock would make it). */
static void start(void *arg, struct leap_pool *p, struct leap_pool_entry *e)
{
	struct ctx *c = arg;
	struct leap_recjob j;
	char *err = NULL;
	switch (leap_recjob_classify(e->rec, LEAP_RECJOB_BENCH, &c->suite, &c->v, &j)) {
	case LEAP_RECJOB_RAW:
		e->mode = LEAP_POOL_RAW;
		e->ready = 1;
		return;
	case LEAP_RECJOB_SKIP:
		leap_progress_count(&c->progress, "skipped");
		e->add = j.add;
		e->mode = LEAP_POOL_SPLICE;
		e->ready = 1;
		return;
	case LEAP_RECJOB_FAIL:
		entry_error(c, e, j.err);
		return;
	case LEAP_RECJOB_RUN:
		break;
	}
	e->kind = j.kind;
	leap_recjob_wait(p, j.kind, j.kind == LEAP_RECJOB_CPU); /* cpu: one timing at a time */
	if (leap_signal_caught())
		return;
	/* The input pool and the baseline's outputs are made here, once, for every worker, on the
	 * device of the slot leap_pool_fork will take (free now: nothing is timed beside them). */
	c->v.o.device = c->devs.name[leap_pool_next_slot(p)];
	if (leap_bench_prepare(&c->bench, j.t, j.b, c->seed, &err)) {
		entry_error(c, e, err);
		return;
	}
	int slot;
	leap_bencher_fork(&c->bench, 1); /* the worker reads the pools */
	pid_t parent = leap_pool_fork(p, e, &slot);
	leap_bencher_fork(&c->bench, 0);
	if (parent)
		return;
	leap_sandbox_slot(&c->v.env, slot);
	c->v.o.device = c->devs.name[slot];
	enum leap_status st = LEAP_ST_NONE;
	json_t *bench = leap_bench_artifact(&c->bench, j.t, j.b, j.artifact, c->seed, &st, &err);
	if (bench)
		json_object_set_new(bench, "device_index", json_integer(c->devs.idx[slot]));
	json_t *res = bench ? json_pack("{s:o}", "bench", bench) : json_pack("{s:s}", "err", err);
	if (bench && st != LEAP_ST_NONE)
		json_object_set_new(res, "status", json_string(leap_status_name(st)));
	leap_bencher_stop(&c->bench); /* the worker ends: so do the runners it kept */
	leap_pool_child_exit(p, res);
}

/* Parses --freezer into o. Returns 0 or -1. */
static int freezer_option(const char *s, struct leap_bench_opts *o)
{
	static const char *const names[] = {"auto", "cgroup", "cgroup1", "cgroup2", "signals"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i])) {
			o->freezer = i == 0 ? LEAP_FREEZE_NONE : i == 4 ? LEAP_FREEZE_SIGNALS : LEAP_FREEZE_CGROUP;
			o->cgroup_version = i == 2 ? 1 : i == 3 ? 2 : 0;
			return 0;
		}
	return -1;
}

/* --stats: reads samples (numbers separated by white space) and prints their summary. */
static int stats(struct ctx *c, int n, char **files, const struct leap_bench_opts *o)
{
	double *x = NULL;
	size_t len = 0, cap = 0;
	for (int i = 0; i < (n ? n : 1); i++) {
		FILE *fp = n && strcmp(files[i], "-") ? fopen(files[i], "r") : stdin;
		if (!fp || leap_fp_is_dir(fp))
			leap_die_errno("%s", n ? files[i] : "<stdin>");
		char word[128];
		while (fscanf(fp, "%127s", word) == 1) {
			double v;
			if (leap_parse_double(word, 0, 1e12, &v))
				leap_die("%s: '%s' is not a time", n ? files[i] : "<stdin>", word);
			xgrow((void **)&x, &cap, len + 1, sizeof *x);
			x[len++] = v;
		}
		if (fp != stdin)
			fclose(fp);
	}
	struct leap_stats s;
	leap_stats(x, len, &s);
	json_t *j = json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b}", "n", (json_int_t)s.n, "median_ms", s.median,
			      "min_ms", s.min, "mean_ms", s.mean, "stdev_ms", s.stdev, "ci_lo", s.ci_lo, "ci_hi", s.ci_hi,
			      "rel_ci", isfinite(s.rel_ci) ? s.rel_ci : -1.0, "stop",
			      leap_bench_done(&s, o->min_runs, o->max_runs, o->target_ci[leap_backend_reference()], 0, INFINITY,
					      NULL)); /* samples name no backend: the host's target */
	leap_out_init(&c->out, stdout);
	leap_out_write(&c->out, j);
	json_decref(j);
	free(x);
	return leap_out_close(&c->out);
}

/* Ad-hoc mode (leap_hand_check builds and verifies as the pipeline does): times one source
 * that passed, printing a table. Returns 1 when it did not time cleanly. */
static int adhoc_time(void *arg, const char *file, const struct leap_task *t, enum leap_backend b, const char *so,
		      uint64_t seed)
{
	struct ctx *c = arg;
	char *err = NULL;
	enum leap_status rst;
	json_t *r = leap_bench_artifact(&c->bench, t, b, so, seed, &rst, &err);
	if (leap_signal_caught() || !r)
		leap_bencher_stop(&c->bench); /* no runner outlives the program */
	if (leap_signal_caught())
		return 1; /* leap_hand_check ends the run */
	if (!r)
		leap_die("%s: %s", file, err);
	const char *bst = leap_get_str(r, "status", "?");
	printf("%s: %s (task %s, %s on %s)\n", file, bst, t->id, leap_backend_name(b), leap_get_str(r, "device", "?"));
	if (json_object_get(r, "median_ms")) {
		printf("  %-10s %12s %12s %8s %7s\n", "", "median ms", "min ms", "+-CI", "n");
		double ci = leap_get_num(r, "rel_ci", -1), bci = leap_get_num(r, "baseline_rel_ci", -1);
		printf("  %-10s %12.4f %12.4f %7.2f%% %7lld\n", "candidate", leap_get_num(r, "median_ms", 0),
		       leap_get_num(r, "min_ms", 0), ci < 0 ? NAN : 100 * ci, (long long)leap_get_int(r, "n", 0));
		printf("  %-10s %12.4f %12s %7.2f%% %7lld\n", "baseline", leap_get_num(r, "baseline_ms", 0), "",
		       bci < 0 ? NAN : 100 * bci, (long long)leap_get_int(r, "baseline_n", 0));
		const json_t *sci = json_object_get(r, "speedup_ci");
		double sp = leap_get_num(r, "speedup", 0), msp = leap_get_num(r, "measured_speedup", sp);
		printf("  %-10s %11.3fx", "speedup", sp);
		if (json_array_size(sci) == 2)
			printf("   measured %.3fx, 95%% interval %.3fx to %.3fx (+-%.2f%%)", msp,
			       json_number_value(json_array_get(sci, 0)), json_number_value(json_array_get(sci, 1)),
			       100 * leap_get_num(r, "speedup_rel_ci", 0));
		printf("\n");
	}
	if (t->module && json_object_get(r, "baseline_kind")) /* against torch, run one way or another */
		printf("  against %s\n", leap_get_str(r, "baseline_kind", "?"));
	printf("  %s\n", leap_get_str(r, "message", ""));
	int bad = strcmp(bst, "ok") != 0;
	json_decref(r);
	return bad;
}

/* Handles one of leap-bench's own timing options (struct leap_bench_opts): returns 1, or 0
 * when `opt` is not one of them. */
static int bench_option(struct ctx *c, struct leap_bench_opts *bo, int opt, const char *arg)
{
	int64_t v64;
	switch (opt) {
	case OPT_TARGET:
		if (leap_parse_double(arg, 1e-6, 1, &bo->target_ci[0]))
			leap_usage_error(&c->common, "--target-ci: '%s' is not a number in (0, 1]", arg);
		for (int b = 1; b < LEAP_NBACKENDS; b++) /* given: for every backend */
			bo->target_ci[b] = bo->target_ci[0];
		return 1;
	case OPT_MIN_RUNS:
		if (leap_parse_i64(arg, 1, LEAP_BENCH_RUNS_MAX, &v64))
			leap_usage_error(&c->common, "--min-runs: '%s' is not an integer in [1, %d]", arg,
					 LEAP_BENCH_RUNS_MAX);
		bo->min_runs = (long)v64;
		return 1;
	case OPT_MAX_RUNS:
		if (leap_parse_i64(arg, 1, LEAP_BENCH_RUNS_MAX, &v64))
			leap_usage_error(&c->common, "--max-runs: '%s' is not an integer in [1, %d]", arg,
					 LEAP_BENCH_RUNS_MAX);
		bo->max_runs = (long)v64;
		return 1;
	case OPT_MAX_TIME:
		if (leap_parse_seconds(arg, &bo->max_time) || bo->max_time > LEAP_BENCH_MAX_TIME_MAX)
			leap_usage_error(&c->common, "--max-time: '%s' is not a duration up to a day", arg);
		return 1;
	case OPT_POOL:
		if (leap_parse_size(arg, &v64) || v64 < (int64_t)LEAP_BENCH_POOL_MIB_MIN << 20)
			leap_usage_error(&c->common, "--pool-memory: '%s' is not a size of at least %dM", arg,
					 LEAP_BENCH_POOL_MIB_MIN);
		bo->pool_bytes = (uint64_t)v64;
		return 1;
	case OPT_CPUS:
		if (leap_candidate_cores(arg) < 0)
			leap_usage_error(&c->common, "--cpus: '%s' is not a list of CPUs this process may use", arg);
		bo->cpus = arg;
		return 1;
	case OPT_FREEZER:
		if (freezer_option(arg, bo))
			leap_usage_error(&c->common, "--freezer: '%s' is not auto, cgroup, cgroup1, cgroup2 or signals",
					 arg);
		return 1;
	case OPT_BLOCK_MS:
		if (leap_parse_double(arg, LEAP_BENCH_BLOCK_MS_MIN, LEAP_BENCH_BLOCK_MS_MAX, &bo->block_ms))
			leap_usage_error(&c->common, "--block-ms: '%s' is not a number in [%g, %g]", arg,
					 LEAP_BENCH_BLOCK_MS_MIN, (double)LEAP_BENCH_BLOCK_MS_MAX);
		return 1;
	case OPT_BTOL: { /* since the pairs (NEWS.md): accepted and checked, without effect */
		double unused;
		if (leap_parse_double(arg, 0, 1e6, &unused))
			leap_usage_error(&c->common, "--baseline-tolerance: '%s' is not a number >= 0", arg);
		return 1;
	}
	case OPT_HOT:
		bo->hot = 1;
		return 1;
	case OPT_BASELINE: /* module tasks' baseline, over each task's baseline_kind */
		if (strcmp(arg, LEAP_TORCH_EAGER) && strcmp(arg, LEAP_TORCH_COMPILE))
			leap_usage_error(&c->common, "--baseline: '%s' is not torch-eager or torch-compile", arg);
		bo->baseline = arg;
		return 1;
	case OPT_WALL:
		bo->wall_clock = 1;
		return 1;
	case OPT_NO_BCACHE:
		return 1;
	}
	return 0;
}

/* Times the records of files[0..nfiles) (standard input when nfiles is 0) one at a time,
 * or on each device of --devices at once, and writes them in input order. Returns the exit
 * status; a signal ends the run here (sig.h). */
static int stream(struct ctx *c, struct leap_sandbox_opts *sb, int nfiles, char **files)
{
	leap_out_init(&c->out, stdout);
	leap_progress_init(&c->progress, c->common.progress);
	leap_progress_input(&c->progress, nfiles, files);
	struct leap_in in;
	leap_in_init(&in, nfiles, files, stdout);
	in.on_signal = 1;
	json_t *rec;
	enum leap_read r;
	if (c->devs.n) {
		leap_sandbox_probe(&c->v.env, sb); /* once here, not once per worker */
		leap_pool_init(&c->pool, c->devs.n, &c->out, &c->progress, &c->errors, start, finish, c);
		if (leap_pool_run(&c->pool, &in))
			leap_pool_abort(&c->pool); /* a signal: workers and their sandboxes end */
		else
			leap_pool_free(&c->pool);
	}
	while (!c->devs.n && !leap_signal_caught() && (r = leap_in_next(&in, &rec)) != LEAP_READ_EOF) {
		if (r == LEAP_READ_BAD) {
			leap_out_write(&c->out, rec);
			c->errors++;
		} else {
			one(c, &in, rec);
		}
		json_decref(rec);
		c->done++;
		leap_progress_update(&c->progress, c->done, c->errors);
	}
	leap_progress_end(&c->progress);
	if (leap_signal_caught()) {
		/* SIGINT/SIGTERM/SIGHUP: the records written so far are whole lines, the
		 * sandboxes ended with their temp dirs; die of the signal */
		leap_bencher_stop(&c->bench);
		leap_out_close(&c->out);
		leap_signal_exit(leap_signal_caught());
	}
	int open_failed = in.open_failed;
	leap_in_close(&in);
	return leap_filter_exit(leap_out_close(&c->out), open_failed, c->errors);
}

/* The options of leap-bench, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"target-ci", 0, required_argument, "F", OPT_TARGET,
	 "the speedup's 95% interval half-width, relative to it, to reach;\n"
	 "a wider one is `noisy` (default " LEAP_BENCH_STR(LEAP_BENCH_TARGET_CPU) " on cpu, "
	 LEAP_BENCH_STR(LEAP_BENCH_TARGET_CUDA) " on cuda)"},
	{"min-runs", 0, required_argument, "N", OPT_MIN_RUNS,
	 "never fewer timed pairs of blocks (default " LEAP_BENCH_STR(LEAP_BENCH_MIN_RUNS) ")"},
	{"max-runs", 0, required_argument, "N", OPT_MAX_RUNS,
	 "never more timed pairs (default " LEAP_BENCH_STR(LEAP_BENCH_MAX_RUNS) ")"},
	{"max-time", 0, required_argument, "SECS", OPT_MAX_TIME,
	 "timing budget per record (default " LEAP_BENCH_STR(LEAP_BENCH_MAX_TIME) ")"},
	{"pool-memory", 0, required_argument, "SIZE", OPT_POOL,
	 "memory for the input pool: base sets, donors and a pair's sets,\n"
	 "with the baseline's outputs on them (default " LEAP_BENCH_STR(LEAP_BENCH_POOL_MIB) "M; on cuda\n"
	 "1/" LEAP_BENCH_STR(LEAP_BENCH_POOL_DEVICE_SHARE) " of the device's memory, at most 1/"
	 LEAP_BENCH_STR(LEAP_BENCH_POOL_HOST_SHARE) " of the host's, at least\n"
	 LEAP_BENCH_STR(LEAP_BENCH_POOL_MIB) "M); earlier tasks' pools are kept within "
	 LEAP_BENCH_STR(LEAP_BENCH_POOLS_KEPT) " times this in all"},
	{"cpus", 0, required_argument, "LIST", OPT_CPUS,
	 "the cores of candidate and baseline (e.g. 0-3; default: all the\n"
	 "CPUs leap-bench may use)"},
	{"freezer", 0, required_argument, "HOW", OPT_FREEZER,
	 "auto, cgroup, cgroup1, cgroup2 or signals (default auto: a cgroup\n"
	 "freezer, else SIGSTOP from the PID namespace's init)"},
	{"block-ms", 0, required_argument, "MS", OPT_BLOCK_MS,
	 "the length a block of calls aims at (default " LEAP_BENCH_STR(LEAP_BENCH_BLOCK_MS) "; shorter when\n"
	 "--max-time is small)"},
	{"wall-clock", 0, no_argument, NULL, OPT_WALL,
	 "cpu: time on the wall clock alone (default: less the time the\n"
	 "runner's processes all waited for a CPU others held, where the\n"
	 "kernel reports it: cgroup v2 cpu.pressure)"},
	{"hot", 0, no_argument, NULL, OPT_HOT, "cuda: do not flush the L2 cache between blocks (blocks of\n"
	 "one call)"},
	{"baseline", 0, required_argument, "KIND", OPT_BASELINE,
	 "module tasks: torch-eager or torch-compile (default: the task's\n"
	 "baseline_kind, else torch-eager)"},
	{"no-baseline-cache", 0, no_argument, NULL, OPT_NO_BCACHE, "no effect (leap 0.1; the baseline is timed in every pair)"},
	{"baseline-tolerance", 0, required_argument, "F", OPT_BTOL, "no effect (leap 0.1)"},
	LEAP_RUNOPT_TOL("the check of every timed call: task (default), kernelbench\n"
	                "(1e-4 fp32, 1e-2 half/bf16) or kernelbench-v0.1 (1e-2), as\n"
	                "leap-verify --tolerance"),
	LEAP_RUNOPT_SEED("seed of the inputs (default: random per run)"),
	LEAP_RUNOPT_TIMEOUT("the absolute bound of a record, from its runner's start to the\n"
	                    "verdict (default: max-time + " LEAP_BENCH_STR(LEAP_BENCH_TIMEOUT_PLUS) ")"),
	LEAP_RUNOPT_MEMORY("memory of a child's whole process tree (a memory cgroup), and\n"
	                   "each cpu process's address space, beyond the shared regions\n"
	                   "(default " LEAP_BENCH_STR(LEAP_BENCH_MEMORY_GIB) "G)"),
	LEAP_RUNOPT_DEVICE("CUDA device (default 0)"),
	LEAP_RUNOPT_DEVICES("time on each listed device at once (e.g. 0-7 or 0,2,5), one\n"
	                    "timing per device, output in input order; bench.device_index\n"
	                    "names it (cpu records: one timing at a time, the list as slots)"),
	LEAP_RUNOPT_NO_NS("no network, PID and mount isolation"),
	LEAP_RUNOPT_TASK("ad-hoc mode: the arguments are source files for TASK"),
	LEAP_RUNOPT_BACKEND("ad-hoc mode: cuda or cpu (default: from the file's extension;\n"
	                    "needed for '-')"),
	{"stats", 0, no_argument, NULL, OPT_STATS, "summarise samples read from the files or stdin"},
	LEAP_RUNOPT_CACHE("build, baseline and lock directory (default: $LEAP_CACHE, else\n"
	                  "$XDG_CACHE_HOME/leap, else ~/.cache/leap)"),
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
	struct leap_verify_opts o;
	leap_recjob_defaults(&o, LEAP_RECJOB_BENCH);
	struct leap_bench_opts bo;
	memset(&bo, 0, sizeof bo);
	leap_bench_defaults(&bo); /* every default of the timing: verdict.h */
	struct leap_runopts ro = {.o = &o, .devs = &c.devs};
	int do_stats = 0, opt;
	char *err = NULL;
	while ((opt = leap_common_getopt(&c.common, argc, argv)) != -1) {
		if (leap_common_option(&c.common, opt, optarg) || leap_runopts_option(&ro, &c.common, opt, optarg) ||
		    bench_option(&c, &bo, opt, optarg))
			continue;
		switch (opt) {
		case OPT_STATS:
			do_stats = 1;
			break;
		default:
			leap_usage_error(&c.common, "unknown option");
		}
	}
	if (bo.min_runs > bo.max_runs)
		leap_usage_error(&c.common, "--min-runs is larger than --max-runs");
	leap_runopts_check(&ro, &c.common, argc - optind);
	if (c.devs.n && (ro.have_device || ro.task || do_stats))
		leap_usage_error(&c.common, "--devices sets the devices: not with %s",
				 ro.task ? "--task" : do_stats ? "--stats" : "--device");
	if (do_stats)
		return stats(&c, argc - optind, argv + optind, &bo);
	if (o.sb.timeout <= 0)
		o.sb.timeout = bo.max_time + LEAP_BENCH_TIMEOUT_PLUS;
	c.seed = ro.have_seed ? ro.seed : leap_random_seed() & LEAP_SEED_MAX;
	char *dir = leap_tasks_dir(c.common.tasks);
	leap_suite_init(&c.suite, dir);
	struct leap_unseen_set hidden;
	leap_verify_setup(&o, ro.cache, dir, &hidden);
	free(dir);
	/* From here a signal ends the run in order: sandboxes killed, temp dirs removed, whole
	 * lines written (sig.h). */
	if (leap_signals_install())
		leap_die_errno("sigaction");
	leap_verifier_init(&c.v, &o);
	if (leap_bencher_init(&c.bench, &c.v, &bo, &err))
		leap_die("%s; leap-bench does not time a candidate it cannot freeze (see --freezer)", err);
	int rc;
	if (ro.task) {
		rc = leap_hand_check(&c.v, &c.suite, ro.task, ro.backend, c.seed, argc - optind, argv + optind, adhoc_time, &c);
	} else {
		rc = stream(&c, &o.sb, argc - optind, argv + optind);
	}
	leap_bencher_free(&c.bench);
	leap_verifier_free(&c.v);
	leap_suite_free(&c.suite);
	leap_devices_free(&c.devs);
	free(o.libexec);
	free(o.cache);
	leap_unseen_set_free(&hidden);
	return rc;
}
