/* leap-prompt - emit the turn-1 records (one per task and sample) that start a rollout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "prompt/adaptive.h"
#include "core/jsonl.h"
#include "prompt/prompt.h"
#include "core/record.h"
#include "task/task.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-prompt [OPTION]... TASK...\n"
	"   or: leap-prompt [OPTION]... [--suite NAME] --all\n"
	"   or: leap-prompt [OPTION]... --file FILE\n"
	"\n"
	"Write one turn-1 record per task and sample: task, group, sample, turn, backend and the\n"
	"chat messages (system + user) that state the task, the exact prototype, the inputs and\n"
	"sizes, the tolerance, the machine (cores or GPU), the compiler and flags leap-compile\n"
	"uses, how speed is measured and the answer format. --all takes every task of one suite:\n"
	"leap's own (leap) unless --suite names another, such as kernelbench-l1.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 all records written, 1 some task could not be loaded (an error record was\n"
	"written for it), 2 usage or fatal error.\n";

enum { OPT_GROUP_PREFIX = LEAP_OPT_PRIVATE, OPT_SYSTEM, OPT_LEVEL, OPT_SKIP_FROM, OPT_SKIP_AFTER, OPT_REVISIT, OPT_SEED,
       OPT_DEVICE_INFO, OPT_TOL, OPT_SUITE };

struct ctx {
	struct leap_common common;
	struct leap_suite suite;
	struct leap_out out;
	struct leap_progress progress;
	enum leap_backend backend;
	long group_size;
	const char *prefix;
	char *system;
	struct leap_prompt_machine machine; /* the facts every prompt states */
	int level;
	long done, errors;
	/* --skip-from */
	struct leap_adaptive *state;
	long skip_after, skipped;
	double revisit;
	unsigned long seed;
};

/* Emits the records of one task id; `where`/`line` locate the id for messages. */
static void emit_task(struct ctx *c, const char *id, const char *where, long line)
{
	char *err = NULL;
	const struct leap_task *t = leap_suite_get(&c->suite, id, &err);
	if (!t) {
		if (line > 0)
			leap_warn("%s:%ld: %s", where, line, err);
		else
			leap_warn("%s", err);
		json_t *rec = leap_error_record(line > 0 ? where : NULL, line, NULL, 0, "%s", err);
		json_object_set_new(rec, "task", json_string(id));
		leap_out_write(&c->out, rec);
		json_decref(rec);
		free(err);
		c->errors++;
		return;
	}
	if (c->state && leap_adaptive_skip(c->state, t->id, c->skip_after, c->revisit, c->seed)) {
		c->skipped++;
		return;
	}
	char *user = leap_prompt_user(t, c->backend, &c->machine);
	char *group = xasprintf("%s%s", c->prefix ? c->prefix : "", t->id);
	const char *system = c->system ? c->system : leap_prompt_system(c->backend);
	for (long s = 0; s < c->group_size; s++) {
		json_t *rec = json_pack("{s:s,s:s,s:I,s:i,s:s,s:o,s:i}", "task", t->id, "group", group, "sample",
					(json_int_t)s, "turn", 1, "backend", leap_backend_name(c->backend),
					"messages", leap_prompt_messages(system, user), "record_version", LEAP_RECORD_VERSION);
		if (!rec)
			leap_die("cannot build a record for task '%s'", t->id);
		leap_out_write(&c->out, rec);
		json_decref(rec);
		leap_progress_update(&c->progress, ++c->done, c->errors);
	}
	free(group);
	free(user);
}

static void emit_file(struct ctx *c, const char *path)
{
	FILE *fp = strcmp(path, "-") ? fopen(path, "r") : stdin;
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	if (!fp || leap_fp_is_dir(fp))
		leap_die_errno("%s", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	while ((n = getline(&line, &cap, fp)) >= 0) {
		lineno++;
		char *p = line, *e = line + n;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = '\0';
		if (p == e || *p == '#')
			continue;
		emit_task(c, p, name, lineno);
	}
	if (ferror(fp))
		leap_die_errno("%s: read error", name);
	free(line);
	if (fp != stdin)
		fclose(fp);
}

static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		leap_die_errno("%s", path);
	struct leap_buf b = {0};
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		leap_buf_add(&b, chunk, n);
	if (ferror(fp))
		leap_die_errno("%s: read error", path);
	fclose(fp);
	while (b.len && (b.s[b.len - 1] == '\n' || b.s[b.len - 1] == '\r'))
		b.s[--b.len] = '\0';
	if (!b.len)
		leap_die("%s: the system message is empty", path);
	struct leap_buf clean = {0};
	leap_utf8_sanitize(&clean, b.s, b.len);
	leap_buf_free(&b);
	if (memchr(clean.s, '\0', clean.len))
		leap_die("%s: the system message holds a NUL byte", path);
	return leap_buf_detach(&clean);
}

/* Exits with a usage error unless the tasks come from exactly one of: ids (nids of them),
 * --all, --file; --level goes with --all. */
static void check_sources(const struct ctx *c, int all, const char *file, int nids)
{
	int nsrc = (all != 0) + (file != NULL) + (nids > 0);
	if (nsrc == 0)
		leap_usage_error(&c->common, "no tasks given (name them, or use --all or --file)");
	if (nsrc > 1)
		leap_usage_error(&c->common, "give task ids, --all or --file, not several of them");
	if (c->level && !all)
		leap_usage_error(&c->common, "--level applies to --all");
}

/* --all: writes the prompts of every task of the suite (of --level when given). */
static void emit_all(struct ctx *c)
{
	char **ids = NULL, *err = NULL;
	long n = leap_suite_list(&c->suite, &ids, &err);
	if (n < 0)
		leap_die("%s", err);
	/* "in suite 'kernelbench-l1' of DIR" when --suite named one, else "in DIR" */
	char *where = c->suite.only ? xasprintf("suite '%s' of %s", c->suite.only, c->suite.dir) : xstrdup(c->suite.dir);
	if (n == 0 && !c->suite.only)
		leap_die("%s: no tasks found", where);
	if (n == 0)
		leap_die("no tasks found in %s", where);
	unsigned levels = 0; /* bit L: a task of level L exists */
	long matched = 0;
	for (long i = 0; i < n; i++) {
		char *e2 = NULL;
		const struct leap_task *t = c->level ? leap_suite_get(&c->suite, ids[i], &e2) : NULL;
		free(e2);
		if (t && t->level >= 0 && t->level < 32)
			levels |= 1u << t->level;
		if (!c->level || !t || t->level == c->level)
			emit_task(c, ids[i], NULL, 0), matched++;
		free(ids[i]);
	}
	free(ids);
	if (!matched) {
		struct leap_buf have = {0};
		for (int l = 0; l < 32; l++)
			if (levels & (1u << l))
				leap_buf_addf(&have, "%s%d", have.len ? ", " : "", l);
		leap_die("--level %d: no task of that level in %s (its levels: %s)", c->level, where,
			 have.len ? have.s : "none");
	}
	free(where);
}

/* Opens the task suite (--suite: one suite of the root) and learns the machine the prompts
 * describe: the backend (the default when none was given), its compiler and flags, the GPU
 * (--device-info FILE). */
static void setup_machine(struct ctx *c, const char *suite, const char *device_file, enum leap_tolerance tol)
{
	char *dir = leap_tasks_dir(c->common.tasks);
	leap_suite_init(&c->suite, dir);
	free(dir);
	char *serr = NULL;
	if (suite && leap_suite_select(&c->suite, suite, &serr))
		leap_usage_error(&c->common, "--suite: %s", serr);
	if ((int)c->backend < 0) {
		char said[256];
		c->backend = leap_backend_default(said, sizeof said);
		leap_warn("%s", said);
	}
	char *merr = NULL;
	if (leap_prompt_machine_probe(&c->machine, c->backend, device_file, &merr))
		leap_die("--device-info: %s", merr);
	c->machine.tolerance = tol;
	if (!c->machine.have_tc)
		leap_warn("the %s compiler was not found: the prompts name no compiler or flags",
			  leap_backend_name(c->backend));
	if (leap_backend_of(c->backend)->device_facts && !leap_get_str(c->machine.gpu, "name", NULL))
		leap_warn("the prompts name no GPU (model, SMs, memory): give --device-info FILE");
}

/* The options of leap-prompt, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"group-size", 'g', required_argument, "G", 0, "samples per task, the GRPO group size (default 1)"},
	{"all", 'a', no_argument, NULL, 0, "every task of the suite, sorted by id"},
	{"suite", 0, required_argument, "NAME", OPT_SUITE,
	 "the suite --all and --level take, and the only one task ids are\n"
	 "looked up in: leap (the default for --all: leap's own tasks),\n"
	 "kernelbench-l1, kernelbench-l2 or another folder of the task root"},
	{"file", 'f', required_argument, "FILE", 0,
	 "read task ids from FILE, one per line ('-': stdin; # comments)"},
	{"backend", 'b', required_argument, "NAME", 0,
	 "cuda or cpu (default: cuda where a CUDA device is usable, else\n"
	 "cpu; the choice is said on stderr)"},
	{"group-prefix", 0, required_argument, "P", OPT_GROUP_PREFIX,
	 "group key is P followed by the task id (e.g. 'step7/')"},
	{"system", 0, required_argument, "FILE", OPT_SYSTEM, "use the text of FILE as the system message"},
	{"device-info", 0, required_argument, "FILE", OPT_DEVICE_INFO,
	 "the machine the candidates run on, as a JSON object: cores,\n"
	 "cpu_model, cpu_caches, cpu_flags; for cuda the GPU's name, sm_count,\n"
	 "compute_capability, arch, memory_bytes, l2_bytes (default:\n"
	 "this machine's CPUs; the GPU is then not named)"},
	{"tolerance", 0, required_argument, "MODE", OPT_TOL,
	 "the tolerance the prompt states: task (default), kernelbench\n"
	 "(1e-4 fp32, 1e-2 half/bf16) or kernelbench-v0.1 (1e-2), as given\n"
	 "to leap-verify"},
	{"level", 0, required_argument, "N", OPT_LEVEL, "with --all: only tasks of level N"},
	{"skip-from", 0, required_argument, "STATE", OPT_SKIP_FROM,
	 "skip tasks that leap-prune --adaptive STATE found easy or\n"
	 "hopeless in --skip-after consecutive steps, except with\n"
	 "probability --revisit, so that they are seen again"},
	{"skip-after", 0, required_argument, "K", OPT_SKIP_AFTER,
	 "consecutive easy or hopeless steps before a skip (default 3)"},
	{"revisit", 0, required_argument, "P", OPT_REVISIT,
	 "probability of keeping a task that would be skipped (default 0.1)"},
	{"seed", 0, required_argument, "N", OPT_SEED,
	 "seed of those draws (default: the state's run count)"},
	LEAP_OPTS_TASKS,
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

int main(int argc, char **argv)
{
	struct ctx c = {.group_size = 1, .backend = -1, .skip_after = 3, .revisit = 0.1};
	const char *skip_from = NULL;
	int seed_given = 0;
	leap_common_init(&c.common, &usage);
	int all = 0, opt;
	const char *file = NULL, *system_file = NULL, *device_file = NULL, *suite = NULL;
	enum leap_tolerance tol = LEAP_TOL_TASK;
	while ((opt = leap_common_getopt(&c.common, argc, argv)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		int64_t v;
		switch (opt) {
		case 'g':
			c.group_size = leap_group_size_option(&c.common, optarg);
			break;
		case 'a':
			all = 1;
			break;
		case 'f':
			file = optarg;
			break;
		case 'b':
			if (leap_backend_parse(optarg, &c.backend))
				leap_usage_error(&c.common, "--backend: '%s' is not cuda or cpu", optarg);
			break;
		case OPT_GROUP_PREFIX:
			c.prefix = optarg;
			break;
		case OPT_SYSTEM:
			system_file = optarg;
			break;
		case OPT_LEVEL:
			if (leap_parse_int(optarg, 1, 9, &c.level))
				leap_usage_error(&c.common, "--level: '%s' is not an integer from 1 to 9", optarg);
			break;
		case OPT_SKIP_FROM:
			skip_from = optarg;
			break;
		case OPT_SKIP_AFTER:
			if (leap_parse_i64(optarg, 1, 1 << 30, &v))
				leap_usage_error(&c.common, "--skip-after: '%s' is not an integer >= 1", optarg);
			c.skip_after = (long)v;
			break;
		case OPT_REVISIT:
			if (leap_parse_double(optarg, 0, 1, &c.revisit))
				leap_usage_error(&c.common, "--revisit: '%s' is not a probability", optarg);
			break;
		case OPT_DEVICE_INFO:
			device_file = optarg;
			break;
		case OPT_TOL:
			if (leap_tolerance_parse(optarg, &tol))
				leap_usage_error(&c.common, "--tolerance: '%s' is not " LEAP_TOLERANCE_NAMES, optarg);
			break;
		case OPT_SUITE:
			suite = optarg;
			break;
		case OPT_SEED:
			if (leap_parse_i64(optarg, 0, INT64_MAX, &v))
				leap_usage_error(&c.common, "--seed: '%s' is not an integer >= 0", optarg);
			c.seed = (unsigned long)v;
			seed_given = 1;
			break;
		default:
			leap_usage_error(&c.common, "unhandled option");
		}
	}
	check_sources(&c, all, file, argc - optind);
	if (system_file)
		c.system = read_text(system_file);
	setup_machine(&c, suite, device_file, tol);
	struct leap_adaptive state;
	if (skip_from) {
		char *err = NULL;
		if (leap_adaptive_load(skip_from, 0.5, 0.05, 0.5, &state, &err))
			leap_die("%s", err);
		c.state = &state;
		if (!seed_given)
			c.seed = (unsigned long)state.runs;
	}

	leap_out_init(&c.out, stdout);
	leap_progress_init(&c.progress, c.common.progress);

	if (all) {
		emit_all(&c);
	} else if (file) {
		emit_file(&c, file);
	} else {
		for (int i = optind; i < argc; i++)
			emit_task(&c, argv[i], NULL, 0);
	}
	leap_progress_end(&c.progress);
	if (c.state) {
		if (c.skipped)
			leap_warn("skipped %ld task%s easy or hopeless in %ld consecutive steps (%s)", c.skipped,
				  c.skipped == 1 ? "" : "s", c.skip_after, skip_from);
		leap_adaptive_free(c.state);
	}
	int rc = leap_out_close(&c.out);
	leap_suite_free(&c.suite);
	leap_prompt_machine_free(&c.machine);
	free(c.system);
	if (rc)
		return rc;
	return c.errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
