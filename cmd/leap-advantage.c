/* leap-advantage - the number the trainer consumes: an advantage per record, by the chosen estimator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h" /* first: it uses __attribute__((noreturn)), which <stdnoreturn.h> renames */
#include "group/advantage.h"
#include "group/group.h"
#include "group/gstream.h"
#include "core/hmap.h"
#include "core/jsonl.h"
#include "core/record.h"
#include "group/splice.h"
#include "group/twopass.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-advantage [OPTION]... [FILE]...\n"
	"\n"
	"Add `advantage` to every record. rank (default): the trajectory's rank score s from\n"
	"leap-rank, s * gamma^(turns - turn) when s > 0, s on every turn when s <= 0. The scalar\n"
	"estimators work on a reward per record (the `reward` field, or a preset) inside each\n"
	"group: grpo (R - mean) / (std + 1e-6), dr-grpo R - mean, rloo R - mean of the others\n"
	"(R: a trajectory's last-turn reward); on per-turn discounted returns G_t = r_t + gamma\n"
	"G_{t+1}: kevin (G - mean) / (std + 1e-6) over all the group's returns, trloo G - the\n"
	"leave-one-out mean, turn-mean G - the mean of the returns of the same group and turn.\n"
	"A group (or turn) of one keeps its value: R / (1 + 1e-6) under a group scale, R without.\n"
	"A second record of the same (group, sample, turn) becomes an error record naming the first.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 every record got an advantage, 1 some records carried an error instead\n"
	"(they were written), 2 usage or fatal error.\n";

enum { OPT_GAMMA = LEAP_OPT_PRIVATE, OPT_STATS };

/* The `skip` of a record that carries an error from an upstream program (it is written
 * unchanged and takes no part); compared by address. */
static const char UPSTREAM_ERROR[] = "the record carries an error";

struct ctx {
	struct leap_common common;
	enum leap_estimator est;
	enum leap_reward_kind reward;
	enum leap_scale scale;
	double gamma;
	long group_size;
	int stats;
	struct leap_out out;
	struct leap_progress progress;
	struct leap_buf line;
	long records, errors;
	long unusable; /* passing records whose timing the reward could not use */
	/* statistics: Welford over the advantages written, zero-signal flags per group */
	long n;
	double mean, m2;
	struct leap_hmap groups; /* group -> (void *)1 when some advantage is not zero */
	/* --scale batch: the computed groups, written at the end */
	struct leap_group **held;
	size_t nheld, capheld;
	double *vals;
	size_t nvals, capvals;
};

/* Counts advantage a of a record of `group` for --stats. */
static void note_stats(struct ctx *c, const char *group, double a)
{
	if (!c->stats)
		return;
	c->n++;
	double d = a - c->mean;
	c->mean += d / (double)c->n;
	c->m2 += d * (a - c->mean);
	void **flag = leap_hmap_put(&c->groups, group, strlen(group), NULL);
	if (a != 0)
		*flag = (void *)1;
}

/* Writes raw[0..len) with `advantage` = a; `clash`: whether it has an advantage already. */
static void put_advantage(struct ctx *c, const char *raw, size_t len, int clash, double a)
{
	if (!isfinite(a))
		leap_die("internal error: a non-finite advantage");
	if (a == 0)
		a = 0; /* no negative zero */
	json_t *add = json_pack("{s:f}", "advantage", a);
	if (!add)
		leap_die("out of memory");
	leap_splice_out(&c->out, &c->line, raw, len, add, clash);
	json_decref(add);
}

/* Writes a held member that does not take part, with `error` set (a record that carried an
 * error already is written unchanged). */
static void put_skipped(struct ctx *c, const struct leap_member *m)
{
	c->errors++;
	if (m->skip == UPSTREAM_ERROR) {
		leap_out_raw(&c->out, m->raw, m->len);
		return;
	}
	leap_member_error_line(&c->line, m, m->skip);
	leap_out_raw(&c->out, c->line.s, c->line.len - 1);
}

/* Counts a passing record whose timing the reward cannot use (lib/group/group.c). */
static void note_speed(struct ctx *c, const struct leap_member *m)
{
	if (leap_reward_uses_speed(c->reward) && m->status == LEAP_ST_PASS && m->speed_unusable)
		c->unusable++;
}

/* The reason record m takes no part, or NULL: an upstream error, or the reward it lacks. */
static const char *why_not(struct ctx *c, struct leap_member *m)
{
	const char *why = NULL;
	if (m->has_error)
		return UPSTREAM_ERROR;
	if (leap_reward_of(c->reward, m, &m->value, &why))
		return why;
	m->has_value = 1;
	note_speed(c, m);
	return NULL;
}

/* Writes a computed group's records in arrival order. */
static void put_group(struct ctx *c, struct leap_group *grp)
{
	for (size_t i = 0; i < grp->n; i++) {
		const struct leap_member *m = &grp->m[i];
		if (!m->skip && !isfinite(m->out)) {
			leap_warn("%s:%ld: the advantage is not finite (rewards too large); not written", m->file,
				  m->line);
			grp->m[i].skip = "the advantage is not finite (rewards too large)";
		}
		if (m->skip) {
			put_skipped(c, m);
			continue;
		}
		put_advantage(c, m->raw, m->len, m->has_key, m->out);
		note_stats(c, grp->key, m->out);
	}
}

/* Computes one group; writes it, or holds it for a batch scale. */
static void finish_group(struct ctx *c, struct leap_group *grp, int at_eof)
{
	if (at_eof && grp->want > 0)
		leap_warn("group '%s': end of input after %ld of %ld ended trajectories; computed with what arrived",
			  grp->key, grp->units, grp->want);
	int batch = c->scale == LEAP_SCALE_BATCH;
	leap_reward_ties(c->reward, grp->m, grp->n);
	leap_advantage_group(c->est, c->scale, c->gamma, grp, batch ? &c->vals : NULL, &c->nvals, &c->capvals);
	if (batch) {
		xgrow((void **)&c->held, &c->capheld, c->nheld + 1, sizeof(*c->held));
		c->held[c->nheld++] = grp;
		return;
	}
	put_group(c, grp);
	leap_group_free(grp);
}

/* The rank estimator: one record at a time. Takes over the member's memory. */
static void rank_record(struct ctx *c, struct leap_member *m, const char *group)
{
	if (!m->has_score && m->has_error) {
		m->skip = UPSTREAM_ERROR;
		put_skipped(c, m);
	} else if (!m->has_score) {
		m->skip = "the record has no rank.score (run leap-rank first)";
		leap_warn("%s:%ld: %s", m->file, m->line, m->skip);
		put_skipped(c, m);
	} else {
		double a = leap_advantage_rank(m->score, m->turns ? m->turns : m->turn, m->turn, c->gamma);
		put_advantage(c, m->raw, m->len, m->has_key, a);
		note_stats(c, group, a);
	}
	leap_member_clear(m);
}

/* Two-pass mode: one taking part record of a group, from the first pass. */
struct aentry {
	long seq;    /* the record's number in the input */
	long sample; /* -1 when absent */
	long turn;
	double value;
	int status;                      /* what a speed tie recomputes the reward from */
	double speedup, speed_lo, speed_hi;
};

struct agroup {
	const char *key; /* the group key (owned by the table of groups) */
	uint32_t tag;    /* its index in struct twopass.list */
	struct aentry *e;
	size_t n, cap;
};

/* The two-pass mode's state. */
struct twopass {
	struct ctx *c;
	struct leap_hmap groups; /* group key -> struct agroup */
	struct agroup **list;    /* the groups by tag */
	size_t nlist, caplist;
	double *adv;             /* the advantage of each record, by number */
};

/* qsort order of a group's entries: by sample, turn, then input order (the order the
 * estimators have always summed a two-pass group in). */
static int cmp_entry(const void *a, const void *b)
{
	const struct aentry *x = a, *y = b;
	if (x->sample != y->sample)
		return x->sample < y->sample ? -1 : 1;
	if (x->turn != y->turn)
		return x->turn < y->turn ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Computes a two-pass group into adv[] with the same estimator code as the streaming mode. */
static void compute_agroup(struct twopass *tp, struct agroup *g)
{
	struct ctx *c = tp->c;
	struct leap_group grp = {0};
	grp.m = xcalloc(g->n ? g->n : 1, sizeof(*grp.m));
	grp.n = g->n;
	for (size_t i = 0; i < g->n; i++) {
		grp.m[i].sample = g->e[i].sample;
		grp.m[i].turn = g->e[i].turn;
		grp.m[i].value = g->e[i].value;
		grp.m[i].has_value = 1;
		grp.m[i].status = g->e[i].status;
		grp.m[i].speedup = g->e[i].speedup;
		grp.m[i].speed_lo = g->e[i].speed_lo;
		grp.m[i].speed_hi = g->e[i].speed_hi;
	}
	int batch = c->scale == LEAP_SCALE_BATCH;
	leap_reward_ties(c->reward, grp.m, grp.n);
	leap_advantage_group(c->est, c->scale, c->gamma, &grp, batch ? &c->vals : NULL, &c->nvals, &c->capvals);
	for (size_t i = 0; i < g->n; i++)
		tp->adv[g->e[i].seq] = grp.m[i].out;
	free(grp.m);
}

/* First pass: 1 when a record takes part (no upstream error, a reward). */
static int tp_takes_part(void *arg, const struct leap_member *m)
{
	struct twopass *tp = arg;
	double value;
	const char *why;
	return !m->has_error && !leap_reward_of(tp->c->reward, m, &value, &why);
}

/* First pass: keeps the reward of a record that takes part; the tag names its group. */
static uint32_t tp_summarise(void *arg, const struct leap_member *m, const struct leap_buf *key)
{
	struct twopass *tp = arg;
	double value;
	const char *why;
	if (leap_reward_of(tp->c->reward, m, &value, &why))
		leap_die("internal error: a record that takes part has no reward");
	note_speed(tp->c, m);
	int added;
	void **slot = leap_hmap_put(&tp->groups, key->s, key->len, &added);
	if (!*slot) {
		if (tp->nlist >= LEAP_TWOPASS_NONE)
			leap_die("more than %u groups", (unsigned)LEAP_TWOPASS_NONE);
		struct agroup *g = xcalloc(1, sizeof(*g));
		g->tag = (uint32_t)tp->nlist;
		*slot = g;
		xgrow((void **)&tp->list, &tp->caplist, tp->nlist + 1, sizeof(*tp->list));
		tp->list[tp->nlist++] = g;
	}
	struct agroup *g = *slot;
	xgrow((void **)&g->e, &g->cap, g->n + 1, sizeof(*g->e));
	g->e[g->n++] = (struct aentry){m->seq,	  m->sample,  m->turn,	   value,
				       m->status, m->speedup, m->speed_lo, m->speed_hi};
	return g->tag;
}

/* Between the passes: computes every group (and a batch scale). */
static void tp_between(void *arg, long records)
{
	struct twopass *tp = arg;
	struct ctx *c = tp->c;
	tp->adv = xcalloc(records ? (size_t)records : 1, sizeof(double));
	size_t pos = 0;
	const char *key;
	void *val;
	while (leap_hmap_next(&tp->groups, &pos, &key, NULL, &val)) {
		struct agroup *g = val;
		g->key = key;
		qsort(g->e, g->n, sizeof(*g->e), cmp_entry);
		compute_agroup(tp, g);
		free(g->e);
		g->e = NULL;
	}
	if (c->scale == LEAP_SCALE_BATCH) {
		double sd = leap_std(c->vals, c->nvals);
		for (long i = 0; i < records; i++)
			tp->adv[i] /= sd + LEAP_ADV_EPS_BATCH;
		free(c->vals);
		c->vals = NULL;
		c->nvals = c->capvals = 0;
	}
}

/* Writes a record that does not take part: raw[0..len) with `error` = why. */
static void put_error(struct ctx *c, const char *raw, size_t len, const char *file, long line, const char *why)
{
	struct leap_member m = {.raw = (char *)raw, .len = len, .file = file, .line = line, .skip = why};
	leap_warn("%s:%ld: %s", file, line, why);
	put_skipped(c, &m);
}

/* Second pass, a record that takes part: written with its advantage (an error when it is not
 * finite). */
static void tp_put(void *arg, long seq, uint32_t tag, const char *raw, size_t len, int has_key, const char *file,
		   long line)
{
	struct twopass *tp = arg;
	double a = tp->adv[seq];
	if (!isfinite(a)) {
		put_error(tp->c, raw, len, file, line, "the advantage is not finite (rewards too large)");
		return;
	}
	put_advantage(tp->c, raw, len, has_key, a);
	note_stats(tp->c, tp->list[tag]->key, a);
}

/* Second pass, a record scanned again: the reason it takes no part of this program's own
 * (an upstream error, no group, no reward), or NULL. */
static const char *tp_refuse(void *arg, struct leap_member *m, int has_group)
{
	struct twopass *tp = arg;
	double value;
	const char *why = NULL;
	if (m->has_error)
		return UPSTREAM_ERROR;
	if (!has_group)
		return LEAP_NO_GROUP;
	if (leap_reward_of(tp->c->reward, m, &value, &why))
		return why;
	return NULL;
}

/* Second pass, a record that takes no part: an upstream error as it is, else an error record
 * saying why. */
static void tp_refused(void *arg, struct leap_member *m, const char *why)
{
	struct twopass *tp = arg;
	if (why == UPSTREAM_ERROR) {
		m->skip = why;
		put_skipped(tp->c, m);
	} else {
		put_error(tp->c, m->raw, m->len, m->file, m->line, why);
	}
}

/* The two-pass mode of the scalar estimators (lib/group/twopass.h): first collect every group's
 * rewards (a few dozen bytes per record) and compute, then write every record in input order. */
static void two_pass(struct ctx *c, int nfiles, char *const *files, off_t off, int *open_failed)
{
	static const struct leap_twopass_ops ops = {
		tp_takes_part, tp_summarise, tp_between, tp_put, tp_refuse, tp_refused,
		"the input changed between the two passes",
	};
	struct twopass tp = {.c = c};
	const struct leap_gstream_io io = {&c->records, &c->errors, &c->progress, &c->out};
	*open_failed = leap_twopass(nfiles, files, off, "advantage", &ops, &tp, &io);
	for (size_t i = 0; i < tp.nlist; i++) {
		free(tp.list[i]->e);
		free(tp.list[i]);
	}
	free(tp.list);
	leap_hmap_free(&tp.groups);
	free(tp.adv);
}

/* The stream's callbacks (lib/group/gstream.h). */

/* A record with no group: the rank estimator takes it alone; otherwise it takes no part
 * (an upstream error is written unchanged). Clears m. */
static void put_ungrouped(void *arg, struct leap_member *m, const char *why)
{
	struct ctx *c = arg;
	if (c->est == LEAP_EST_RANK) {
		rank_record(c, m, "");
		return;
	}
	m->skip = m->has_error ? UPSTREAM_ERROR : why;
	if (m->skip != UPSTREAM_ERROR)
		leap_warn("%s:%ld: %s", m->file, m->line, m->skip);
	put_skipped(c, m);
	leap_member_clear(m);
}

/* The rank estimator writes each record at once; the scalar ones hold it in its group (a
 * duplicate, or a record without the reward, in its place without taking part) and count an
 * ended trajectory toward --group-size. */
static int admit(void *arg, const struct leap_group *open, const char *key, struct leap_member *m, long *want)
{
	struct ctx *c = arg;
	if (c->est == LEAP_EST_RANK) {
		rank_record(c, m, key);
		return -1;
	}
	int dup = leap_group_mark_dup(open, key, m);
	if (!dup) {
		m->skip = why_not(c, m);
		if (m->skip && m->skip != UPSTREAM_ERROR)
			leap_warn("%s:%ld: %s", m->file, m->line, m->skip);
	}
	*want = c->group_size;
	return !dup && m->final;
}

/* Computes a group taken out of the grouper (finish_group). */
static void take_group(void *arg, struct leap_group *grp, int at_eof)
{
	finish_group(arg, grp, at_eof);
}

/* Reads the records one at a time (rank) or group by group (the scalar estimators, from a
 * pipe or with --group-size) and writes them; a batch scale writes every group at the end. */
static int stream(struct ctx *c, int nfiles, char *const *files)
{
	static const struct leap_gstream_ops ops = {NULL, put_ungrouped, admit, take_group};
	const struct leap_gstream_io io = {&c->records, &c->errors, &c->progress, &c->out};
	int open_failed = leap_gstream(nfiles, files, "advantage", &ops, c, &io);
	if (c->scale == LEAP_SCALE_BATCH) {
		double sd = leap_std(c->vals, c->nvals);
		for (size_t g = 0; g < c->nheld; g++) {
			struct leap_group *h = c->held[g];
			for (size_t i = 0; i < h->n; i++)
				h->m[i].out /= sd + LEAP_ADV_EPS_BATCH;
			put_group(c, h);
			leap_group_free(h);
		}
		free(c->held);
		free(c->vals);
	}
	return open_failed;
}

/* The options of leap-advantage, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"preset", 'p', required_argument, "NAME", 0,
	 "a method's settings: leap (rank, gamma 0.4), grpo-mt (grpo, binary),\n"
	 "kevin (kevin, kevin reward, gamma 0.4), drkernel (trloo,\n"
	 "kernelgym-speedup, gamma 1); --reward, --gamma, --scale override"},
	{"estimator", 'e', required_argument, "NAME", 0,
	 "rank (default), grpo, dr-grpo, rloo, kevin, trloo, turn-mean"},
	{"reward", 'r', required_argument, "NAME", 0,
	 "field (default: the record's `reward`), binary, kevin, kernelgym,\n"
	 "kernelgym-speedup (speedups count only when bench.status is ok)"},
	{"gamma", 0, required_argument, "G", OPT_GAMMA,
	 "discount (default 1 for trloo, 0.4 for the others)"},
	{"scale", 's', required_argument, "S", 0,
	 "group, batch or none: divide by std + 1e-6 of the group's values,\n"
	 "by std + 1e-4 of all values in the input, or not at all (default\n"
	 "group for grpo and kevin, none for the others; batch holds the input)"},
	{"group-size", 'g', required_argument, "G", 0,
	 "trajectories per group: a group is computed and written as soon\n"
	 "as G of its trajectories have ended (default: regular files are\n"
	 "read twice and records keep their order; a pipe is held)"},
	{"stats", 0, no_argument, NULL, OPT_STATS,
	 "print mean and std of the advantages and the share of groups\n"
	 "whose advantages are all zero on stderr at the end"},
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

/* Parses the options into *c; a preset's settings fill what the flags did not set. */
static void parse_args(struct ctx *c, int argc, char **argv)
{
	const struct leap_adv_preset *preset = NULL;
	int opt, est_given = 0, reward_given = 0;
	while ((opt = leap_common_getopt(&c->common, argc, argv)) != -1) {
		if (leap_common_option(&c->common, opt, optarg))
			continue;
		switch (opt) {
		case 'p':
			if (!(preset = leap_adv_preset(optarg)))
				leap_usage_error(&c->common, "--preset: '%s' is not leap, grpo-mt, kevin or drkernel", optarg);
			break;
		case 'e':
			if (leap_estimator_parse(optarg, &c->est))
				leap_usage_error(&c->common, "--estimator: '%s' is not rank, grpo, dr-grpo, rloo, kevin, "
							     "trloo or turn-mean", optarg);
			est_given = 1;
			break;
		case 'r':
			if (leap_reward_parse(optarg, &c->reward))
				leap_usage_error(&c->common, "--reward: '%s' is not field, binary, kevin, kernelgym or "
							     "kernelgym-speedup", optarg);
			reward_given = 1;
			break;
		case OPT_GAMMA:
			if (leap_parse_double(optarg, 0, 1, &c->gamma))
				leap_usage_error(&c->common, "--gamma: '%s' is not a number from 0 to 1", optarg);
			break;
		case 's':
			if (leap_scale_parse(optarg, &c->scale))
				leap_usage_error(&c->common, "--scale: '%s' is not group, batch or none", optarg);
			break;
		case 'g':
			c->group_size = leap_group_size_option(&c->common, optarg);
			break;
		case OPT_STATS:
			c->stats = 1;
			break;
		default:
			leap_usage_error(&c->common, "unhandled option");
		}
	}
	if (preset && !est_given) {
		c->est = preset->est;
		if (preset->has_reward && !reward_given)
			c->reward = preset->reward;
		if (isnan(c->gamma) && !isnan(preset->gamma))
			c->gamma = preset->gamma;
		if (c->scale == LEAP_SCALE_DEFAULT)
			c->scale = preset->scale;
	} else if (preset) {
		leap_usage_error(&c->common, "--preset and --estimator exclude each other: the preset names its "
					     "estimator");
	}
	if (c->est == LEAP_EST_RANK) {
		if (c->scale == LEAP_SCALE_GROUP || c->scale == LEAP_SCALE_BATCH)
			leap_usage_error(&c->common, "--scale: rank scores are scale-free; use it with a scalar estimator");
		if (reward_given)
			leap_usage_error(&c->common, "--reward applies to the scalar estimators, not to rank");
	}
	if (c->scale == LEAP_SCALE_DEFAULT)
		c->scale = c->est == LEAP_EST_GRPO || c->est == LEAP_EST_KEVIN ? LEAP_SCALE_GROUP : LEAP_SCALE_NONE;
	if (isnan(c->gamma))
		c->gamma = leap_estimator_gamma(c->est);
}

int main(int argc, char **argv)
{
	struct ctx c = {.est = LEAP_EST_RANK, .reward = LEAP_REWARD_FIELD, .gamma = NAN};
	leap_common_init(&c.common, &usage);
	parse_args(&c, argc, argv);
	leap_out_init(&c.out, stdout);
	leap_progress_init(&c.progress, c.common.progress);
	leap_progress_input(&c.progress, argc - optind, argv + optind);
	off_t off = 0;
	int open_failed = 0;
	if (c.est != LEAP_EST_RANK && !c.group_size && leap_inputs_seekable(argc - optind, argv + optind, &off))
		two_pass(&c, argc - optind, argv + optind, off, &open_failed);
	else
		open_failed = stream(&c, argc - optind, argv + optind);
	leap_progress_end(&c.progress);
	if (c.unusable)
		leap_warn("%ld passing record%s a timing whose bench.status is not \"ok\" (noisy, suspicious or "
			  "missing): the reward counts %s speedup as 0", c.unusable, c.unusable == 1 ? " has" : "s have",
			  c.unusable == 1 ? "its" : "their");
	if (c.stats) {
		long zero = 0, ngroups = (long)leap_hmap_count(&c.groups);
		size_t pos = 0;
		const char *key;
		void *val;
		while (leap_hmap_next(&c.groups, &pos, &key, NULL, &val))
			zero += !val;
		double sd = c.n > 1 ? sqrt(c.m2 / (double)(c.n - 1)) : 0;
		fprintf(stderr,
			"%s: %s: %ld advantages, mean %.6g, std %.6g; %ld groups, %ld with every advantage zero "
			"(%.1f%%); %ld errors\n",
			leap_prog(), leap_estimator_name(c.est), c.n, c.n ? c.mean : 0.0, sd, ngroups, zero,
			ngroups ? 100.0 * (double)zero / (double)ngroups : 0.0, c.errors);
	}
	leap_hmap_free(&c.groups);
	leap_buf_free(&c.line);
	return leap_filter_exit(leap_out_close(&c.out), open_failed, c.errors);
}
