/* leap-task - list, describe and validate tasks: the task loader as a command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/cli.h"
#include "core/jsonl.h"
#include "task/modimport.h"
#include "compile/shim.h"
#include "task/task.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-task [OPTION]... TASK...\n"
	"   or: leap-task [OPTION]... [--suite NAME] --all\n"
	"   or: leap-task [OPTION]... --check DIR...\n"
	"   or: leap-task [OPTION]... --suites\n"
	"   or: leap-task [OPTION]... --import SUITE_DIR SOURCE...\n"
	"\n"
	"Describe tasks as JSON Lines: id, level, title, folder, entry point, the C and CUDA\n"
	"prototypes, parameters, cases and the benchmark case with buffer sizes and the bytes/flops\n"
	"of one call, the ranges of drawn cases, the precision class, the libraries a candidate may\n"
	"use and the baseline's kind and libraries. A TASK is an id of the suite or a task folder\n"
	"(a path with a '/', such as ./my_task or tasks/softmax). With --check, validate task\n"
	"folders given as paths and write one record per folder; an invalid task gets an error\n"
	"record naming file, field and problem. The task root holds suites: leap's own tasks\n"
	"(suite leap) and suite folders such as kernelbench-l1; an id is found in any of them,\n"
	"--all lists one (leap's own unless --suite names another), --suites names them.\n"
	"With --import, make module tasks in SUITE_DIR from PyTorch module files in KernelBench's\n"
	"form (a .py file, a folder of them, or JSON Lines of {\"id\", \"source\"}), torch deriving\n"
	"each task.json ($LEAP_TORCH_PYTHON); a module that is no fair task gets an error record\n"
	"saying why (a hub download, a random forward, an output that ignores the inputs).\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 every task valid, 1 some task invalid or not found, 2 usage or fatal error\n"
	"(a folder that is not there included).\n";

/* A task argument names a folder when it is a path (has a '/', or is . or ..), else an id. */
static int is_folder(const char *arg)
{
	return strchr(arg, '/') || !strcmp(arg, ".") || !strcmp(arg, "..");
}

enum { OPT_DRAW = LEAP_OPT_PRIVATE, OPT_SEED, OPT_SUITE, OPT_SUITES, OPT_IMPORT };

static json_t *case_with_sizes(const struct leap_task *t, const struct leap_case *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "values", leap_case_json(t, c));
	int64_t *sizes = xcalloc(t->nparams, sizeof(int64_t));
	char *err = NULL;
	if (leap_task_sizes(t, c, sizes, &err) == 0) {
		json_t *sz = json_object();
		for (size_t i = 0; i < t->nparams; i++)
			if (t->params[i].role != LEAP_ROLE_SCALAR)
				json_object_set_new(sz, t->params[i].name, json_integer(sizes[i]));
		json_object_set_new(o, "sizes", sz);
	}
	free(err);
	free(sizes);
	int64_t v;
	if (leap_task_eval(t, t->bytes, c, &v) == 0)
		json_object_set_new(o, "bytes", json_integer(v));
	if (leap_task_eval(t, t->flops, c, &v) == 0)
		json_object_set_new(o, "flops", json_integer(v));
	return o;
}

static json_t *describe(const struct leap_task *t, int draw, uint64_t seed)
{
	json_t *params = json_array();
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		json_t *pj = json_pack("{s:s,s:s,s:s}", "name", p->name, "type", leap_type_name(p->type), "role",
				       leap_role_name(p->role));
		if (p->role != LEAP_ROLE_SCALAR) {
			json_object_set_new(pj, "size", json_string(leap_expr_source(p->size)));
			if (p->init) { /* a module's parameter: its runs as task.json has them, a table's
					* values counted, not listed (a window attention's: 10^5 of them) */
				json_t *runs = json_deep_copy(json_object_get(json_array_get(json_object_get(t->json, "params"), i),
									      "init"));
				size_t k;
				json_t *r;
				json_array_foreach(runs, k, r)
					if (json_object_get(r, "values"))
						json_object_set_new(r, "values", json_integer((json_int_t)p->init[k].nvalues));
				json_object_set_new(pj, "init", runs);
			} else if (leap_type_is_float(p->type)) {
				json_t *d = json_array();
				for (unsigned b = 1; b <= LEAP_DIST_LAST; b <<= 1)
					if (p->dists & b)
						json_array_append_new(d, json_string(leap_dist_name(b)));
				json_object_set_new(pj, "dist", d);
			} else {
				json_object_set_new(pj, "range", json_pack("[I,I]", (json_int_t)p->lo, (json_int_t)p->hi));
			}
		}
		json_array_append_new(params, pj);
	}
	json_t *cases = json_array();
	for (size_t i = 0; i < t->ncases; i++)
		json_array_append_new(cases, case_with_sizes(t, &t->cases[i]));
	json_t *protos = json_object();
	for (int b = LEAP_NBACKENDS - 1; b >= 0; b--) { /* cpu first, the order leap-task has always printed */
		char *pb = leap_task_prototype(t, (enum leap_backend)b);
		json_object_set_new(protos, leap_backend_name((enum leap_backend)b), json_string(pb));
		free(pb);
	}
	json_t *o = json_pack("{s:s,s:i,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:f,s:f}", "id", t->id, "level",
			      t->level, "title", t->title, "dir", t->dir, "entry", t->entry, "prototype", protos,
			      "params", params, "cases", cases, "bench",
			      case_with_sizes(t, &t->bench), "bench_cpu", case_with_sizes(t, &t->bench_cpu),
			      "atol", t->atol, "rtol", t->rtol);
	if (o && t->suite)
		json_object_set_new(o, "suite", json_string(t->suite));
	if (!o)
		leap_die("cannot describe task '%s'", t->id);
	json_object_set_new(o, "precision", json_string(leap_precision_name(t->precision)));
	json_t *libs = json_array(), *blibs = json_array();
	for (unsigned i = 0; i < LEAP_LIB_COUNT; i++) {
		if (t->libraries & (1u << i))
			json_array_append_new(libs, json_string(leap_library_name(1u << i)));
		if (t->baseline_libraries & (1u << i))
			json_array_append_new(blibs, json_string(leap_library_name(1u << i)));
	}
	json_object_set_new(o, "libraries", libs);
	json_t *fams = json_array(); /* what the loader proved each family's hard region is drawn */
	for (size_t i = 0; leap_family_at(i); i++)
		if (t->families & (1u << i))
			json_array_append_new(fams, json_string(leap_family_at(i)->name));
	json_object_set_new(o, "families", fams);
	json_object_set_new(o, "baseline_kind", json_string(t->baseline_vendor ? "vendor" : "kernel"));
	json_object_set_new(o, "baseline_libraries", blibs);
	json_object_set_new(o, "ranges", leap_task_ranges_json(t));
	json_object_set_new(o, "ranges_derived", json_boolean(t->ranges_derived));
	if (t->residue_mod)
		json_object_set_new(o, "residues",
				    json_pack("{sI}", t->params[t->residue_param].name, (json_int_t)t->residue_mod));
	if (draw) {
		json_t *d = json_array();
		for (int k = 0; k < draw; k++) {
			struct leap_case c;
			if (leap_task_draw_case(t, seed, (size_t)k, &c))
				break;
			json_array_append_new(d, case_with_sizes(t, &c));
			free(c.vals);
		}
		json_object_set_new(o, "drawn", d);
	}
	return o;
}

/* --shim BACKEND: prints the prelude and the shim of task `id` (a suite id or a folder). */
static void print_shim(const struct leap_common *common, struct leap_suite *suite, const char *shim, const char *id)
{
	enum leap_backend b;
	if (leap_backend_parse(shim, &b))
		leap_usage_error(common, "--shim: '%s' is not cuda or cpu", shim);
	char *err = NULL;
	struct leap_task *owned = is_folder(id) ? leap_task_load(id, &err) : NULL;
	const struct leap_task *t = owned ? owned : err ? NULL : leap_suite_get(suite, id, &err);
	if (!t)
		leap_die("%s", err);
	char *pre = leap_shim_prelude(t, b), *src = leap_shim_source(t, b);
	printf("/* ---- prelude ---- */\n%s/* ---- shim ---- */\n%s", pre, src);
	free(pre);
	free(src);
	leap_task_free(owned);
}

/* --suites: the names of the root's suites, one per line. */
static int print_suites(struct leap_suite *suite)
{
	char **names = NULL, *err = NULL;
	long n = leap_suite_names(suite, &names, &err);
	if (n < 0)
		leap_die("%s", err);
	for (long i = 0; i < n; i++) {
		printf("%s\n", names[i]);
		free(names[i]);
	}
	free(names);
	leap_suite_free(suite);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		leap_warn_errno("write error");
		return LEAP_EXIT_FATAL;
	}
	return LEAP_EXIT_OK;
}

/* --import: one record per module, the task's description or an error record saying why it
 * was refused. */
static int import_modules(const char *suite, char *const *sources, int n)
{
	char *err = NULL;
	json_t *res = leap_module_import(suite, sources, n, &err);
	if (!res)
		leap_die("--import: %s", err);
	struct leap_out out;
	leap_out_init(&out, stdout);
	long refused = 0;
	size_t i;
	json_t *r;
	json_array_foreach(res, i, r) {
		const char *id = json_string_value(json_object_get(r, "task"));
		const char *why = json_string_value(json_object_get(r, "refused"));
		struct leap_task *t = why ? NULL : leap_task_load(json_string_value(json_object_get(r, "dir")), &err);
		json_t *rec;
		if (t) {
			rec = describe(t, 0, 0);
		} else {
			rec = leap_error_record(NULL, 0, NULL, 0, "%s: refused: %s", id, why ? why : err);
			json_object_set_new(rec, "task", json_string(id));
			json_object_set_new(rec, "refused", json_string(why ? why : err));
			refused++;
		}
		leap_out_write(&out, rec);
		json_decref(rec);
		leap_task_free(t);
		free(err);
		err = NULL;
	}
	json_decref(res);
	int rc = leap_out_close(&out);
	return rc ? rc : refused ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}

/* The options of leap-task, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"all", 'a', no_argument, NULL, 0, "every task of the suite, sorted by id"},
	{"check", 'c', no_argument, NULL, 0, "the arguments are task folders to validate"},
	{"list", 'l', no_argument, NULL, 0,
	 "print only the ids, one per line (plain text); alone: the suite's"},
	{"shim", 's', required_argument, "BACKEND", 0,
	 "print the generated prelude and shim sources of one task (text)"},
	{"draw", 0, required_argument, "N", OPT_DRAW,
	 "add `drawn`: the first N cases leap-verify draws with --seed"},
	{"seed", 0, required_argument, "N", OPT_SEED, "the seed of --draw (default 0)"},
	{"suite", 0, required_argument, "NAME", OPT_SUITE,
	 "the suite --all lists and task ids are looked up in (leap: leap's\n"
	 "own tasks, the default of --all; kernelbench-l1, kernelbench-l2, ...)"},
	{"suites", 0, no_argument, NULL, OPT_SUITES,
	 "print the names of the task root's suites, one per line (plain text)"},
	{"import", 0, required_argument, "SUITE_DIR", OPT_IMPORT,
	 "make module tasks in SUITE_DIR from the PyTorch modules the\n"
	 "arguments hold (files, folders, JSON Lines files)"},
	LEAP_OPTS_TASKS,
	LEAP_OPTS_PROGRESS("accepted as by every leap program (leap-task is quick\n"
	                   "and draws no progress line)"),
	LEAP_OPTS_HELP_VERSION,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

int main(int argc, char **argv)
{
	struct leap_common common;
	leap_common_init(&common, &usage);
	int all = 0, check = 0, list = 0, draw = 0, suites = 0, opt;
	int64_t seed = 0;
	const char *shim = NULL, *suite_name = NULL, *import = NULL;
	while ((opt = leap_common_getopt(&common, argc, argv)) != -1) {
		if (leap_common_option(&common, opt, optarg))
			continue;
		switch (opt) {
		case 'a':
			all = 1;
			break;
		case 'c':
			check = 1;
			break;
		case 'l':
			list = 1;
			break;
		case 's':
			shim = optarg;
			break;
		case OPT_DRAW:
			if (leap_parse_int(optarg, 0, 1000, &draw))
				leap_usage_error(&common, "--draw: '%s' is not an integer in [0, 1000]", optarg);
			break;
		case OPT_SEED:
			if (leap_parse_i64(optarg, 0, ((int64_t)1 << 53) - 1, &seed))
				leap_usage_error(&common, "--seed: '%s' is not an integer in [0, 2^53)", optarg);
			break;
		case OPT_SUITE:
			suite_name = optarg;
			break;
		case OPT_SUITES:
			suites = 1;
			break;
		case OPT_IMPORT:
			import = optarg;
			break;
		default:
			leap_usage_error(&common, "unhandled option");
		}
	}
	if (import && (all || check || list || shim || suites || optind >= argc))
		leap_usage_error(&common, "--import takes module sources and no other listing");
	if (import)
		return import_modules(import, argv + optind, argc - optind);
	if (suites && (all || check || list || shim || optind < argc))
		leap_usage_error(&common, "--suites takes no task and no other listing");
	if (list && !all && !check && optind >= argc)
		all = 1; /* --list alone: the suite */
	if (all + check > 1 || (all && optind < argc))
		leap_usage_error(&common, "give task ids, --all or --check DIR..., not several of them");
	if (!all && !suites && optind >= argc)
		leap_usage_error(&common, check ? "--check needs task folders" : "no tasks given (name them, or use --all)");
	if (shim && (all || check || list || argc - optind != 1))
		leap_usage_error(&common, "--shim takes exactly one task id");
	if (list && check)
		leap_usage_error(&common, "--list does not combine with --check");

	char *dir = leap_tasks_dir(common.tasks);
	struct leap_suite suite;
	leap_suite_init(&suite, dir);
	free(dir);
	char *serr = NULL;
	if (suite_name && leap_suite_select(&suite, suite_name, &serr))
		leap_usage_error(&common, "--suite: %s", serr);
	if (suites)
		return print_suites(&suite);
	struct leap_out out;
	leap_out_init(&out, stdout);
	long errors = 0, missing = 0;
	char **ids = NULL;
	long n = 0;
	if (all) {
		char *err = NULL;
		n = leap_suite_list(&suite, &ids, &err);
		if (n < 0)
			leap_die("%s", err);
	}
	if (shim) {
		print_shim(&common, &suite, shim, argv[optind]);
		leap_suite_free(&suite);
		return leap_out_close(&out);
	}
	long count = all ? n : argc - optind;
	for (long i = 0; i < count; i++) {
		const char *arg = all ? ids[i] : argv[optind + i];
		char *err = NULL;
		struct leap_task *owned = NULL;
		int folder = check || (!all && is_folder(arg));
		struct stat st;
		if (folder && stat(arg, &st)) { /* a folder that is not there: an unreadable input */
			leap_warn_errno("%s", arg);
			missing++;
			continue;
		}
		const struct leap_task *t = folder ? (owned = leap_task_load(arg, &err)) : leap_suite_get(&suite, arg, &err);
		if (!t) {
			leap_warn("%s", err);
			json_t *rec = leap_error_record(NULL, 0, NULL, 0, "%s", err);
			json_object_set_new(rec, check ? "dir" : "task", json_string(arg));
			if (!list)
				leap_out_write(&out, rec);
			json_decref(rec);
			free(err);
			errors++;
		} else if (list) {
			leap_out_raw(&out, t->id, strlen(t->id));
		} else {
			json_t *rec = describe(t, draw, (uint64_t)seed);
			leap_out_write(&out, rec);
			json_decref(rec);
		}
		leap_task_free(owned);
	}
	for (long i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	leap_suite_free(&suite);
	int rc = leap_out_close(&out);
	return rc ? rc : missing ? LEAP_EXIT_FATAL : errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
