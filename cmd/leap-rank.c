/* leap-rank - rank-based reward: every pair of trajectories in a group plays once; wins become a score. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "group.h"
#include "hmap.h"
#include "jsonl.h"
#include "rank.h"
#include "record.h"
#include "util.h"
#include "banned.h"

static const char usage[] =
	"usage: leap-rank [OPTION]... [FILE]...\n"
	"\n"
	"Rank the finished trajectories of each GRPO group by a pairwise tournament. A trajectory\n"
	"is the records of one (group, sample), all turns. Each pair plays once on the outcome key\n"
	"(default turn,speed,tokens): solved at an earlier turn beats solved later beats never\n"
	"solved; between solved ones, a speedup greater by more than the tie margin wins; then\n"
	"fewer total tokens wins. Every record gets rank = {wins, losses, ties, score, group_size,\n"
	"turns, complete} with score = (wins - losses) / (group_size - 1).\n"
	"\n"
	"  -g, --group-size G     trajectories per group: a group is ranked and written as soon as\n"
	"                         G of its trajectories have ended (default: regular files are\n"
	"                         read twice and records keep their order; a pipe is held)\n"
	"  -k, --key LIST         outcome key, components in order: turn, status, speed, tokens\n"
	"                         (default turn,speed,tokens)\n"
	"  -m, --speed-tie M      relative tie margin for speed (default 0.02: within 2% is a tie)\n"
	"      --progress, --no-progress  force the progress line on stderr on or off\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
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
};

/* A group in the two-pass mode: the summaries of its trajectories. */
struct tgroup {
	struct leap_traj *t;
	long *id;      /* the trajectory's sample, or -1 - seq for a record without one */
	size_t n, cap;
	int complete;
};

/* The trajectory `id` of group g, added when absent. */
static struct leap_traj *traj_of(struct tgroup *g, long id, int create)
{
	for (size_t j = g->n; j-- > 0;)
		if (g->id[j] == id)
			return &g->t[j];
	if (!create)
		return NULL;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->t = xrealloc(g->t, g->cap * sizeof(*g->t));
		g->id = xrealloc(g->id, g->cap * sizeof(*g->id));
	}
	g->id[g->n] = id;
	leap_rank_traj_init(&g->t[g->n]);
	return &g->t[g->n++];
}

/* Plays a two-pass group's tournament once all its records were seen. */
static void rank_tgroup(const char *key, void *data, void *arg)
{
	struct ctx *c = arg;
	struct tgroup *g = data;
	leap_rank_tournament(&c->opts, g->t, g->n);
	long unended = 0;
	for (size_t j = 0; j < g->n; j++)
		unended += !g->t[j].final;
	g->complete = !unended;
	if (unended)
		leap_warn("group '%s': %ld trajector%s not ended (no record with prune.decision final); ranked "
			  "with what arrived", key, unended, unended == 1 ? "y has" : "ies have");
}

/* Frees a two-pass group. */
static void free_tgroup(const char *key, void *data, void *arg)
{
	(void)key;
	(void)arg;
	struct tgroup *g = data;
	free(g->t);
	free(g->id);
	free(g);
}

/* The two-pass mode: summarise every trajectory, rank, then write every record in input
 * order. Memory: the trajectories' summaries, not the records. */
static void two_pass(struct ctx *c, int nfiles, char *const *files, off_t off, int *open_failed)
{
	struct leap_hmap groups = {0};
	struct leap_buf key = {0};
	struct leap_member m;
	json_t *bad;
	int has_group;
	struct leap_in in;
	leap_in_init(&in, nfiles, files, stdout);
	long seq = 0;
	while (leap_member_peek(&in, seq, &m, &key, &has_group, &bad) != LEAP_READ_EOF) {
		if (bad) {
			json_decref(bad);
		} else if (has_group) {
			void **slot = leap_hmap_put(&groups, key.s, key.len, NULL);
			if (!*slot)
				*slot = xcalloc(1, sizeof(struct tgroup));
			leap_rank_traj_add(traj_of(*slot, m.sample >= 0 ? m.sample : -1 - seq, 1), &m);
			leap_member_clear(&m);
		} else {
			leap_member_clear(&m);
		}
		seq++;
	}
	leap_in_close(&in);
	for (size_t i = 0; i < groups.cap; i++)
		if (groups.slots[i].key)
			rank_tgroup(groups.slots[i].key, groups.slots[i].val, c);
	/* the second pass */
	leap_inputs_rewind(nfiles, files, off);
	leap_in_init(&in, nfiles, files, stdout);
	seq = 0;
	enum leap_read r;
	while ((r = leap_member_next(&in, seq, "rank", &m, &key, &has_group, &bad)) != LEAP_READ_EOF) {
		c->records++;
		struct tgroup *g = r == LEAP_READ_RECORD && has_group ? leap_hmap_get(&groups, key.s, key.len) : NULL;
		struct leap_traj *x = g ? traj_of(g, m.sample >= 0 ? m.sample : -1 - seq, 0) : NULL;
		if (r == LEAP_READ_BAD) {
			leap_out_write(&c->out, bad);
			json_decref(bad);
			c->errors++;
		} else if (!x) {
			const char *why = has_group ? "the input changed between the two passes"
				: "the record has neither 'group' nor 'task'";
			leap_warn("%s:%ld: %s", m.file, m.line, why);
			leap_buf_reset(&c->line);
			if (leap_splice_error(&c->line, m.raw, m.len, m.file, m.line, why))
				leap_die("internal error: a scanned record is not an object");
			leap_out_raw(&c->out, c->line.s, c->line.len - 1);
			c->errors++;
		} else {
			json_t *add = json_pack("{s:{s:I,s:I,s:I,s:f,s:I,s:I,s:b}}", "rank", "wins", (json_int_t)x->wins,
						"losses", (json_int_t)x->losses, "ties", (json_int_t)x->ties, "score",
						x->score, "group_size", (json_int_t)g->n, "turns", (json_int_t)x->turns,
						"complete", g->complete);
			if (!add)
				leap_die("out of memory");
			leap_buf_reset(&c->line);
			if (leap_splice_line_known(&c->line, m.raw, m.len, NULL, add, m.has_key))
				leap_die("internal error: a scanned record is not an object");
			leap_out_raw(&c->out, c->line.s, c->line.len - 1);
			json_decref(add);
		}
		if (r == LEAP_READ_RECORD)
			leap_member_clear(&m);
		seq++;
		leap_progress_update(&c->progress, c->records, c->errors);
	}
	*open_failed = in.open_failed;
	leap_in_close(&in);
	leap_buf_free(&key);
	for (size_t i = 0; i < groups.cap; i++)
		if (groups.slots[i].key)
			free_tgroup(groups.slots[i].key, groups.slots[i].val, NULL);
	leap_hmap_free(&groups);
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
		const struct leap_traj *x = &t[traj[i]];
		json_t *add = json_pack("{s:{s:I,s:I,s:I,s:f,s:I,s:I,s:b}}", "rank", "wins", (json_int_t)x->wins,
					"losses", (json_int_t)x->losses, "ties", (json_int_t)x->ties, "score", x->score,
					"group_size", (json_int_t)nt, "turns", (json_int_t)x->turns, "complete",
					complete);
		if (!add)
			leap_die("out of memory");
		leap_buf_reset(&c->line);
		if (leap_splice_line_known(&c->line, grp->m[i].raw, grp->m[i].len, NULL, add, grp->m[i].has_key))
			leap_die("internal error: a held record is not an object");
		leap_out_raw(&c->out, c->line.s, c->line.len - 1);
		json_decref(add);
	}
	free(t);
	free(traj);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		LEAP_COMMON_LONGOPTS,
		{"group-size", required_argument, NULL, 'g'},
		{"key", required_argument, NULL, 'k'},
		{"speed-tie", required_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	struct ctx c = {0};
	leap_common_init(&c.common, usage);
	leap_rank_defaults(&c.opts);
	int opt;
	int64_t v;
	while ((opt = getopt_long(argc, argv, "g:k:m:hV", longopts, NULL)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'g':
			if (leap_parse_i64(optarg, 1, 1 << 20, &v))
				leap_usage_error(&c.common, "--group-size: '%s' is not an integer from 1 to %d", optarg,
						 1 << 20);
			c.group_size = (long)v;
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
	off_t off = 0;
	if (!c.group_size && leap_inputs_seekable(argc - optind, argv + optind, &off)) {
		int open_failed = 0;
		two_pass(&c, argc - optind, argv + optind, off, &open_failed);
		leap_progress_end(&c.progress);
		leap_buf_free(&c.line);
		int rc = leap_out_close(&c.out);
		if (rc)
			return rc;
		if (open_failed)
			return LEAP_EXIT_FATAL;
		return c.errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
	}
	struct leap_in in;
	leap_in_init(&in, argc - optind, argv + optind, stdout);
	struct leap_grouper groups;
	leap_grouper_init(&groups);
	struct leap_buf key = {0};
	struct leap_member m;
	json_t *bad;
	int has_group;
	enum leap_read r;
	while ((r = leap_member_next(&in, c.records, "rank", &m, &key, &has_group, &bad)) != LEAP_READ_EOF) {
		c.records++;
		if (r == LEAP_READ_BAD) {
			leap_out_write(&c.out, bad);
			json_decref(bad);
			c.errors++;
		} else if (!has_group) {
			const char *why = "the record has neither 'group' nor 'task'";
			leap_warn("%s:%ld: %s", m.file, m.line, why);
			leap_buf_reset(&c.line);
			if (leap_splice_error(&c.line, m.raw, m.len, m.file, m.line, why))
				leap_die("internal error: a scanned record is not an object");
			leap_out_raw(&c.out, c.line.s, c.line.len - 1);
			leap_member_clear(&m);
			c.errors++;
		} else {
			struct leap_group *grp = leap_grouper_add(&groups, key.s, &m, m.final, c.group_size);
			if (grp) {
				rank_group(&c, grp, 0);
				leap_group_free(grp);
			}
		}
		leap_progress_update(&c.progress, c.records, c.errors);
	}
	leap_buf_free(&key);
	struct leap_group *grp;
	while ((grp = leap_grouper_pop(&groups))) {
		rank_group(&c, grp, 1);
		leap_group_free(grp);
	}
	leap_grouper_free(&groups);
	int open_failed = in.open_failed;
	leap_in_close(&in);
	leap_progress_end(&c.progress);
	leap_buf_free(&c.line);
	int rc = leap_out_close(&c.out);
	if (rc)
		return rc;
	if (open_failed)
		return LEAP_EXIT_FATAL;
	return c.errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
