/* report_plot.c - a run's summary as SVG charts: pass by turn, per task, speedups, DCP, advantages. */
/*
 * leap-report --plot DIR draws five bar charts with svg.c, from the summary's JSON object where
 * it holds what a chart shows (pass rates, the DCP ledger) and from the report's own entries
 * where the summary keeps only aggregates (each trajectory's best speedup, every advantage).
 * A chart with nothing to show says why in its place, rather than being left out.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/jsonl.h"
#include "report.h"
#include "report_int.h"
#include "svg.h"
#include "core/util.h"
#include "core/banned.h"

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
