/* report.c - run summaries: pass rates by turn, recovery, fast_p, speedups, the DCP ledger, advantages. */
/*
 * A run's records are read once and may be many, so each is folded as it is read into a small
 * entry per trajectory (struct traj: a (group, sample) across its turns, a status per turn, its
 * best speedup) and into counters; the records themselves are never held. The summary is
 * computed once into one JSON object (leap_report_json), and the text, markdown and CSV tables
 * are all printed from that object, so that the formats cannot disagree. Its metrics are per
 * trajectory (passed by turn k, fast_p), as multi-turn RL needs; KernelBench's fast_p per answer
 * is kept beside them, labelled, because the two differ and both get quoted.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "group.h"
#include "jsonl.h"
#include "report.h"
#include "svg.h"
#include "util.h"
#include "banned.h"

const double leap_report_fastp[LEAP_REPORT_NFASTP] = {0, 0.5, 0.8, 1, 1.5, 2};

/* What a speedup is against (leap-bench's bench.baseline_kind); 0: not said (older records). */
static const char *const against[] = {"unknown", "vendor", "kernel", "reference"};
#define NAGAINST (sizeof against / sizeof against[0])
/* ... said in words */
static const char *const against_words[NAGAINST] = {"an unnamed baseline (records of before baseline_kind)",
						     "a vendor library (cuBLAS, cuDNN)", "a hand-written CUDA kernel",
						     "the C reference (cc -O2)"};

/* One trajectory: a (group, sample) across its turns. */
struct traj {
	char *task;
	signed char st[LEAP_REPORT_MAX_TURNS + 1]; /* status per turn; -1 unseen */
	int first_pass, last_turn;
	double speedup;  /* best speedup of a passing record; < 0 unknown */
	double speed_lo; /* best lower end of an ok speedup's interval (the speedup itself when it has
			  * none: records of leap 0.1); < 0 unknown */
	double roofline; /* best roofline of a passing record; < 0 unknown */
	int against;     /* the baseline of that speedup (bench.baseline_kind): an index of against[] */
	int pruned_early; /* ended unsolved by an easy/hopeless decision before the budget */
	/* where each turn's record was read (line 0: none yet), to name it when a second comes */
	uint32_t line[LEAP_REPORT_MAX_TURNS + 1];
	uint16_t file[LEAP_REPORT_MAX_TURNS + 1]; /* index into leap_report.files */
};

enum { G_EXPAND = 1, G_EASY = 2, G_HOPELESS = 4, G_MAX_TURNS = 8, G_OTHER = 16, G_SOLVED = 32 };

struct advgroup {
	long n;
	double min, max;
};

void leap_report_init(struct leap_report *r, int max_turns)
{
	memset(r, 0, sizeof(*r));
	r->max_turns = max_turns;
}

static double ms_field(const json_t *rec, const char *obj, const char *key)
{
	const json_t *o = json_object_get(rec, obj);
	double v = leap_get_num(o, key, 0);
	return isfinite(v) && v > 0 ? v : 0;
}

/* Counts the timing of a passing record: ok, noisy (with its interval's width and target, or
 * too few pairs for one) or suspicious; other bench statuses are no timing. */
static void count_timing(struct leap_report *r, const json_t *bench)
{
	const char *st = leap_get_str(bench, "status", "");
	int ok = !strcmp(st, "ok"), noisy = !strcmp(st, "noisy"), susp = !strcmp(st, "suspicious");
	if (!ok && !noisy && !susp)
		return;
	r->timed++;
	r->timed_ok += ok;
	r->timed_suspicious += susp;
	if (!noisy)
		return;
	r->timed_noisy++;
	double w = leap_get_num(bench, "speedup_rel_ci", -1), tg = leap_get_num(bench, "target_ci", -1);
	if (!(w > 0) || !isfinite(w)) {
		r->noisy_few++;
		return;
	}
	if (r->timed_noisy - r->noisy_few == 1 || w < r->noisy_ci_lo)
		r->noisy_ci_lo = w;
	if (w > r->noisy_ci_hi)
		r->noisy_ci_hi = w;
	if (tg > 0 && (!(r->target_lo > 0) || tg < r->target_lo))
		r->target_lo = tg;
	if (tg > r->target_hi)
		r->target_hi = tg;
}

/* The trajectory of (group, sample), created for `task` when new. */
static struct traj *traj_of(struct leap_report *r, const char *task, const char *group, json_int_t sample)
{
	char *key = xasprintf("%s\x1f%lld", group, (long long)sample);
	int added;
	struct traj **tp = (struct traj **)leap_hmap_put(&r->trajs, key, strlen(key), &added);
	free(key);
	if (added) {
		*tp = xcalloc(1, sizeof(struct traj));
		(*tp)->task = xstrdup(task);
		memset((*tp)->st, -1, sizeof((*tp)->st));
		(*tp)->speedup = (*tp)->roofline = (*tp)->speed_lo = -1;
	}
	return *tp;
}

/* The index of input name `file` in r->files (added when new). */
static uint16_t file_id(struct leap_report *r, const char *file)
{
	for (size_t i = 0; i < r->nfiles; i++)
		if (r->files[i] == file || !strcmp(r->files[i], file))
			return (uint16_t)i;
	if (r->nfiles == UINT16_MAX)
		return UINT16_MAX - 1; /* more inputs than that: the last ones share a name */
	xgrow((void **)&r->files, &r->capfiles, r->nfiles + 1, sizeof(*r->files));
	r->files[r->nfiles] = file;
	return (uint16_t)r->nfiles++;
}

/* KernelBench's metric counts answers, not trajectories: each record with a status, at its
 * turn and in all turns ([0]), correct or not, timed or not. */
static void kb_add(struct leap_report *r, const json_t *rec, enum leap_status st, json_int_t turn)
{
	if (st == LEAP_ST_NONE)
		return;
	int k = turn >= 1 && turn <= LEAP_REPORT_MAX_TURNS ? (int)turn : 0;
	const json_t *bench = json_object_get(rec, "bench");
	double s = leap_get_num(bench, "speedup", -1);
	int timed = st == LEAP_ST_PASS && isfinite(s) && s > 0;
	int a = 0;
	if (timed)
		for (int i = 1; i < (int)NAGAINST; i++)
			if (!strcmp(leap_get_str(bench, "baseline_kind", ""), against[i]))
				a = i;
	for (int j = 0; j < 2; j++) {
		int at = j ? k : 0;
		if (j && !k)
			break;
		r->kb_answers[at]++;
		r->kb_fast[at][0] += st == LEAP_ST_PASS;
		r->kb_fast[at][1] += timed && s > 1;
		r->kb_fast[at][2] += timed && s > 2;
		r->kb_timed[at] += timed;
	}
	r->kb_against[a] += timed;
}

void leap_report_add(struct leap_report *r, const json_t *rec)
{
	leap_report_add_at(r, rec, NULL, 0);
}

void leap_report_add_at(struct leap_report *r, const json_t *rec, const char *file, long line)
{
	r->records++;
	if (json_object_get(rec, "error")) {
		r->errors++;
		return;
	}
	const char *task = leap_get_str(rec, "task", NULL);
	const char *group = leap_get_str(rec, "group", task);
	json_int_t sample = leap_get_int(rec, "sample", -1);
	json_int_t turn = leap_get_int(rec, "turn", 1);
	/* a second record of a (group, sample, turn) is not counted (lib/group.h) */
	if (file && task && group && sample >= 0 && turn >= 1 && turn <= LEAP_REPORT_MAX_TURNS && line > 0 &&
	    line <= (long)UINT32_MAX) {
		struct traj *t = traj_of(r, task, group, sample);
		if (t->line[turn]) {
			char *why = leap_dup_message(group, (long)sample, (long)turn, r->files[t->file[turn]],
						     (long)t->line[turn]);
			leap_warn("%s:%ld: %s", file, line, why);
			free(why);
			r->errors++;
			r->duplicates++;
			return;
		}
		t->line[turn] = (uint32_t)line;
		t->file[turn] = file_id(r, file);
	}
	enum leap_status st = leap_status_parse(leap_get_str(rec, "status", NULL));
	if (st != LEAP_ST_NONE)
		r->status[st]++;
	kb_add(r, rec, st, turn);
	enum leap_backend b;
	if (!leap_backend_parse(leap_get_str(rec, "backend", ""), &b))
		r->backends |= 1u << b;

	const json_t *compile = json_object_get(rec, "compile");
	double cs = json_is_true(json_object_get(compile, "cached")) ? 0 : ms_field(rec, "compile", "ms") / 1000;
	double rs = (ms_field(rec, "verify", "ms") + ms_field(rec, "bench", "ms")) / 1000;
	r->compile_s += cs;
	r->run_s += rs;
	if (cs > 0 || rs > 0)
		r->cost_records++;

	const json_t *adv = json_object_get(rec, "advantage");
	if (json_is_number(adv)) {
		double a = json_number_value(adv);
		xgrow((void **)&r->adv, &r->capadv, r->nadv + 1, sizeof(double));
		r->adv[r->nadv++] = a;
		if (group) {
			int added;
			struct advgroup **g = (struct advgroup **)leap_hmap_put(&r->advgroups, group, strlen(group), &added);
			if (added) {
				*g = xcalloc(1, sizeof(**g));
				(*g)->min = (*g)->max = a;
			}
			(*g)->n++;
			(*g)->min = fmin((*g)->min, a);
			(*g)->max = fmax((*g)->max, a);
		}
	}

	if (!task || !group || sample < 0 || turn < 1 || turn > LEAP_REPORT_MAX_TURNS) {
		r->ignored++;
		return;
	}
	if (turn > r->max_turn)
		r->max_turn = (int)turn;

	struct traj *t = traj_of(r, task, group, sample);
	const json_t *prune = json_object_get(rec, "prune");
	t->st[turn] = (signed char)st;
	if (turn >= t->last_turn) {
		t->last_turn = (int)turn;
		const char *decision = leap_get_str(prune, "decision", NULL);
		const char *reason = leap_get_str(prune, "reason", "");
		t->pruned_early = st != LEAP_ST_PASS && decision && !strcmp(decision, "final") &&
				  (!strcmp(reason, "easy") || !strcmp(reason, "hopeless"));
	}
	if (st == LEAP_ST_PASS) {
		if (!t->first_pass || turn < t->first_pass)
			t->first_pass = (int)turn;
		const json_t *bench = json_object_get(rec, "bench");
		double s = leap_get_num(bench, "speedup", -1), rf = leap_get_num(bench, "roofline", -1);
		if (isfinite(s) && s > t->speedup) {
			t->speedup = s;
			const char *kind = leap_get_str(bench, "baseline_kind", "");
			t->against = 0;
			for (int a = 1; a < (int)NAGAINST; a++)
				if (!strcmp(kind, against[a]))
					t->against = a;
		}
		if (isfinite(rf) && rf > t->roofline)
			t->roofline = rf;
		const json_t *ci = json_object_get(bench, "speedup_ci");
		double lo = json_array_size(ci) == 2 ? json_number_value(json_array_get(ci, 0)) : s;
		if (s > 0 && isfinite(lo) && lo > t->speed_lo)
			t->speed_lo = lo;
		count_timing(r, bench);
	}

	if (json_is_object(prune)) {
		char *gk = xasprintf("%s\x1f%lld", group, (long long)turn);
		void **flags = leap_hmap_put(&r->groups, gk, strlen(gk), NULL);
		free(gk);
		const char *decision = leap_get_str(prune, "decision", "");
		const char *reason = leap_get_str(prune, "reason", "");
		const char *verdict = leap_get_str(prune, "verdict", reason);
		uintptr_t f = (uintptr_t)*flags;
		if (!strcmp(decision, "expand"))
			f |= G_EXPAND;
		else if (!strcmp(verdict, "easy"))
			f |= G_EASY;
		else if (!strcmp(verdict, "hopeless"))
			f |= G_HOPELESS;
		else if (!strcmp(reason, "max_turns"))
			f |= G_MAX_TURNS;
		else if (!strcmp(reason, "solved"))
			f |= G_SOLVED;
		else if (strcmp(reason, "failed") && strcmp(reason, "slow"))
			f |= G_OTHER;
		*flags = (void *)f;
	}
}

/* JSON number, or null when not finite. */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *ratio(long a, long b)
{
	return b > 0 ? json_real((double)a / (double)b) : json_null();
}

static json_t *stats(struct traj **v, size_t n, int max_turn)
{
	json_t *o = json_object();
	json_object_set_new(o, "trajectories", json_integer((json_int_t)n));
	long solved = 0;
	for (size_t i = 0; i < n; i++)
		solved += v[i]->first_pass > 0;
	json_object_set_new(o, "solved", json_integer(solved));
	json_t *pass = json_array(), *rec = json_array();
	for (int k = 1; k <= max_turn; k++) {
		long c = 0, failed = 0, fixed = 0;
		for (size_t i = 0; i < n; i++) {
			c += v[i]->first_pass > 0 && v[i]->first_pass <= k;
			if (k < max_turn && v[i]->st[k] >= 0 && v[i]->st[k] != LEAP_ST_PASS && v[i]->st[k + 1] >= 0) {
				failed++;
				fixed += v[i]->st[k + 1] == LEAP_ST_PASS;
			}
		}
		json_array_append_new(pass, ratio(c, (long)n));
		if (k < max_turn)
			json_array_append_new(rec, json_pack("{s:i,s:i,s:o}", "failed", (int)failed, "recovered", (int)fixed,
							    "rate", ratio(fixed, failed)));
	}
	json_object_set_new(o, "pass_at_turn", pass);
	json_object_set_new(o, "recovery", rec);
	double logsum = 0, roof = 0;
	long ns = 0, nr = 0, nag[NAGAINST] = {0};
	for (size_t i = 0; i < n; i++) {
		if (v[i]->first_pass && v[i]->speedup > 0)
			logsum += log(v[i]->speedup), ns++, nag[v[i]->against]++;
		if (v[i]->first_pass && v[i]->roofline >= 0)
			roof += v[i]->roofline, nr++;
	}
	/* fast_p for p > 0 needs speedups: with correct samples but no timing data it is
	 * unknown (null, "-"), not 0 */
	json_t *fast = json_object(), *lower = json_object();
	for (int j = 0; j < LEAP_REPORT_NFASTP; j++) {
		double p = leap_report_fastp[j];
		long c = 0, cl = 0;
		for (size_t i = 0; i < n; i++) {
			c += v[i]->first_pass > 0 && (p == 0 || v[i]->speedup > p);
			cl += v[i]->first_pass > 0 && (p == 0 || v[i]->speed_lo > p);
		}
		char name[16];
		snprintf(name, sizeof(name), "%g", p);
		json_object_set_new(fast, name, p > 0 && solved && !ns ? json_null() : ratio(c, (long)n));
		json_object_set_new(lower, name, p > 0 && solved && !ns ? json_null() : ratio(cl, (long)n));
	}
	json_object_set_new(o, "fast_p", fast);
	/* conservative: a trajectory counts only when its speedup's interval lies above p */
	json_object_set_new(o, "fast_p_lower", lower);
	json_object_set_new(o, "geomean_speedup", ns ? num(exp(logsum / (double)ns)) : json_null());
	json_object_set_new(o, "timed", json_integer(ns));
	json_t *ag = json_object(); /* timed trajectories by what their speedup is against */
	for (size_t a = 0; a < NAGAINST; a++)
		if (nag[a])
			json_object_set_new(ag, against[a], json_integer(nag[a]));
	json_object_set_new(o, "against", ag);
	json_object_set_new(o, "roofline", nr ? num(roof / (double)nr) : json_null());
	return o;
}

/* "12 of 16 timings noisy: intervals 8% to 40% against 5%": why timings carry no speedup, so
 * that a reader of a fast_p of "-" knows whether to time longer or on a quieter machine. */
static void timings_line(FILE *fp, const json_t *tm, enum leap_report_format fmt)
{
	long timed = (long)leap_get_int(tm, "timed", 0), noisy = (long)leap_get_int(tm, "noisy", 0);
	long few = (long)leap_get_int(tm, "noisy_too_few", 0), susp = (long)leap_get_int(tm, "suspicious", 0);
	if (!timed || (!noisy && !susp))
		return;
	const char *lead = fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ";
	if (noisy) {
		fprintf(fp, "%s%ld of %ld timings noisy", lead, noisy, timed);
		const json_t *ci = json_object_get(tm, "noisy_rel_ci"), *tg = json_object_get(tm, "target_ci");
		if (json_array_size(ci) == 2) {
			double lo = json_number_value(json_array_get(ci, 0)), hi = json_number_value(json_array_get(ci, 1));
			double t0 = json_number_value(json_array_get(tg, 0)), t1 = json_number_value(json_array_get(tg, 1));
			fprintf(fp, ": intervals %.3g%% to %.3g%% against %.3g%%", 100 * lo, 100 * hi, 100 * t0);
			if (t1 > t0)
				fprintf(fp, " to %.3g%%", 100 * t1);
		}
		if (few)
			fprintf(fp, "%s%ld with too few pairs for an interval", json_array_size(ci) == 2 ? "; " : ": ", few);
		fprintf(fp, " (no speedup; leap-bench --max-time longer, or a quieter machine)\n");
	}
	if (susp)
		fprintf(fp, "%s%ld of %ld timings suspicious (faster than the memory floor: no speedup)\n", lead, susp,
			timed);
}

/* "speedups are against: a vendor library (cuBLAS, cuDNN) in 3 timed trajectories, a
 * hand-written kernel in 5": what a reader must know before comparing with other numbers
 * (KernelBench's are against PyTorch eager, that is vendor libraries). Nothing untimed. */
static void against_line(FILE *fp, const json_t *all, enum leap_report_format fmt)
{
	const char *const *words = against_words;
	const json_t *ag = json_object_get(all, "against");
	int first = 1;
	for (size_t a = 0; a < NAGAINST; a++) {
		long c = leap_get_int(ag, against[a], 0);
		if (!c)
			continue;
		fprintf(fp, "%s%s%s in %ld timed trajector%s", first ? (fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ") : "",
			first ? "speedups are against: " : ", ", words[a], c, c == 1 ? "y" : "ies");
		first = 0;
	}
	if (!first)
		fputs("\n", fp);
}

static int cmp_task(const void *a, const void *b)
{
	const struct traj *x = *(struct traj *const *)a, *y = *(struct traj *const *)b;
	return strcmp(x->task, y->task);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The trajectories as an array sorted by task (owned by the caller; entries by the report). */
static struct traj **sorted_trajs(struct leap_report *r, size_t *n)
{
	size_t count = leap_hmap_count(&r->trajs);
	struct traj **v = xcalloc(count ? count : 1, sizeof(*v));
	size_t k = 0, pos = 0;
	const char *key;
	void *val;
	while (leap_hmap_next(&r->trajs, &pos, &key, NULL, &val))
		v[k++] = val;
	qsort(v, k, sizeof(*v), cmp_task);
	*n = k;
	return v;
}

/* The classes of a group's decisions at one turn, in the ledger's order, each with what it
 * means (leap-report prints the meanings under the table). A group is counted once per turn,
 * in the first class that fits: some record went on; the verdict ended it; the turn budget
 * ended its failures; every record left had passed; anything else. */
static const struct {
	const char *name, *meaning;
} dcp_class[] = {
	{"expanded", "some record of the group went on to the next turn"},
	{"easy", "DCP ended it as easy (few of its records failed when it was decided)"},
	{"hopeless", "DCP ended it as hopeless (too many of its records failed when it was decided)"},
	{"max_turns", "its failures ended at the turn budget"},
	{"solved", "every record it had left passed"},
	{"other", "a decision this leap-report does not know (another leap-prune?)"},
};
enum { NCLASS = sizeof dcp_class / sizeof dcp_class[0] };

/* The class (index in dcp_class) of a (group, turn)'s flags. */
static int dcp_class_of(uintptr_t f)
{
	return f & G_EXPAND ? 0 : f & G_EASY ? 1 : f & G_HOPELESS ? 2 : f & G_MAX_TURNS ? 3 : f & G_OTHER ? 5 : 4;
}

static json_t *dcp_json(struct leap_report *r, size_t ntraj, struct traj **v)
{
	/* One pass over the (group, turn) entries, counted by turn and class. */
	long c[LEAP_REPORT_MAX_TURNS + 1][NCLASS] = {{0}}, tot[NCLASS] = {0};
	size_t pos = 0;
	const char *key;
	void *val;
	while (leap_hmap_next(&r->groups, &pos, &key, NULL, &val)) {
		const char *sep = strrchr(key, '\x1f');
		int64_t t;
		if (!sep || leap_parse_i64(sep + 1, 1, LEAP_REPORT_MAX_TURNS, &t))
			continue;
		int cls = dcp_class_of((uintptr_t)val);
		c[t][cls]++;
		tot[cls]++;
	}
	json_t *turns = json_array(), *groups = json_object();
	for (int k = 1; k <= r->max_turn; k++) {
		long any = 0;
		for (int j = 0; j < NCLASS; j++)
			any += c[k][j];
		if (!any)
			continue;
		json_t *row = json_pack("{s:i}", "turn", k);
		for (int j = 0; j < NCLASS; j++)
			json_object_set_new(row, dcp_class[j].name, json_integer(c[k][j]));
		json_array_append_new(turns, row);
	}
	for (int j = 0; j < NCLASS; j++)
		json_object_set_new(groups, dcp_class[j].name, json_integer(tot[j]));
	long skipped = 0, ended = 0;
	for (size_t i = 0; i < ntraj; i++)
		if (v[i]->pruned_early && v[i]->last_turn < r->max_turns) {
			ended++;
			skipped += r->max_turns - v[i]->last_turn;
		}
	double spent = r->compile_s + r->run_s;
	double per = r->cost_records ? spent / (double)r->cost_records : 0;
	double unpruned = spent + (double)skipped * per;
	json_t *o = json_pack("{s:o,s:o,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:o}", "turns", turns, "groups", groups,
			      "max_turns", r->max_turns, "trajectories_ended_early",
			      (int)ended, "turns_saved", (int)skipped, "compile_s", num(r->compile_s), "run_s",
			      num(r->run_s), "spent_s", num(spent), "unpruned_s", num(unpruned), "saved_share",
			      unpruned > 0 ? num(1 - spent / unpruned) : json_null());
	return o;
}

static json_t *adv_json(struct leap_report *r)
{
	if (!r->nadv)
		return json_pack("{s:i}", "n", 0);
	double sum = 0, sq = 0, zero = 0;
	for (size_t i = 0; i < r->nadv; i++) {
		sum += r->adv[i];
		zero += fabs(r->adv[i]) < 1e-12;
	}
	double mean = sum / (double)r->nadv;
	for (size_t i = 0; i < r->nadv; i++)
		sq += (r->adv[i] - mean) * (r->adv[i] - mean);
	double *s = xmalloc(r->nadv * sizeof(double));
	memcpy(s, r->adv, r->nadv * sizeof(double));
	qsort(s, r->nadv, sizeof(double), cmp_double);
	long groups = 0, flat = 0;
	size_t pos = 0;
	const char *key;
	void *val;
	while (leap_hmap_next(&r->advgroups, &pos, &key, NULL, &val)) {
		const struct advgroup *g = val;
		if (g->n < 2)
			continue;
		groups++;
		flat += g->max - g->min < 1e-12;
	}
	json_t *o = json_pack("{s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:o}", "n", (int)r->nadv, "groups", (int)groups,
			      "zero_variance_groups", (int)flat, "mean", num(mean), "std",
			      num(sqrt(sq / (double)r->nadv)), "min", num(s[0]), "median", num(s[r->nadv / 2]), "max",
			      num(s[r->nadv - 1]), "zero_share", num(zero / (double)r->nadv));
	free(s);
	return o;
}

/* {timed, ok, noisy, suspicious, noisy_too_few, noisy_rel_ci: [lo, hi], target_ci: [lo, hi]}:
 * the timings of passing records and why the noisy ones carry no speedup. */
static json_t *timings_json(const struct leap_report *r)
{
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I}", "timed", (json_int_t)r->timed, "ok", (json_int_t)r->timed_ok,
			      "noisy", (json_int_t)r->timed_noisy, "suspicious", (json_int_t)r->timed_suspicious,
			      "noisy_too_few", (json_int_t)r->noisy_few);
	if (r->timed_noisy > r->noisy_few)
		json_object_set_new(o, "noisy_rel_ci", json_pack("[f,f]", r->noisy_ci_lo, r->noisy_ci_hi));
	if (r->target_lo > 0)
		json_object_set_new(o, "target_ci", json_pack("[f,f]", r->target_lo, r->target_hi));
	return o;
}

json_t *leap_report_json(struct leap_report *r)
{
	size_t n;
	struct traj **v = sorted_trajs(r, &n);
	json_t *tasks = json_array();
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(v[j]->task, v[i]->task))
			j++;
		json_t *s = stats(v + i, j - i, r->max_turn);
		json_object_set_new(s, "task", json_string(v[i]->task));
		json_array_append_new(tasks, s);
		i = j;
	}
	long with_status = 0;
	for (int k = 0; k <= LEAP_ST_PASS; k++)
		with_status += r->status[k];
	json_t *outcomes = json_object();
	for (int k = 0; k <= LEAP_ST_PASS; k++)
		json_object_set_new(outcomes, leap_status_name((enum leap_status)k), ratio(r->status[k], with_status));
	json_t *backends = json_array();
	for (unsigned b = 0; b < 2; b++)
		if (r->backends & (1u << b))
			json_array_append_new(backends, json_string(leap_backend_name((enum leap_backend)b)));
	json_t *o = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:o}", "records", (int)r->records, "errors",
			      (int)r->errors, "duplicates", (int)r->duplicates, "ignored", (int)r->ignored, "trajectories",
			      (int)n, "turns", r->max_turn, "backends", backends,
			      "tasks", tasks, "all", stats(v, n, r->max_turn), "outcomes", outcomes, "dcp",
			      dcp_json(r, n, v), "advantage", adv_json(r));
	json_object_set_new(o, "timings", timings_json(r));
	free(v);
	return o;
}

/* Frees a trajectory of the table (NULL included). */
static void traj_free(void *p)
{
	struct traj *t = p;
	if (t)
		free(t->task);
	free(t);
}

void leap_report_free(struct leap_report *r)
{
	leap_hmap_free_with(&r->trajs, traj_free);
	free(r->files);
	leap_hmap_free_with(&r->advgroups, free);
	leap_hmap_free(&r->groups);
	free(r->adv);
	memset(r, 0, sizeof(*r));
}

/* A table of strings, row 0 the header, for the text, markdown and csv renderings. */
struct table {
	size_t ncols, nrows;
	char **cells;
};

static void row_add(struct table *t, char **cells)
{
	t->cells = xrealloc(t->cells, (t->nrows + 1) * t->ncols * sizeof(char *));
	memcpy(t->cells + t->nrows * t->ncols, cells, t->ncols * sizeof(char *));
	t->nrows++;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

static char *fmt_num(const json_t *v, const char *fmt)
{
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_number(v))
		return xasprintf(fmt, json_number_value(v));
	return xstrdup("-");
}

/* A table cell: for people, `fmt` ("%.2fx") and "-" for none; in csv a number a program reads
 * back as it was (the shortest round-trip text) and an empty cell for none. */
static char *cell(const json_t *v, const char *fmt, int csv)
{
	if (!csv)
		return fmt_num(v, fmt);
	char num[LEAP_DOUBLE_BUF];
	if (json_is_real(v))
		return xstrdup(leap_fmt_double(num, json_real_value(v)));
	return json_is_integer(v) ? fmt_num(v, fmt) : xstrdup("");
}

static int csv_cell(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\n\r"))
		return fputs(s, fp);
	if (fputc('"', fp) == EOF)
		return EOF;
	for (; *s; s++)
		if ((*s == '"' && fputc('"', fp) == EOF) || fputc(*s, fp) == EOF)
			return EOF;
	return fputc('"', fp);
}

static int table_print(FILE *fp, const struct table *t, enum leap_report_format fmt, const char *title)
{
	size_t *w = xcalloc(t->ncols, sizeof(size_t));
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t n = strlen(t->cells[r * t->ncols + c]);
			w[c] = n > w[c] ? n : w[c];
		}
	if (fmt == LEAP_FMT_MARKDOWN)
		fprintf(fp, "\n### %s\n\n", title);
	else if (fmt == LEAP_FMT_TEXT)
		fprintf(fp, "\n%s\n", title);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			if (fmt == LEAP_FMT_CSV) {
				if ((c && fputc(',', fp) == EOF) || csv_cell(fp, s) == EOF)
					break;
			} else if (fmt == LEAP_FMT_MARKDOWN) {
				fprintf(fp, "| %s ", s);
			} else {
				int left = c == 0;
				fprintf(fp, "%s%*s%s", c ? "  " : "  ", left ? 0 : (int)(w[c] - strlen(s)), "", s);
				if (left && c + 1 < t->ncols)
					fprintf(fp, "%*s", (int)(w[c] - strlen(s)), "");
			}
		}
		fputs(fmt == LEAP_FMT_MARKDOWN ? "|\n" : "\n", fp);
		if (r == 0 && fmt == LEAP_FMT_MARKDOWN) {
			for (size_t c = 0; c < t->ncols; c++)
				fputs(c ? "| ---: " : "| :--- ", fp);
			fputs("|\n", fp);
		}
	}
	free(w);
	return ferror(fp) ? -1 : 0;
}

static void task_row(struct table *t, const char *name, const json_t *s, int turns, int csv)
{
	char **cells = xcalloc(t->ncols, sizeof(char *));
	size_t c = 0;
	cells[c++] = xstrdup(name);
	cells[c++] = cell(json_object_get(s, "trajectories"), "%g", csv);
	for (int k = 0; k < turns; k++)
		cells[c++] = cell(json_array_get(json_object_get(s, "pass_at_turn"), (size_t)k), "%.3f", csv);
	for (int k = 0; k + 1 < turns; k++)
		cells[c++] = cell(json_object_get(json_array_get(json_object_get(s, "recovery"), (size_t)k), "rate"),
				  "%.3f", csv);
	cells[c++] = cell(json_object_get(json_object_get(s, "fast_p"), "1"), "%.3f", csv);
	cells[c++] = cell(json_object_get(s, "geomean_speedup"), "%.2fx", csv);
	cells[c++] = cell(json_object_get(s, "roofline"), "%.2f", csv);
	row_add(t, cells);
	free(cells);
}

/* The DCP ledger: groups per turn and class (a class no group fell in, other than the
 * verdicts', is left out), what each column means, then the work DCP saved in words. */
static int print_dcp(FILE *fp, const json_t *dcp, enum leap_report_format fmt)
{
	const json_t *groups = json_object_get(dcp, "groups");
	int show[NCLASS];
	struct table d = {.ncols = 1};
	for (int j = 0; j < NCLASS; j++) {
		show[j] = j < 3 || leap_get_int(groups, dcp_class[j].name, 0) > 0;
		d.ncols += (size_t)show[j];
	}
	char **h = xcalloc(d.ncols, sizeof(char *));
	size_t n = 0;
	h[n++] = xstrdup("turn");
	for (int j = 0; j < NCLASS; j++)
		if (show[j])
			h[n++] = xstrdup(dcp_class[j].name);
	row_add(&d, h);
	size_t i;
	const json_t *s;
	json_array_foreach(json_object_get(dcp, "turns"), i, s) {
		n = 0;
		h[n++] = fmt_num(json_object_get(s, "turn"), "%g");
		for (int j = 0; j < NCLASS; j++)
			if (show[j])
				h[n++] = fmt_num(json_object_get(s, dcp_class[j].name), "%g");
		row_add(&d, h);
	}
	free(h);
	int rc = table_print(fp, &d, fmt, "DCP ledger: groups per turn, by what became of them");
	table_free(&d);
	int md = fmt == LEAP_FMT_MARKDOWN;
	const char *pre = md ? "\n" : "  ";
	for (int j = 0, k = 0; j < NCLASS; j++)
		if (show[j])
			fprintf(fp, "%s%s%s%s: %s\n", md ? (k++ ? "" : "\n") : "  ", md ? "- **" : "", dcp_class[j].name,
				md ? "**" : "", dcp_class[j].meaning);
	long ended = (long)leap_get_int(dcp, "trajectories_ended_early", 0), saved = (long)leap_get_int(dcp, "turns_saved", 0);
	double spent = leap_get_num(dcp, "spent_s", 0), unpruned = leap_get_num(dcp, "unpruned_s", 0);
	if (!ended) {
		fprintf(fp, "%sDCP ended no trajectory early: no turn was saved (compile and run time spent: %.1f s)\n",
			pre, spent);
	} else {
		fprintf(fp, "%sDCP ended %ld failing trajector%s early (easy or hopeless before turn %lld): %ld "
			    "trajectory-turn%s not run",
			pre, ended, ended == 1 ? "y" : "ies", (long long)leap_get_int(dcp, "max_turns", 0), saved,
			saved == 1 ? "" : "s");
		if (spent > 0 && unpruned > spent)
			fprintf(fp, "; compile and run time %.1f s, about %.1f s without pruning (each turn not run "
				    "priced at the mean cost of a record): about %.0f%% saved\n",
				spent, unpruned, 100 * (1 - spent / unpruned));
		else
			fprintf(fp, "; the records carry no compile or run times, so the time saved is not known\n");
	}
	return rc;
}

static int print_tables(FILE *fp, const json_t *sum, enum leap_report_format fmt)
{
	int turns = (int)leap_get_int(sum, "turns", 0);
	struct table t = {.ncols = 2 + (size_t)turns + (size_t)(turns > 0 ? turns - 1 : 0) + 3};
	char **h = xcalloc(t.ncols, sizeof(char *));
	size_t c = 0;
	h[c++] = xstrdup("task");
	h[c++] = xstrdup("n");
	for (int k = 1; k <= turns; k++)
		h[c++] = xasprintf("pass@%d", k);
	for (int k = 1; k < turns; k++)
		h[c++] = xasprintf("rec%d>%d", k, k + 1);
	h[c++] = xstrdup("fast_1");
	h[c++] = xstrdup("geomean");
	h[c++] = xstrdup("roofline");
	row_add(&t, h);
	free(h);
	size_t i;
	const json_t *s;
	int csv = fmt == LEAP_FMT_CSV;
	json_array_foreach(json_object_get(sum, "tasks"), i, s)
		task_row(&t, leap_get_str(s, "task", "?"), s, turns, csv);
	task_row(&t, "all", json_object_get(sum, "all"), turns, csv);
	int rc = table_print(fp, &t, fmt, "Pass rate by turn (cumulative), recovery of turn-k failures at k+1, fast_1, geometric-mean speedup of correct samples");
	table_free(&t);
	if (csv || rc)
		return rc;
	const json_t *all = json_object_get(sum, "all");
	const json_t *tm = json_object_get(sum, "timings");
	int untimed = leap_get_int(all, "solved", 0) > 0 && leap_get_int(tm, "timed", 0) == 0;
	if (untimed)
		fprintf(fp, "%sno timing data: fast_p for p > 0 and speedups need leap-bench's times\n",
			fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ");
	timings_line(fp, tm, fmt);
	against_line(fp, all, fmt);

	struct table o = {.ncols = 2};
	row_add(&o, (char *[]){xstrdup("status"), xstrdup("share of records")});
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)json_object_get(sum, "outcomes"), k, v)
		row_add(&o, (char *[]){xstrdup(k), fmt_num(v, "%.3f")});
	rc = table_print(fp, &o, fmt, "Outcomes");
	table_free(&o);

	struct table f = {.ncols = 3};
	row_add(&f, (char *[]){xstrdup("p"), xstrdup("fast_p"), xstrdup("lower")});
	const json_t *lower = json_object_get(all, "fast_p_lower");
	json_object_foreach((json_t *)json_object_get(all, "fast_p"), k, v)
		row_add(&f, (char *[]){xstrdup(k), fmt_num(v, "%.3f"), fmt_num(json_object_get(lower, k), "%.3f")});
	rc |= table_print(fp, &f, fmt, untimed ? "fast_p: correct and speedup > p, over all trajectories (no timing data)"
					       : "fast_p: correct and speedup > p, over all trajectories (lower: the speedup's "
						 "interval above p)");
	table_free(&f);

	rc |= print_dcp(fp, json_object_get(sum, "dcp"), fmt);

	const json_t *adv = json_object_get(sum, "advantage");
	struct table a = {.ncols = 2};
	row_add(&a, (char *[]){xstrdup("statistic"), xstrdup("value")});
	json_object_foreach((json_t *)adv, k, v)
		row_add(&a, (char *[]){xstrdup(k), fmt_num(v, "%.4g")});
	rc |= table_print(fp, &a, fmt, "Advantages");
	table_free(&a);
	return rc || ferror(fp) ? -1 : 0;
}

int leap_report_print(FILE *fp, const json_t *sum, enum leap_report_format fmt)
{
	if (fmt == LEAP_FMT_JSON) {
		struct leap_buf b = {0};
		int rc = leap_json_append(&b, sum);
		if (!rc && (fwrite(b.s, 1, b.len, fp) != b.len || fputc('\n', fp) == EOF))
			rc = -1;
		leap_buf_free(&b);
		return rc;
	}
	if (fmt != LEAP_FMT_CSV) {
		if (fmt == LEAP_FMT_MARKDOWN)
			fputs("## leap report\n\n", fp);
		long long rec = leap_get_int(sum, "records", 0), err = leap_get_int(sum, "errors", 0),
			  trj = leap_get_int(sum, "trajectories", 0), turns = leap_get_int(sum, "turns", 0);
		size_t ntasks = json_array_size(json_object_get(sum, "tasks"));
		fprintf(fp, "%lld record%s (%lld error%s, %lld without task/sample/turn), %lld trajector%s, %zu task%s, up to %lld turn%s\n",
			rec, rec == 1 ? "" : "s", err, err == 1 ? "" : "s", (long long)leap_get_int(sum, "ignored", 0), trj,
			trj == 1 ? "y" : "ies", ntasks, ntasks == 1 ? "" : "s", turns, turns == 1 ? "" : "s");
	}
	return print_tables(fp, sum, fmt);
}

/* " (264 trajectories, 33 tasks, cpu)": what a chart's title says it is drawn from. */
static char *about(const json_t *sum)
{
	struct leap_buf b = {0};
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(sum, "backends"), i, v)
		leap_buf_addf(&b, "%s%s", i ? "+" : "", json_string_value(v));
	char *s = xasprintf(" (%lld trajectories, %zu tasks, %s)", (long long)leap_get_int(sum, "trajectories", 0),
			    json_array_size(json_object_get(sum, "tasks")), b.len ? b.s : "backend unknown");
	leap_buf_free(&b);
	return s;
}

/* Writes DIR/NAME.svg; 0, or -1 with *err. */
static int chart(const char *dir, const char *name, const struct leap_svg_chart *c, char **err)
{
	char *path = xasprintf("%s/%s.svg", dir, name);
	int rc = leap_svg_bars(path, c, err);
	free(path);
	return rc;
}

static void free_labels(char **labels, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(labels[k]);
	free(labels);
}

/* pass-by-turn.svg: cumulative pass rate and recovery by turn, over all trajectories. */
static int plot_pass(const json_t *sum, const char *dir, const char *what, char **err)
{
	size_t turns = (size_t)leap_get_int(sum, "turns", 0);
	const json_t *all = json_object_get(sum, "all");
	double *pass = xcalloc(turns + 1, sizeof(double)), *rec = xcalloc(turns + 1, sizeof(double));
	char **labels = xcalloc(turns + 1, sizeof(char *));
	for (size_t k = 0; k < turns; k++) {
		labels[k] = xasprintf("turn %zu", k + 1);
		const json_t *pv = json_array_get(json_object_get(all, "pass_at_turn"), k);
		pass[k] = json_is_number(pv) ? json_number_value(pv) : NAN;
		const json_t *rv = k ? json_object_get(json_array_get(json_object_get(all, "recovery"), k - 1), "rate") : NULL;
		rec[k] = json_is_number(rv) ? json_number_value(rv) : NAN;
	}
	struct leap_svg_series s[] = {{"solved by turn k", pass}, {"recovered at k (of k-1 failures)", rec}};
	char *title = xasprintf("Pass rate by turn%s", what);
	struct leap_svg_chart c = {title, "turn", "share of trajectories", turns, (const char *const *)labels, 2, s, 1,
				   0, turns ? NULL : "no records"};
	int rc = chart(dir, "pass-by-turn", &c, err);
	free(title);
	free_labels(labels, turns);
	free(pass);
	free(rec);
	return rc;
}

/* tasks.svg: per task, the share solved at turn 1 and by the last turn. */
static int plot_tasks(const json_t *sum, const char *dir, const char *what, char **err)
{
	const json_t *tasks = json_object_get(sum, "tasks");
	size_t n = json_array_size(tasks), i;
	double *first = xcalloc(n + 1, sizeof(double)), *last = xcalloc(n + 1, sizeof(double));
	char **labels = xcalloc(n + 1, sizeof(char *));
	const json_t *t;
	json_array_foreach(tasks, i, t) {
		const json_t *pass = json_object_get(t, "pass_at_turn");
		labels[i] = xstrdup(leap_get_str(t, "task", "?"));
		first[i] = json_is_number(json_array_get(pass, 0)) ? json_number_value(json_array_get(pass, 0)) : NAN;
		const json_t *lv = json_array_get(pass, json_array_size(pass) ? json_array_size(pass) - 1 : 0);
		last[i] = json_is_number(lv) ? json_number_value(lv) : NAN;
	}
	struct leap_svg_series s[] = {{"solved at turn 1", first}, {"solved by the last turn", last}};
	char *title = xasprintf("Pass rate per task%s", what);
	struct leap_svg_chart c = {title, "task", "share of the task's trajectories", n, (const char *const *)labels, 2, s,
				   1, 0, n ? NULL : "no records"};
	int rc = chart(dir, "tasks", &c, err);
	free(title);
	free_labels(labels, n);
	free(first);
	free(last);
	return rc;
}

/* speedup.svg: the best speedup of each correct trajectory, binned. */
static int plot_speedup(struct leap_report *r, const json_t *sum, const char *dir, const char *what, char **err)
{
	static const double edges[] = {0, 0.25, 0.5, 0.8, 1, 1.5, 2, 4, INFINITY};
	static const char *const bins[] = {"<0.25x", "0.25-0.5x", "0.5-0.8x", "0.8-1x", "1-1.5x", "1.5-2x", "2-4x", ">=4x"};
	double hist[8] = {0};
	size_t pos = 0;
	const char *key;
	void *val;
	while (leap_hmap_next(&r->trajs, &pos, &key, NULL, &val)) {
		const struct traj *t = val;
		if (!t->first_pass || !(t->speedup > 0))
			continue;
		for (int j = 0; j < 8; j++)
			if (t->speedup >= edges[j] && t->speedup < edges[j + 1])
				hist[j]++;
	}
	struct leap_svg_series s[] = {{"trajectories", hist}};
	char *title = xasprintf("Speedup of correct trajectories%s", what);
	long ok = (long)leap_get_int(json_object_get(sum, "all"), "timed", 0);
	long timed = (long)leap_get_int(json_object_get(sum, "timings"), "timed", 0);
	char *none = timed ? xasprintf("no ok timing: %ld of %ld timings noisy or suspicious (no speedup)", timed, timed)
			   : xstrdup("no timing data (the records carry no leap-bench speedup)");
	struct leap_svg_chart c = {title, "speedup over the baseline (best correct turn)", "trajectories", 8, bins, 1, s,
				   0, 1, ok ? NULL : none};
	int rc = chart(dir, "speedup", &c, err);
	free(none);
	free(title);
	return rc;
}

/* dcp.svg: group decisions per turn, one series per class of the ledger. */
static int plot_dcp(const json_t *sum, const char *dir, const char *what, char **err)
{
	const json_t *dturns = json_object_get(json_object_get(sum, "dcp"), "turns");
	size_t nd = json_array_size(dturns);
	double *v[NCLASS];
	for (int k = 0; k < NCLASS; k++)
		v[k] = xcalloc(nd + 1, sizeof(double));
	char **labels = xcalloc(nd + 1, sizeof(char *));
	for (size_t i = 0; i < nd; i++) {
		const json_t *d = json_array_get(dturns, i);
		labels[i] = xasprintf("turn %lld", (long long)leap_get_int(d, "turn", 0));
		for (int k = 0; k < NCLASS; k++)
			v[k][i] = (double)leap_get_int(d, dcp_class[k].name, 0);
	}
	static const char *const names[NCLASS] = {"expanded", "pruned easy", "pruned hopeless", "max turns", "solved",
						  "other"};
	struct leap_svg_series s[NCLASS];
	for (int k = 0; k < NCLASS; k++)
		s[k] = (struct leap_svg_series){names[k], v[k]};
	char *title = xasprintf("DCP decisions per turn%s", what);
	struct leap_svg_chart c = {title, "turn", "groups", nd, (const char *const *)labels, NCLASS, s, 0, 1,
				   nd ? NULL : "no DCP decisions (the records carry no leap-prune decision)"};
	int rc = chart(dir, "dcp", &c, err);
	free(title);
	free_labels(labels, nd);
	for (int k = 0; k < NCLASS; k++)
		free(v[k]);
	return rc;
}

/* advantage.svg: a 20-bin histogram over [min, max], each bin labelled by its centre. */
static int plot_advantage(struct leap_report *r, const char *dir, const char *what, char **err)
{
	double lo = INFINITY, hi = -INFINITY, ah[20] = {0};
	for (size_t i = 0; i < r->nadv; i++) {
		lo = fmin(lo, r->adv[i]);
		hi = fmax(hi, r->adv[i]);
	}
	if (!(hi > lo))
		hi = lo + 1;
	for (size_t i = 0; i < r->nadv; i++) {
		int j = (int)((r->adv[i] - lo) / (hi - lo) * 20);
		ah[j > 19 ? 19 : j < 0 ? 0 : j]++;
	}
	char **labels = xcalloc(20, sizeof(char *));
	for (int j = 0; j < 20; j++)
		labels[j] = r->nadv ? xasprintf("%.2f", lo + (hi - lo) * (j + 0.5) / 20) : xstrdup("");
	struct leap_svg_series s[] = {{"records", ah}};
	char *title = xasprintf("Advantage distribution%s", what);
	struct leap_svg_chart c = {title, "advantage (bin centre)", "records", 20, (const char *const *)labels, 1, s, 0, 1,
				   r->nadv ? NULL : "no advantages (run leap-advantage)"};
	int rc = chart(dir, "advantage", &c, err);
	free(title);
	free_labels(labels, 20);
	return rc;
}

int leap_report_plot(struct leap_report *r, const json_t *sum, const char *dir, char **err)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		*err = xasprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	char *what = about(sum);
	int rc = plot_pass(sum, dir, what, err) || plot_tasks(sum, dir, what, err) ||
		 plot_speedup(r, sum, dir, what, err) || plot_dcp(sum, dir, what, err) ||
		 plot_advantage(r, dir, what, err);
	free(what);
	return rc ? -1 : 0;
}

/* ---- KernelBench's metric: per answer, not per trajectory ---- */

/* {"0", "1", "2"} of one row of counts; fast_1 and fast_2 null when correct answers have no
 * timing data (unknown, not 0). */
static json_t *kb_fast(long answers, const long *fast, long timed)
{
	json_t *o = json_object();
	for (int p = 0; p < 3; p++) {
		char name[4];
		snprintf(name, sizeof name, "%d", p);
		json_object_set_new(o, name, p > 0 && fast[0] && !timed ? json_null() : ratio(fast[p], answers));
	}
	return o;
}

json_t *leap_report_kernelbench_json(const struct leap_report *r)
{
	json_t *turns = json_array();
	for (int k = 1; k <= LEAP_REPORT_MAX_TURNS; k++)
		if (r->kb_answers[k])
			json_array_append_new(turns, json_pack("{s:i,s:I,s:o}", "turn", k, "answers",
							       (json_int_t)r->kb_answers[k],
							       "fast_p", kb_fast(r->kb_answers[k], r->kb_fast[k], r->kb_timed[k])));
	json_t *ag = json_object();
	for (size_t a = 0; a < NAGAINST; a++)
		if (r->kb_against[a])
			json_object_set_new(ag, against[a], json_integer(r->kb_against[a]));
	return json_pack("{s:s,s:I,s:o,s:o,s:o}", "definition",
			 "fast_p = answers correct with speedup > p / all answers (each record with a status is an "
			 "answer; KernelBench's definition)",
			 "answers", (json_int_t)r->kb_answers[0], "fast_p", kb_fast(r->kb_answers[0], r->kb_fast[0], r->kb_timed[0]),
			 "by_turn", turns, "against", ag);
}

int leap_report_print_kernelbench(FILE *fp, const json_t *kb, enum leap_report_format fmt)
{
	struct table t = {.ncols = 5};
	row_add(&t, (char *[]){xstrdup("turn"), xstrdup("answers"), xstrdup("fast_0"), xstrdup("fast_1"), xstrdup("fast_2")});
	size_t i;
	const json_t *s;
	json_array_foreach(json_object_get(kb, "by_turn"), i, s) {
		const json_t *f = json_object_get(s, "fast_p");
		row_add(&t, (char *[]){fmt_num(json_object_get(s, "turn"), "%g"), fmt_num(json_object_get(s, "answers"), "%g"),
				       fmt_num(json_object_get(f, "0"), "%.3f"), fmt_num(json_object_get(f, "1"), "%.3f"),
				       fmt_num(json_object_get(f, "2"), "%.3f")});
	}
	const json_t *f = json_object_get(kb, "fast_p");
	row_add(&t, (char *[]){xstrdup("all"), fmt_num(json_object_get(kb, "answers"), "%g"),
			       fmt_num(json_object_get(f, "0"), "%.3f"), fmt_num(json_object_get(f, "1"), "%.3f"),
			       fmt_num(json_object_get(f, "2"), "%.3f")});
	int rc = table_print(fp, &t, fmt,
			     "KernelBench fast_p: per answer (every record counts: correct and speedup > p, over all "
			     "answers); the fast_p above is leap's, per trajectory (its best turn)");
	table_free(&t);
	/* what the speedups are against: KernelBench's are against PyTorch eager */
	const json_t *ag = json_object_get(kb, "against");
	int first = 1;
	for (size_t a = 0; a < NAGAINST; a++) {
		long c = leap_get_int(ag, against[a], 0);
		if (!c)
			continue;
		fprintf(fp, "%s%s%s in %ld timed answer%s", first ? (fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ") : "",
			first ? "speedups are against: " : ", ", against_words[a], c, c == 1 ? "" : "s");
		first = 0;
	}
	if (!first)
		fputs("\n", fp);
	fprintf(fp, "%sKernelBench's speedups are against PyTorch eager (cuBLAS and cuDNN where it calls them, its own "
		    "kernels elsewhere), which is what the kernelbench suites' baselines run\n",
		fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ");
	return rc || ferror(fp) ? -1 : 0;
}
