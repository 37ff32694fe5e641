/* leap-prune - Difficulty-Conditioned Pruning: end easy and hopeless groups, send the rest a turn on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "adaptive.h"
#include "group.h"
#include "jsonl.h"
#include "prune.h"
#include "record.h"
#include "scan.h"
#include "util.h"
#include "banned.h"

static const char usage[] =
	"usage: leap-prune [OPTION]... --done FILE [FILE]...\n"
	"   or: leap-prune [OPTION]... --annotate [FILE]...\n"
	"\n"
	"Decide each GRPO group after a turn (Difficulty-Conditioned Pruning). With n records in\n"
	"the group and n_fail of them not passing: easy when n_fail < --easy-below, hopeless when\n"
	"n_fail > --hopeless-above or every record failed with a --catastrophic status, otherwise\n"
	"expand: failed records get another turn with lean feedback, passed ones end.\n"
	"Every input record is appended to the done file with its 'prune' decision; each record\n"
	"that gets another turn also yields its next-turn record on stdout.\n"
	"\n"
	"  -d, --done FILE          append every decided record to FILE (whole lines)\n"
	"      --annotate           write every record with its 'prune' decision on stdout instead\n"
	"  -g, --group-size G       records per group at turn 1: decide a group as soon as G have\n"
	"                           arrived (next-turn records carry their own count); default: at\n"
	"                           end of input\n"
	"  -e, --easy-below T       easy when n_fail < T (count, or fraction: 0.5, 50%; default 50%)\n"
	"  -H, --hopeless-above T   hopeless when n_fail > T (default 100%: never by count)\n"
	"  -c, --catastrophic LIST  statuses no feedback fixes: a group where every record failed\n"
	"                           with one of them is hopeless (default no_code,compile_error;\n"
	"                           '' for none)\n"
	"  -t, --max-turns N        records of turn N or later end (default 3)\n"
	"      --expand-slow[=S]    in expanded groups, passing records with speedup < S (default 1)\n"
	"                           get another turn too\n"
	"  -b, --feedback-bytes N   feedback text at most N bytes (default 1024, at least 64)\n"
	"      --adaptive STATE     self-tuning: take the easy threshold from the state file STATE\n"
	"                           and, after a turn-1 run, move it one step towards --target and\n"
	"                           update the tasks' easy/hopeless streaks (for leap-prompt\n"
	"                           --skip-from); STATE is replaced atomically under a lock\n"
	"      --target P           share of turn-1 groups DCP should end (default 0.5)\n"
	"      --adapt-step S       how far one run moves the easy threshold (default 0.05)\n"
	"      --stats              print the decisions made on stderr at the end\n"
	"      --progress, --no-progress  force the progress line on stderr on or off\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Exit status: 0 all records decided, 1 some records carried an error (they were written\n"
	"to the done file, or stdout with --annotate), 2 usage or fatal error.\n";

enum { OPT_ANNOTATE = LEAP_OPT_PRIVATE, OPT_EXPAND_SLOW, OPT_STATS, OPT_ADAPTIVE, OPT_TARGET, OPT_ADAPT_STEP };

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

/* Decides one group and writes its records. `complete` is 0 when the group was cut short by
 * the end of input. */
static void decide(struct ctx *c, struct leap_group *grp, int complete)
{
	long n = (long)grp->n, n_fail = 0, n_cat = 0;
	for (size_t i = 0; i < grp->n; i++) {
		int st = grp->m[i].status;
		if (st != LEAP_ST_PASS) {
			n_fail++;
			if (c->opts.catastrophic & (1u << st))
				n_cat++;
		}
	}
	enum leap_verdict v = leap_prune_verdict(&c->opts, n, n_fail, n_cat);
	c->groups[v]++;
	if (c->adaptive && grp->m[0].turn == 1)
		note_turn1(c, grp, v);
	if (!complete) {
		c->incomplete++;
		leap_warn("group '%s': end of input after %ld of %ld records; decided with those", grp->key, n,
			  grp->want);
	}
	const char **reason = xcalloc(grp->n, sizeof(*reason));
	int *expand = xcalloc(grp->n, sizeof(*expand));
	long n_expand = 0;
	for (size_t i = 0; i < grp->n; i++) {
		struct leap_member *m = &grp->m[i];
		reason[i] = leap_prune_reason(&c->opts, v, m->status, m->turn, m->speedup, &expand[i]);
		n_expand += expand[i];
	}
	for (size_t i = 0; i < grp->n; i++) {
		struct leap_member *m = &grp->m[i];
		json_t *prune = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:b}", "decision", expand[i] ? "expand" : "final",
					  "reason", reason[i], "verdict", leap_verdict_name(v), "n_fail",
					  (json_int_t)n_fail, "group_size", (json_int_t)n, "turn", (json_int_t)m->turn,
					  "complete", complete);
		json_t *add = json_pack("{s:o}", "prune", prune);
		if (!prune || !add)
			leap_die("out of memory");
		leap_buf_reset(&c->line);
		if (leap_splice_line_known(&c->line, m->raw, m->len, NULL, add, m->has_key))
			leap_die("internal error: a held record is not an object");
		put_decided(c);
		json_decref(add);
		if (expand[i] && c->use_done) {
			leap_buf_reset(&c->line);
			if (leap_next_turn_line(&c->line, m->raw, m->len, m->status, m->turn, n_expand, &c->opts))
				leap_die("internal error: a held record is not an object");
			leap_out_raw(&c->out, c->line.s, c->line.len);
		}
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		LEAP_COMMON_LONGOPTS,
		{"done", required_argument, NULL, 'd'},
		{"annotate", no_argument, NULL, OPT_ANNOTATE},
		{"group-size", required_argument, NULL, 'g'},
		{"easy-below", required_argument, NULL, 'e'},
		{"hopeless-above", required_argument, NULL, 'H'},
		{"catastrophic", required_argument, NULL, 'c'},
		{"max-turns", required_argument, NULL, 't'},
		{"expand-slow", optional_argument, NULL, OPT_EXPAND_SLOW},
		{"feedback-bytes", required_argument, NULL, 'b'},
		{"stats", no_argument, NULL, OPT_STATS},
		{"adaptive", required_argument, NULL, OPT_ADAPTIVE},
		{"target", required_argument, NULL, OPT_TARGET},
		{"adapt-step", required_argument, NULL, OPT_ADAPT_STEP},
		{NULL, 0, NULL, 0},
	};
	struct ctx c = {.target = 0.5, .adapt_step = 0.05};
	leap_common_init(&c.common, usage);
	leap_prune_defaults(&c.opts);
	const char *done = NULL;
	int annotate = 0, opt;
	int64_t v;
	while ((opt = getopt_long(argc, argv, "d:g:e:H:c:t:b:hV", longopts, NULL)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'd':
			done = optarg;
			break;
		case OPT_ANNOTATE:
			annotate = 1;
			break;
		case 'g':
			if (leap_parse_i64(optarg, 1, 1 << 20, &v))
				leap_usage_error(&c.common, "--group-size: '%s' is not an integer from 1 to %d", optarg,
						 1 << 20);
			c.group_size = (long)v;
			break;
		case 'e':
			parse_threshold(&c, "--easy-below", optarg, &c.opts.easy_below);
			break;
		case 'H':
			parse_threshold(&c, "--hopeless-above", optarg, &c.opts.hopeless_above);
			break;
		case 'c':
			if (leap_status_set_parse(optarg, &c.opts.catastrophic))
				leap_usage_error(&c.common, "--catastrophic: '%s' is not a list of statuses (no_code, "
							    "compile_error, runtime_error, timeout, mismatch)", optarg);
			if (c.opts.catastrophic & (1u << LEAP_ST_PASS))
				leap_usage_error(&c.common, "--catastrophic: 'pass' is not a failure");
			break;
		case 't':
			if (leap_parse_i64(optarg, 1, 1 << 20, &v))
				leap_usage_error(&c.common, "--max-turns: '%s' is not an integer from 1 to %d", optarg,
						 1 << 20);
			c.opts.max_turns = (long)v;
			break;
		case OPT_EXPAND_SLOW:
			c.opts.expand_slow = 1;
			if (optarg && leap_parse_double(optarg, 0, 1e9, &c.opts.slow_below))
				leap_usage_error(&c.common, "--expand-slow: '%s' is not a speedup >= 0", optarg);
			break;
		case 'b':
			if (leap_parse_i64(optarg, 64, 1 << 24, &v))
				leap_usage_error(&c.common, "--feedback-bytes: '%s' is not an integer from 64 to %d",
						 optarg, 1 << 24);
			c.opts.feedback_bytes = (size_t)v;
			break;
		case OPT_STATS:
			c.stats = 1;
			break;
		case OPT_ADAPTIVE:
			c.adaptive = optarg;
			break;
		case OPT_TARGET:
			if (leap_parse_double(optarg, 0, 1, &c.target))
				leap_usage_error(&c.common, "--target: '%s' is not a share from 0 to 1", optarg);
			break;
		case OPT_ADAPT_STEP:
			if (leap_parse_double(optarg, 1e-6, 1, &c.adapt_step))
				leap_usage_error(&c.common, "--adapt-step: '%s' is not a number in (0, 1]", optarg);
			break;
		default:
			leap_usage_error(&c.common, "unhandled option");
		}
	}
	if (!done && !annotate)
		leap_usage_error(&c.common, "say where decided records go: --done FILE, or --annotate");
	if (done && annotate)
		leap_usage_error(&c.common, "--done and --annotate exclude each other");
	if (c.adaptive) {
		if (!c.opts.easy_below.frac)
			leap_usage_error(&c.common, "--adaptive tunes a fraction: give --easy-below as one (0.5, 50%%)");
		struct leap_adaptive st;
		char *err = NULL;
		if (leap_adaptive_load(c.adaptive, c.target, c.adapt_step, c.opts.easy_below.v, &st, &err))
			leap_die("%s", err);
		c.opts.easy_below = (struct leap_threshold){st.easy_below, 1};
		leap_adaptive_free(&st);
		c.verdicts = json_object();
	}
	leap_out_init(&c.out, stdout);
	if (done) {
		leap_lines_open(&c.done, done);
		if (done_is_input(c.done.fd, argc - optind, argv + optind))
			leap_die("%s: the done file is also an input: its records would be read again", done);
		c.use_done = 1;
	}
	leap_progress_init(&c.progress, c.common.progress);
	leap_progress_input(&c.progress, argc - optind, argv + optind);

	struct leap_in in;
	leap_in_init(&in, argc - optind, argv + optind, stdout);
	struct leap_grouper groups;
	leap_grouper_init(&groups);
	struct leap_buf key = {0};
	struct leap_member m;
	json_t *bad;
	int has_group;
	enum leap_read r;
	while ((r = leap_member_next(&in, c.records, "prune", &m, &key, &has_group, &bad)) != LEAP_READ_EOF) {
		c.records++;
		if (r == LEAP_READ_BAD) {
			put_error(&c, bad);
		} else if (!has_group || m.status == LEAP_ST_NONE) {
			const char *why = !has_group ? "the record has neither 'group' nor 'task'"
				: "the record has no valid 'status' (run leap-compile, leap-verify and leap-bench first)";
			char *prior = leap_record_error_of(m.raw, m.len); /* an earlier stage's error stays */
			if (prior)
				leap_warn("%s:%ld: not decided: the record carries an error (%s)", m.file, m.line, prior);
			else
				leap_warn("%s:%ld: %s", m.file, m.line, why);
			leap_buf_reset(&c.line);
			if (prior)
				leap_buf_add(&c.line, m.raw, m.len), leap_buf_add(&c.line, "\n", 1);
			else if (leap_splice_error(&c.line, m.raw, m.len, m.file, m.line, why))
				leap_die("internal error: a scanned record is not an object");
			free(prior);
			put_decided(&c);
			c.errors++;
			leap_member_clear(&m);
		} else {
			struct leap_group *grp = leap_grouper_add(&groups, key.s, &m, 1, m.want > 0 ? m.want : c.group_size);
			if (grp) {
				decide(&c, grp, 1);
				leap_group_free(grp);
			}
		}
		leap_progress_update(&c.progress, c.records, c.errors);
	}
	leap_buf_free(&key);
	struct leap_group *grp;
	while ((grp = leap_grouper_pop(&groups))) {
		decide(&c, grp, grp->want == 0);
		leap_group_free(grp);
	}
	leap_grouper_free(&groups);
	int open_failed = in.open_failed;
	leap_in_close(&in);
	leap_progress_end(&c.progress);
	if (c.stats)
		fprintf(stderr,
			"%s: %ld records, %ld groups (%ld easy, %ld hopeless, %ld expand, %ld incomplete); "
			"%ld records end, %ld get another turn, %ld errors\n",
			leap_prog(), c.records, c.groups[0] + c.groups[1] + c.groups[2], c.groups[LEAP_VERDICT_EASY],
			c.groups[LEAP_VERDICT_HOPELESS], c.groups[LEAP_VERDICT_EXPAND], c.incomplete, c.final,
			c.expanded, c.errors);
	leap_buf_free(&c.line);
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
	if (rc)
		return rc;
	if (open_failed)
		return LEAP_EXIT_FATAL;
	return c.errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
