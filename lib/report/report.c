/* report.c - run summaries: pass rates by turn, recovery, fast_p, speedups, the DCP ledger, advantages. */
/*
 * A run's records are read once and may be many, so each is folded as it is read into a small
 * entry per trajectory (struct traj: a (group, sample) across its turns, a status per turn, its
 * best speedup) and into counters; the records themselves are never held. The summary is
 * computed once into one JSON object (leap_report_json), and the text, markdown and CSV tables
 * are all printed from that object, so that the formats cannot disagree. Its metrics are per
 * trajectory (passed by turn k, fast_p), as multi-turn RL needs; KernelBench's fast_p per answer
 * is kept beside them, labelled, because the two differ and both get quoted.
 *
 * Three files by job, one interface (report.h): this one folds the records and computes the
 * summary, report_print.c prints it as tables and report_plot.c draws its charts (svg.c);
 * report_int.h holds what they share: the trajectory entry, the baselines a speedup is
 * against and the classes of the DCP ledger.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "group/group.h"
#include "core/jsonl.h"
#include "report.h"
#include "report_int.h"
#include "core/util.h"
#include "core/banned.h"

const double leap_report_fastp[LEAP_REPORT_NFASTP] = {0, 0.5, 0.8, 1, 1.5, 2};

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
	/* a second record of a (group, sample, turn) is not counted (lib/group/group.h) */
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
