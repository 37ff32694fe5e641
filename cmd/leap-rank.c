/* leap-rank - rank-based reward: every pair of trajectories in a group plays once; wins become a score. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "group/group.h"
#include "group/gstream.h"
#include "core/hmap.h"
#include "core/jsonl.h"
#include "group/rank.h"
#include "core/record.h"
#include "group/splice.h"
#include "group/twopass.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-rank [OPTION]... [FILE]...\n"
	"\n"
	"Rank the finished trajectories of each GRPO group by a pairwise tournament. A trajectory\n"
	"is the records of one (group, sample), all turns. Each pair plays once on the outcome key\n"
	"(default turn, the LEAP paper's gold > silver > time-out): solved at an earlier turn beats\n"
	"solved later beats never solved. With speed in the key, a speedup greater by more than the\n"
	"tie margin wins (only timings whose bench.status is \"ok\" count); with tokens, fewer total\n"
	"tokens wins. Every record gets rank = {wins, losses, ties, score, group_size, turns,\n"
	"complete} with score = (wins - losses) / (group_size - 1). A second record of the same\n"
	"(group, sample, turn) becomes an error record naming the first.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 all records ranked, 1 some records carried an error (they were written),\n"
	"2 usage or fatal error.\n";

struct ctx {
	struct leap_common common;
	struct leap_rank_opts opts;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_buf line;
	long group_size;
	long records, errors;
	long unusable; /* passing records whose timing is not used (bench.status not "ok") */
};

/* Counts a passing record whose speedup cannot be used (lib/group/group.c: bench.status not ok). */
static void note_speed(struct ctx *c, const struct leap_member *m)
{
	if (m->status == LEAP_ST_PASS && m->speed_unusable)
		c->unusable++;
}

/* 1 when the outcome key compares speeds. */
static int key_has_speed(const struct leap_rank_opts *o)
{
	for (int k = 0; k < o->nkey; k++)
		if (o->key[k] == LEAP_KEY_SPEED)
			return 1;
	return 0;
}

/* A group in the two-pass mode: the summaries of its trajectories. */
struct tgroup {
	struct leap_traj *t;
	long *id;      /* the trajectory's sample, or -1 - seq for a record without one */
	uint32_t *tag; /* the trajectory's tag: its index in struct twopass.refs */
	size_t n, cap;
	int complete;
};

/* The two-pass mode's state: the groups, and for each trajectory tag its group and index. */
struct twopass {
	struct ctx *c;
	struct leap_hmap groups;
	struct { struct tgroup *g; size_t j; } *refs;
	size_t nrefs, caprefs;
};

/* The trajectory `id` of group g, added when absent (its tag taken from tp->refs). */
static size_t traj_of(struct twopass *tp, struct tgroup *g, long id)
{
	for (size_t j = g->n; j-- > 0;)
		if (g->id[j] == id)
			return j;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->t = xrealloc(g->t, g->cap * sizeof(*g->t));
		g->id = xrealloc(g->id, g->cap * sizeof(*g->id));
		g->tag = xrealloc(g->tag, g->cap * sizeof(*g->tag));
	}
	if (tp->nrefs >= LEAP_TWOPASS_NONE)
		leap_die("more than %u trajectories", (unsigned)LEAP_TWOPASS_NONE);
	xgrow((void **)&tp->refs, &tp->caprefs, tp->nrefs + 1, sizeof(*tp->refs));
	tp->refs[tp->nrefs].g = g;
	tp->refs[tp->nrefs].j = g->n;
	g->id[g->n] = id;
	g->tag[g->n] = (uint32_t)tp->nrefs++;
	leap_rank_traj_init(&g->t[g->n]);
	return g->n++;
}

/* First pass: adds a record to its trajectory's summary; the tag names the trajectory. */
static uint32_t tp_summarise(void *arg, const struct leap_member *m, const struct leap_buf *key)
{
	struct twopass *tp = arg;
	void **slot = leap_hmap_put(&tp->groups, key->s, key->len, NULL);
	if (!*slot)
		*slot = xcalloc(1, sizeof(struct tgroup));
	struct tgroup *g = *slot;
	size_t j = traj_of(tp, g, m->sample >= 0 ? m->sample : -1 - m->seq);
	note_speed(tp->c, m);
	leap_rank_traj_add(&g->t[j], m);
	return g->tag[j];
}

/* Between the passes: plays every group's tournament. */
static void tp_between(void *arg, long records)
{
	(void)records;
	struct twopass *tp = arg;
	size_t pos = 0;
	const char *key;
	void *val;
	while (leap_hmap_next(&tp->groups, &pos, &key, NULL, &val)) {
		struct tgroup *g = val;
		leap_rank_tournament(&tp->c->opts, g->t, g->n);
		long unended = 0;
		for (size_t j = 0; j < g->n; j++)
			unended += !g->t[j].final;
		g->complete = !unended;
		if (unended)
			leap_warn("group '%s': %ld trajector%s not ended (no record with prune.decision final); "
				  "ranked with what arrived", key, unended,
				  unended == 1 ? "y has" : "ies have");
	}
}

/* Writes raw[0..len) with the rank of trajectory `tag`. */
static void put_rank(struct twopass *tp, uint32_t tag, const char *raw, size_t len, int has_key)
{
	struct ctx *c = tp->c;
	const struct tgroup *g = tp->refs[tag].g;
	const struct leap_traj *x = &g->t[tp->refs[tag].j];
	json_t *add = json_pack("{s:{s:I,s:I,s:I,s:f,s:I,s:I,s:b}}", "rank", "wins", (json_int_t)x->wins, "losses",
				(json_int_t)x->losses, "ties", (json_int_t)x->ties, "score", x->score, "group_size",
				(json_int_t)g->n, "turns", (json_int_t)x->turns, "complete", g->complete);
	if (!add)
		leap_die("out of memory");
	leap_splice_out(&c->out, &c->line, raw, len, add, has_key);
	json_decref(add);
}

/* Second pass, a record that takes part: written with its trajectory's rank. */
static void tp_put(void *arg, long seq, uint32_t tag, const char *raw, size_t len, int has_key, const char *file,
		   long line)
{
	(void)seq;
	(void)file;
	(void)line;
	put_rank(arg, tag, raw, len, has_key);
}

/* Second pass, a record that takes no part: an error record saying why. */
static void tp_refused(void *arg, struct leap_member *m, const char *why)
{
	struct ctx *c = ((struct twopass *)arg)->c;
	leap_warn("%s:%ld: %s", m->file, m->line, why);
	leap_member_error_line(&c->line, m, why);
	leap_out_raw(&c->out, c->line.s, c->line.len - 1);
	c->errors++;
}

/* Frees a group of the two-pass mode. */
static void tgroup_free(void *p)
{
	struct tgroup *g = p;
	free(g->t);
	free(g->id);
	free(g->tag);
	free(g);
}

/* The two-pass mode (lib/group/twopass.h): summarise every trajectory, rank, then write every
 * record in input order. Memory: the trajectories' summaries, and what the driver keeps per
 * record (its tag and length, and where each (group, sample, turn) was first read). Every
 * record with a group takes part. */
static void two_pass(struct ctx *c, int nfiles, char *const *files, off_t off, int *open_failed)
{
	static const struct leap_twopass_ops ops = {
		NULL, tp_summarise, tp_between, tp_put, NULL, tp_refused,
		"the record has no trajectory (the input changed between the two passes)",
	};
	struct twopass tp = {.c = c};
	const struct leap_gstream_io io = {&c->records, &c->errors, &c->progress, &c->out};
	*open_failed = leap_twopass(nfiles, files, off, "rank", &ops, &tp, &io);
	leap_hmap_free_with(&tp.groups, tgroup_free);
	free(tp.refs);
}

/* Says on stderr how many passing records' timings the speed key could not use. */
static void report_speed(const struct ctx *c)
{
	if (c->unusable && key_has_speed(&c->opts))
		leap_warn("%ld passing record%s a timing whose bench.status is not \"ok\" (noisy, suspicious or "
			  "missing): speed counts %s as unknown", c->unusable, c->unusable == 1 ? " has" : "s have",
			  c->unusable == 1 ? "it" : "them");
}

/* Ranks one group and writes its records in arrival order. */
static void rank_group(struct ctx *c, struct leap_group *grp, int at_eof)
{
	size_t *traj = xcalloc(grp->n ? grp->n : 1, sizeof(*traj));
	struct leap_traj *t;
	size_t nt = leap_rank_summarise(grp, traj, &t);
	leap_rank_tournament(&c->opts, t, nt);
	int complete = !(at_eof && grp->want > 0);
	if (!complete)
		leap_warn("group '%s': end of input after %ld of %ld ended trajectories; ranked with what arrived",
			  grp->key, grp->units, grp->want);
	long unended = 0;
	for (size_t j = 0; j < nt; j++)
		unended += !t[j].final;
	if (unended) {
		complete = 0;
		leap_warn("group '%s': %ld trajector%s not ended (no record with prune.decision final); ranked "
			  "with what arrived", grp->key, unended, unended == 1 ? "y has" : "ies have");
	}
	for (size_t i = 0; i < grp->n; i++) {
		if (grp->m[i].skip) {
			leap_member_error_line(&c->line, &grp->m[i], grp->m[i].skip);
			leap_out_raw(&c->out, c->line.s, c->line.len - 1);
			c->errors++;
			continue;
		}
		const struct leap_traj *x = &t[traj[i]];
		json_t *add = json_pack("{s:{s:I,s:I,s:I,s:f,s:I,s:I,s:b}}", "rank", "wins", (json_int_t)x->wins,
					"losses", (json_int_t)x->losses, "ties", (json_int_t)x->ties, "score", x->score,
					"group_size", (json_int_t)nt, "turns", (json_int_t)x->turns, "complete",
					complete);
		if (!add)
			leap_die("out of memory");
		leap_splice_out(&c->out, &c->line, grp->m[i].raw, grp->m[i].len, add, grp->m[i].has_key);
		json_decref(add);
	}
	free(t);
	free(traj);
}

/* The stream's callbacks (lib/group/gstream.h). */

/* Writes m with `error` = why and clears it. */
static void put_ungrouped(void *arg, struct leap_member *m, const char *why)
{
	struct ctx *c = arg;
	leap_warn("%s:%ld: %s", m->file, m->line, why);
	leap_member_error_line(&c->line, m, why);
	leap_out_raw(&c->out, c->line.s, c->line.len - 1);
	leap_member_clear(m);
	c->errors++;
}

/* Every record joins its group; a duplicate stays (written in its place as an error) but
 * does not count, and an ended trajectory counts one toward --group-size. */
static int admit(void *arg, const struct leap_group *open, const char *key, struct leap_member *m, long *want)
{
	struct ctx *c = arg;
	int dup = leap_group_mark_dup(open, key, m);
	if (!dup)
		note_speed(c, m);
	*want = c->group_size;
	return !dup && m->final;
}

/* Ranks a group taken out of the grouper and frees it. */
static void take_group(void *arg, struct leap_group *grp, int at_eof)
{
	rank_group(arg, grp, at_eof);
	leap_group_free(grp);
}

/* The options of leap-rank, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"group-size", 'g', required_argument, "G", 0,
	 "trajectories per group: a group is ranked and written as soon as\n"
	 "G of its trajectories have ended (default: regular files are\n"
	 "read twice and records keep their order; a pipe is held)"},
	{"key", 'k', required_argument, "LIST", 0,
	 "outcome key, components in order: turn, status, speed, tokens\n"
	 "(default turn)"},
	{"speed-tie", 'm', required_argument, "M", 0,
	 "relative tie margin for speed without intervals (default 0.02:\n"
	 "within 2% is a tie; with bench.speedup_ci, overlap is a tie)"},
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

int main(int argc, char **argv)
{
	struct ctx c = {0};
	leap_common_init(&c.common, &usage);
	leap_rank_defaults(&c.opts);
	int opt;
	while ((opt = leap_common_getopt(&c.common, argc, argv)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'g':
			c.group_size = leap_group_size_option(&c.common, optarg);
			break;
		case 'k':
			if (leap_rank_key_parse(optarg, &c.opts))
				leap_usage_error(&c.common, "--key: '%s' is not a list of distinct components from turn, "
							    "status, speed, tokens", optarg);
			break;
		case 'm':
			if (leap_parse_double(optarg, 0, 1e6, &c.opts.speed_tie))
				leap_usage_error(&c.common, "--speed-tie: '%s' is not a number >= 0", optarg);
			break;
		default:
			leap_usage_error(&c.common, "unhandled option");
		}
	}
	leap_out_init(&c.out, stdout);
	leap_progress_init(&c.progress, c.common.progress);
	leap_progress_input(&c.progress, argc - optind, argv + optind);
	off_t off = 0;
	int open_failed = 0;
	if (!c.group_size && leap_inputs_seekable(argc - optind, argv + optind, &off)) {
		two_pass(&c, argc - optind, argv + optind, off, &open_failed);
	} else {
		static const struct leap_gstream_ops ops = {NULL, put_ungrouped, admit, take_group};
		const struct leap_gstream_io io = {&c.records, &c.errors, &c.progress, &c.out};
		open_failed = leap_gstream(argc - optind, argv + optind, "rank", &ops, &c, &io);
	}
	leap_progress_end(&c.progress);
	report_speed(&c);
	leap_buf_free(&c.line);
	return leap_filter_exit(leap_out_close(&c.out), open_failed, c.errors);
}
