/* report_print.c - a run's summary as tables: text, markdown and CSV, and KernelBench's metric. */
/*
 * Every table is printed from the summary's JSON object (leap_report_json), never from the
 * records, so that the formats cannot disagree with each other or with --format json. A table
 * is built as strings first (struct table) and then rendered: aligned columns for text, pipes
 * for markdown, quoted cells for CSV, whose numbers read back as they were. Under the tables go
 * the lines a reader needs before quoting a number: why timings carry no speedup, what the
 * speedups are against, and what each class of the DCP ledger means.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonl.h"
#include "report.h"
#include "report_int.h"
#include "core/util.h"
#include "core/banned.h"

/* What a speedup is against (against[], report_int.h), said in words. */
static const char *const against_words[NAGAINST] = {"an unnamed baseline (records of before baseline_kind)",
						     "a vendor library (cuBLAS, cuDNN)", "a hand-written CUDA kernel",
						     "the C reference (cc -O2)", "PyTorch eager (a module task's torch)",
						     "torch.compile (a module task's torch)"};

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
 * (KernelBench's are against PyTorch eager, that is vendor libraries). Nothing untimed. ag:
 * the report's counts per kind, of trajectories or of KernelBench's answers (`one`, `many`). */
static void against_line(FILE *fp, const json_t *ag, const char *one, const char *many, enum leap_report_format fmt)
{
	int first = 1;
	for (size_t a = 0; a < NAGAINST; a++) {
		long c = leap_get_int(ag, against[a], 0);
		if (!c)
			continue;
		fprintf(fp, "%s%s%s in %ld %s", first ? (fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ") : "",
			first ? "speedups are against: " : ", ", against_words[a], c, c == 1 ? one : many);
		first = 0;
	}
	if (!first)
		fputs("\n", fp);
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
	against_line(fp, json_object_get(all, "against"), "timed trajectory", "timed trajectories", fmt);

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
	against_line(fp, json_object_get(kb, "against"), "timed answer", "timed answers", fmt);
	fprintf(fp, "%sKernelBench's speedups are against PyTorch eager (cuBLAS and cuDNN where it calls them, its own "
		    "kernels elsewhere), which is what the kernelbench suites' baselines run\n",
		fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ");
	/* a module task's answers may be timed against torch.compile, a faster baseline where
	 * inductor fuses the module: a fast_p over it and another compares with neither (vendor
	 * and kernel together are PyTorch eager's, as the line above says) */
	const json_t *ag = json_object_get(kb, "against");
	if (json_object_get(ag, "torch-compile") && json_object_size(ag) > 1)
		fprintf(fp, "%sthe fast_p above mixes baselines: time every answer against one (leap-bench --baseline) "
			    "to compare it with a published figure\n",
			fmt == LEAP_FMT_MARKDOWN ? "\n" : "  ");
	return rc || ferror(fp) ? -1 : 0;
}
