/* leap-prune - Difficulty-Conditioned Pruning: end easy and hopeless groups, send the rest a turn on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cli.h"
#include "prompt/adaptive.h"
#include "group/dcp.h"
#include "group/group.h"
#include "core/hmap.h"
#include "group/lines.h"
#include "group/gstream.h"
#include "core/jsonl.h"
#include "group/prune.h"
#include "core/record.h"
#include "group/splice.h"
#include "group/rerun.h"
#include "group/scan.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-prune [OPTION]... --done FILE [FILE]...\n"
	"   or: leap-prune [OPTION]... --annotate [FILE]...\n"
	"\n"
	"Decide each GRPO group after a turn (Difficulty-Conditioned Pruning, as the LEAP paper:\n"
	"once, from the group's first turn). With n records in the group and n_fail of them not\n"
	"passing: easy when n_fail < --easy-below, hopeless when n_fail > --hopeless-above (or every\n"
	"record failed with a --catastrophic status), otherwise expand: failed records get another\n"
	"turn with lean feedback, passed ones end. Next-turn records carry the verdict (`dcp`), so\n"
	"an expanded group's failures keep their turns until they pass or reach --max-turns.\n"
	"Every input record is appended to the done file with its 'prune' decision; each record\n"
	"that gets another turn also yields its next-turn record on stdout. A record the done file\n"
	"already held when leap-prune started (a re-run turn) keeps that decision and is not\n"
	"written again; a second record of a (group, sample, turn) becomes an error record.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 all records decided, 1 some records carried an error (they were written\n"
	"to the done file, or stdout with --annotate), 2 usage or fatal error.\n";

enum { OPT_ANNOTATE = LEAP_OPT_PRIVATE, OPT_EXPAND_SLOW, OPT_STATS, OPT_ADAPTIVE, OPT_TARGET, OPT_ADAPT_STEP,
       OPT_REGATE };

struct ctx {
	struct leap_common common;
	struct leap_prune_opts opts;
	struct leap_out out;
	struct leap_lines done;
	int use_done;
	struct leap_progress progress;
	struct leap_buf line;
	long group_size;
	int stats;
	/* --adaptive: this run's turn-1 results */
	const char *adaptive;
	double target, adapt_step;
	long t1_decided, t1_pruned;
	json_t *verdicts; /* task -> verdict of all its turn-1 groups ("expand" when mixed) */
	struct leap_buf task;
	long records, errors, groups[3], final, expanded, incomplete;
	struct leap_hmap said;    /* reasons of undecided records warned about -> index in `reasons` */
	struct said_reason {
		char *where;          /* "file:line" of the first record with it */
		long more;            /* records after it with the same reason */
	} *reasons;
	size_t nreasons, capreasons;
	struct leap_rerun rerun;  /* the done file's earlier decisions */
	long kept, dups;          /* records decided by an earlier run; duplicates in the input */
	struct leap_buf dcp;      /* a next-turn record with its `dcp` */
};

/* Writes a decided record (its line in c->line, newline included) where decided records go. */
static void put_decided(struct ctx *c)
{
	if (c->use_done)
		leap_lines_add(&c->done, c->line.s, c->line.len);
	else
		leap_out_raw(&c->out, c->line.s, c->line.len - 1);
}

/* Writes an error record (taking the reference) where decided records go. */
static void put_error(struct ctx *c, json_t *rec)
{
	leap_buf_reset(&c->line);
	if (leap_json_append(&c->line, rec))
		leap_die("cannot serialise a record");
	leap_buf_add(&c->line, "\n", 1);
	json_decref(rec);
	put_decided(c);
	c->errors++;
}

/* Records a turn-1 group's verdict for the adaptive state. */
static void note_turn1(struct ctx *c, const struct leap_group *grp, enum leap_verdict v)
{
	c->t1_decided++;
	c->t1_pruned += v != LEAP_VERDICT_EXPAND;
	const struct leap_member *m = &grp->m[0];
	struct leap_span sp = {m->raw + m->task_off, m->task_len};
	if (!m->task_len || leap_span_str(sp, &c->task) || memchr(c->task.s, '\0', c->task.len))
		return;
	const char *name = leap_verdict_name(v);
	const char *old = json_string_value(json_object_get(c->verdicts, c->task.s));
	if (old && strcmp(old, name))
		name = "expand";
	json_object_set_new(c->verdicts, c->task.s, json_string(name));
}

/* Writes member m (taking its memory) as an error record naming the first record of its
 * (group, sample, turn), read at file:line (lib/group/dcp.h: leap_dcp_dup_fn). */
static void put_dup(void *arg, const char *group, struct leap_member *m, const char *file, long line)
{
	struct ctx *c = arg;
	char *why = leap_dup_message(group, m->sample, m->turn, file, line);
	leap_warn("%s:%ld: %s", m->file, m->line, why);
	leap_member_error_line(&c->line, m, why);
	put_decided(c);
	free(why);
	leap_member_clear(m);
	c->errors++;
	c->dups++;
}

/* Writes the next-turn record of member m with the gate carried in `dcp`. */
static void put_next(struct ctx *c, const struct leap_member *m, long n_expand, const struct leap_gate *g)
{
	leap_buf_reset(&c->line);
	if (leap_next_turn_line(&c->line, m->raw, m->len, m->status, m->turn, n_expand, &c->opts))
		leap_die("internal error: a held record is not an object");
	json_t *add = json_pack("{s:{s:s,s:I,s:I,s:I}}", "dcp", "verdict", leap_verdict_name(g->v), "turn",
				(json_int_t)g->turn, "n_fail", (json_int_t)g->n_fail, "group_size", (json_int_t)g->n);
	if (!add)
		leap_die("out of memory");
	leap_buf_reset(&c->dcp);
	if (leap_splice_line_known(&c->dcp, c->line.s, c->line.len, NULL, add, 0))
		leap_die("internal error: a next-turn record is not an object");
	json_decref(add);
	leap_out_raw(&c->out, c->dcp.s, c->dcp.len - 1);
}

/* Writes member m with its decision where decided records go: n_fail and group_size are
 * those the verdict was taken on (the turn-1 group's, carried in `dcp`, unless --regate), so
 * that a turn-2 record of a group of 8 does not read "group_size 1"; turn_fail and
 * turn_records count this turn's records of the group. */
static void put_prune(struct ctx *c, const struct leap_member *m, int expand, const char *reason,
		      const struct leap_gate *g, long n_fail, long n, int complete)
{
	json_t *prune = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:b,s:I,s:I,s:I}", "decision", expand ? "expand" : "final",
				  "reason", reason, "verdict", leap_verdict_name(g->v), "n_fail", (json_int_t)g->n_fail,
				  "group_size", (json_int_t)g->n, "turn", (json_int_t)m->turn, "complete", complete,
				  "gate_turn", (json_int_t)g->turn, "turn_fail", (json_int_t)n_fail, "turn_records",
				  (json_int_t)n);
	json_t *add = json_pack("{s:o}", "prune", prune);
	if (!prune || !add)
		leap_die("out of memory");
	leap_buf_reset(&c->line);
	if (leap_splice_line_known(&c->line, m->raw, m->len, NULL, add, m->has_key))
		leap_die("internal error: a held record is not an object");
	put_decided(c);
	json_decref(add);
}

/* Decides one group and writes its records. `complete` is 0 when the group was cut short by
 * the end of input. */
static void decide(struct ctx *c, struct leap_group *grp, int complete)
{
	c->kept += leap_dcp_take_rerun(c->use_done ? &c->rerun : NULL, grp, put_dup, c);
	if (!grp->n)
		return;
	long n = (long)grp->n, n_fail;
	struct leap_gate g = leap_dcp_gate(&c->opts, grp, &n_fail);
	c->groups[g.v]++;
	if (c->adaptive && grp->m[0].turn == 1)
		note_turn1(c, grp, g.v);
	if (!complete) {
		c->incomplete++;
		leap_warn("group '%s': end of input after %ld of %ld records; decided with those", grp->key, n,
			  grp->want);
	}
	const char **reason = xcalloc(grp->n, sizeof(*reason));
	int *expand = xcalloc(grp->n, sizeof(*expand));
	long n_expand = leap_dcp_decide(&c->opts, grp, g.v, reason, expand);
	for (size_t i = 0; i < grp->n; i++) {
		struct leap_member *m = &grp->m[i];
		if (!m->in_done) {
			put_prune(c, m, expand[i], reason[i], &g, n_fail, n, complete);
			if (c->use_done)
				leap_rerun_note(&c->rerun, grp->key, m->sample, m->turn, m->file, m->line);
		}
		if (expand[i] && c->use_done)
			put_next(c, m, n_expand, &g);
		if (expand[i])
			c->expanded++;
		else
			c->final++;
	}
	free(reason);
	free(expand);
	/* The group's done lines leave now, so that a reader of the done file (or a kill) never
	 * sees half a group held back in a buffer. */
	if (c->use_done)
		leap_lines_flush(&c->done);
}

/* The stream's callbacks (lib/group/gstream.h). */

/* A line that is not a JSON object: its error record, where decided records go. */
static void put_bad(void *arg, json_t *bad)
{
	put_error(arg, bad);
}

/* Says on stderr why the record at file:line is not decided, once per reason and run: a run
 * of a thousand records that all carry "no CUDA device" says it once, then counts the rest
 * (say_counts). At most 1024 reasons are remembered; past them each is said. */
static void say_undecided(struct ctx *c, const char *file, long line, const char *reason)
{
	int added = 0;
	size_t len = strlen(reason);
	void **slot = leap_hmap_count(&c->said) < 1024 ? leap_hmap_put(&c->said, reason, len, &added) : NULL;
	if (slot && !added) {
		c->reasons[(uintptr_t)*slot].more++;
		return;
	}
	leap_warn("%s:%ld: %s", file, line, reason);
	if (!slot)
		return;
	xgrow((void **)&c->reasons, &c->capreasons, c->nreasons + 1, sizeof *c->reasons);
	c->reasons[c->nreasons] = (struct said_reason){xasprintf("%s:%ld", file, line), 0};
	*slot = (void *)(uintptr_t)c->nreasons++;
}

/* After the run: how many more records each reason said once held, in the order first said. */
static void say_counts(struct ctx *c)
{
	for (size_t i = 0; i < c->nreasons; i++) {
		if (c->reasons[i].more)
			leap_warn("%ld more record%s not decided for the same reason as %s", c->reasons[i].more,
				  c->reasons[i].more == 1 ? " was" : "s were", c->reasons[i].where);
		free(c->reasons[i].where);
	}
	free(c->reasons);
	leap_hmap_free(&c->said);
}

/* Writes m, which is not decided (`why`), where decided records go, and clears it: an
 * earlier stage's error stays as it is, otherwise `error` = why. */
static void put_ungrouped(void *arg, struct leap_member *m, const char *why)
{
	struct ctx *c = arg;
	char *prior = leap_record_error_of(m->raw, m->len);
	if (prior) {
		char *reason = xasprintf("not decided: the record carries an error (%s)", prior);
		say_undecided(c, m->file, m->line, reason);
		free(reason);
	} else {
		say_undecided(c, m->file, m->line, why);
	}
	if (prior) {
		leap_buf_reset(&c->line);
		leap_buf_add(&c->line, m->raw, m->len);
		leap_buf_add(&c->line, "\n", 1);
	} else {
		leap_member_error_line(&c->line, m, why);
	}
	free(prior);
	put_decided(c);
	c->errors++;
	leap_member_clear(m);
}

/* A record without a valid status is not decided; a duplicate of a record its open group
 * holds is written at once as an error; any other record counts one toward its group, whose
 * size is the record's group_size (next-turn records) or --group-size. */
static int admit(void *arg, const struct leap_group *open, const char *key, struct leap_member *m, long *want)
{
	struct ctx *c = arg;
	if (m->status == LEAP_ST_NONE) {
		put_ungrouped(c, m, "the record has no valid 'status' (run leap-compile, leap-verify and leap-bench "
				    "first)");
		return -1;
	}
	long i = open ? leap_group_find_dup(open, m) : -1;
	if (i >= 0) {
		put_dup(c, key, m, open->m[i].file, open->m[i].line);
		return -1;
	}
	*want = m->want > 0 ? m->want : c->group_size;
	return 1;
}

/* Decides a group taken out of the grouper and frees it; at the end of input, a group whose
 * size is known was cut short. */
static void take_group(void *arg, struct leap_group *grp, int at_eof)
{
	decide(arg, grp, !at_eof || grp->want == 0);
	leap_group_free(grp);
}

/* 1 when descriptor fd is the same file as one of the inputs (standard input when there are
 * none, or for "-"). */
static int done_is_input(int fd, int nfiles, char *const *files)
{
	struct stat d, st;
	if (fstat(fd, &d))
		return 0;
	if (nfiles == 0)
		return !fstat(STDIN_FILENO, &st) && st.st_dev == d.st_dev && st.st_ino == d.st_ino;
	for (int i = 0; i < nfiles; i++) {
		int r = strcmp(files[i], "-") ? stat(files[i], &st) : fstat(STDIN_FILENO, &st);
		if (!r && st.st_dev == d.st_dev && st.st_ino == d.st_ino)
			return 1;
	}
	return 0;
}

/* Parses a threshold option, or exits with a usage error naming it. */
static void parse_threshold(struct ctx *c, const char *name, const char *arg, struct leap_threshold *t)
{
	if (leap_threshold_parse(arg, t))
		leap_usage_error(&c->common, "%s: '%s' is not a count (8) or a fraction (0.5, 50%%)", name, arg);
}

/* The options of leap-prune, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"preset", 'p', required_argument, "NAME", 0,
	 "leap (default), debug-all, debug-below-half or single-turn: the\n"
	 "paper's method and its ablations; the flags below override"},
	{"done", 'd', required_argument, "FILE", 0, "append every decided record to FILE (whole lines)"},
	{"annotate", 0, no_argument, NULL, OPT_ANNOTATE,
	 "write every record with its 'prune' decision on stdout instead"},
	{"group-size", 'g', required_argument, "G", 0,
	 "records per group at turn 1: decide a group as soon as G have\n"
	 "arrived (next-turn records carry their own count); default: at\n"
	 "end of input"},
	{"easy-below", 'e', required_argument, "T", 0,
	 "easy when n_fail < T (count 8, fraction 0.5 or 50%, or G-K: the\n"
	 "group's size less K; default 50%)"},
	{"hopeless-above", 'H', required_argument, "T", 0,
	 "hopeless when n_fail > T (default G-1: every sample failed)"},
	{"catastrophic", 'c', required_argument, "LIST", 0,
	 "statuses no feedback fixes: a group where every record failed\n"
	 "with one of them is hopeless (default '': the rule is off; the\n"
	 "old default was no_code,compile_error)"},
	{"max-turns", 't', required_argument, "N", 0, "records of turn N or later end (default 3)"},
	{"regate", 0, no_argument, NULL, OPT_REGATE,
	 "decide every turn again from that turn's records (the verdict\n"
	 "carried from turn 1 is ignored)"},
	{"expand-slow", 0, optional_argument, "S", OPT_EXPAND_SLOW,
	 "in expanded groups, passing records with speedup < S (default 1)\n"
	 "get another turn too"},
	{"feedback-bytes", 'b', required_argument, "N", 0,
	 "feedback text at most N bytes (default 1024, at least 64)"},
	{"adaptive", 0, required_argument, "STATE", OPT_ADAPTIVE,
	 "self-tuning: take the easy threshold from the state file STATE\n"
	 "and, after a turn-1 run, move it one step towards --target and\n"
	 "update the tasks' easy/hopeless streaks (for leap-prompt\n"
	 "--skip-from); STATE is replaced atomically under a lock"},
	{"target", 0, required_argument, "P", OPT_TARGET,
	 "share of turn-1 groups DCP should end (default 0.5)"},
	{"adapt-step", 0, required_argument, "S", OPT_ADAPT_STEP,
	 "how far one run moves the easy threshold (default 0.05)"},
	{"stats", 0, no_argument, NULL, OPT_STATS, "print the decisions made on stderr at the end"},
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 27, usage_tail};

/* Parses the options into *c and returns the done file (NULL with --annotate). */
static const char *parse_args(struct ctx *c, int argc, char **argv)
{
	const char *done = NULL, *preset = NULL;
	int annotate = 0, opt;
	unsigned given = 0;
	int64_t v;
	while ((opt = leap_common_getopt(&c->common, argc, argv)) != -1) {
		if (leap_common_option(&c->common, opt, optarg))
			continue;
		switch (opt) {
		case 'd':
			done = optarg;
			break;
		case OPT_ANNOTATE:
			annotate = 1;
			break;
		case 'p': {
			struct leap_prune_opts probe;
			if (leap_prune_preset(optarg, &probe))
				leap_usage_error(&c->common, "--preset: '%s' is not leap, debug-all, debug-below-half or "
							     "single-turn", optarg);
			preset = optarg;
			break;
		}
		case 'g':
			c->group_size = leap_group_size_option(&c->common, optarg);
			break;
		case 'e':
			parse_threshold(c, "--easy-below", optarg, &c->opts.easy_below);
			given |= LEAP_PRUNE_GIVEN_EASY;
			break;
		case 'H':
			parse_threshold(c, "--hopeless-above", optarg, &c->opts.hopeless_above);
			given |= LEAP_PRUNE_GIVEN_HOPELESS;
			break;
		case 'c':
			if (leap_status_set_parse(optarg, &c->opts.catastrophic))
				leap_usage_error(&c->common, "--catastrophic: '%s' is not a list of statuses (no_code, "
							     "compile_error, runtime_error, timeout, mismatch)", optarg);
			if (c->opts.catastrophic & (1u << LEAP_ST_PASS))
				leap_usage_error(&c->common, "--catastrophic: 'pass' is not a failure");
			given |= LEAP_PRUNE_GIVEN_CAT;
			break;
		case 't':
			if (leap_parse_i64(optarg, 1, 1 << 20, &v))
				leap_usage_error(&c->common, "--max-turns: '%s' is not an integer from 1 to %d", optarg,
						 1 << 20);
			c->opts.max_turns = (long)v;
			given |= LEAP_PRUNE_GIVEN_TURNS;
			break;
		case OPT_REGATE:
			c->opts.regate = 1;
			given |= LEAP_PRUNE_GIVEN_REGATE;
			break;
		case OPT_EXPAND_SLOW:
			c->opts.expand_slow = 1;
			if (optarg && leap_parse_double(optarg, 0, 1e9, &c->opts.slow_below))
				leap_usage_error(&c->common, "--expand-slow: '%s' is not a speedup >= 0", optarg);
			break;
		case 'b':
			if (leap_parse_i64(optarg, 64, 1 << 24, &v))
				leap_usage_error(&c->common, "--feedback-bytes: '%s' is not an integer from 64 to %d",
						 optarg, 1 << 24);
			c->opts.feedback_bytes = (size_t)v;
			break;
		case OPT_STATS:
			c->stats = 1;
			break;
		case OPT_ADAPTIVE:
			c->adaptive = optarg;
			break;
		case OPT_TARGET:
			if (leap_parse_double(optarg, 0, 1, &c->target))
				leap_usage_error(&c->common, "--target: '%s' is not a share from 0 to 1", optarg);
			break;
		case OPT_ADAPT_STEP:
			if (leap_parse_double(optarg, 1e-6, 1, &c->adapt_step))
				leap_usage_error(&c->common, "--adapt-step: '%s' is not a number in (0, 1]", optarg);
			break;
		default:
			leap_usage_error(&c->common, "unhandled option");
		}
	}
	if (preset && leap_prune_preset_fill(preset, &c->opts, given))
		leap_die("internal error: preset '%s'", preset);
	if (!done && !annotate)
		leap_usage_error(&c->common, "say where decided records go: --done FILE, or --annotate");
	if (done && annotate)
		leap_usage_error(&c->common, "--done and --annotate exclude each other");
	return done;
}

int main(int argc, char **argv)
{
	struct ctx c = {.target = 0.5, .adapt_step = 0.05};
	leap_common_init(&c.common, &usage);
	leap_prune_defaults(&c.opts);
	const char *done = parse_args(&c, argc, argv);
	if (c.adaptive) {
		if (!c.opts.easy_below.frac)
			leap_usage_error(&c.common, "--adaptive tunes a fraction: give --easy-below as one (0.5, 50%%)");
		struct leap_adaptive st;
		char *err = NULL;
		if (leap_adaptive_load(c.adaptive, c.target, c.adapt_step, c.opts.easy_below.v, &st, &err))
			leap_die("%s", err);
		c.opts.easy_below = (struct leap_threshold){st.easy_below, 1, 0};
		leap_adaptive_free(&st);
		c.verdicts = json_object();
	}
	leap_out_init(&c.out, stdout);
	if (done) {
		leap_lines_open(&c.done, done);
		if (done_is_input(c.done.fd, argc - optind, argv + optind))
			leap_die("%s: the done file is also an input: its records would be read again", done);
		c.use_done = 1;
		leap_rerun_init(&c.rerun, done, c.done.fd);
	}
	leap_progress_init(&c.progress, c.common.progress);
	leap_progress_input(&c.progress, argc - optind, argv + optind);

	static const struct leap_gstream_ops ops = {put_bad, put_ungrouped, admit, take_group};
	const struct leap_gstream_io io = {&c.records, &c.errors, &c.progress, &c.out};
	int open_failed = leap_gstream(argc - optind, argv + optind, "prune", &ops, &c, &io);
	leap_progress_end(&c.progress);
	say_counts(&c);
	if (c.stats)
		fprintf(stderr,
			"%s: %ld records, %ld groups (%ld easy, %ld hopeless, %ld expand, %ld incomplete); "
			"%ld records end, %ld get another turn, %ld errors (%ld duplicates); %ld kept from an earlier "
			"run\n",
			leap_prog(), c.records, c.groups[0] + c.groups[1] + c.groups[2], c.groups[LEAP_VERDICT_EASY],
			c.groups[LEAP_VERDICT_HOPELESS], c.groups[LEAP_VERDICT_EXPAND], c.incomplete, c.final,
			c.expanded, c.errors, c.dups, c.kept);
	leap_buf_free(&c.line);
	leap_buf_free(&c.dcp);
	leap_rerun_free(&c.rerun);
	int rc = LEAP_EXIT_OK;
	if (c.adaptive && c.t1_decided) {
		struct leap_adaptive st;
		char *err = NULL;
		if (leap_adaptive_commit(c.adaptive, c.target, c.adapt_step, c.opts.easy_below.v, c.t1_decided,
					 c.t1_pruned, c.verdicts, &st, &err)) {
			leap_warn("%s", err);
			free(err);
			rc = LEAP_EXIT_FATAL;
		} else if (c.stats) {
			fprintf(stderr, "%s: adaptive: %ld of %ld turn-1 groups ended (target %.3g); easy threshold "
					"%.3g -> %.3g\n", leap_prog(), c.t1_pruned, c.t1_decided, st.target,
				c.opts.easy_below.v, st.easy_below);
		}
		leap_adaptive_free(&st);
	}
	json_decref(c.verdicts);
	leap_buf_free(&c.task);
	if (c.use_done && leap_lines_close(&c.done))
		rc = LEAP_EXIT_FATAL;
	if (leap_out_close(&c.out))
		rc = LEAP_EXIT_FATAL;
	return leap_filter_exit(rc, open_failed, c.errors);
}
