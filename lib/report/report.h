/* report.h - run summaries: pass rates by turn, recovery, fast_p, speedups, the DCP ledger, advantages. */
#ifndef LEAP_REPORT_H
#define LEAP_REPORT_H

#include <stdio.h>
#include <jansson.h>

#include "core/hmap.h"
#include "core/record.h"
#include "task/task.h"

#define LEAP_REPORT_MAX_TURNS 16

/* The p values of KernelBench's fast_p reported. */
#define LEAP_REPORT_NFASTP 6
extern const double leap_report_fastp[LEAP_REPORT_NFASTP];

/* Accumulates records; holds one small entry per trajectory (group, sample), per task and per
 * (group, turn), not the records themselves. */
struct leap_report {
	struct leap_hmap trajs;   /* "group\x1fsample" -> struct traj (report.c) */
	struct leap_hmap advgroups; /* group -> struct advgroup (report.c): advantage count/min/max */
	struct leap_hmap groups;  /* "group\x1fturn" -> the G_* flags of its prune decisions, in the pointer */
	long records, errors, ignored; /* ignored: records without task/group/sample/turn */
	long duplicates;          /* second records of a (group, sample, turn): counted in errors */
	const char **files;       /* input names seen (not owned), for naming a duplicate's first */
	size_t nfiles, capfiles;
	long status[LEAP_ST_PASS + 1];
	double compile_s, run_s;  /* compile.ms (not cached) and verify.ms + bench.ms, in seconds */
	long cost_records;        /* records that carried a cost */
	double *adv;              /* advantages seen */
	size_t nadv, capadv;
	int max_turn;
	int max_turns;            /* the turn budget of the rollout (for the DCP ledger) */
	unsigned backends;        /* 1 << enum leap_backend of every backend seen */
	/* KernelBench's metric (leap_report_kernelbench_json): every answer, a record with a
	 * status, counts, by turn; [0] all turns */
	long kb_answers[LEAP_REPORT_MAX_TURNS + 1];
	long kb_fast[LEAP_REPORT_MAX_TURNS + 1][3]; /* correct and speedup > p, p = 0, 1, 2 */
	long kb_timed[LEAP_REPORT_MAX_TURNS + 1];   /* correct with a speedup */
	long kb_against[6];                         /* timed answers by bench.baseline_kind (against[]) */
	/* the timings (bench.status ok, noisy or suspicious) of passing records, and why those
	 * that carry no speedup carry none */
	long timed, timed_ok, timed_noisy, timed_suspicious, noisy_few; /* few: too few pairs for an interval */
	double noisy_ci_lo, noisy_ci_hi;   /* the range of the noisy intervals' relative half-widths */
	double target_lo, target_hi;       /* the range of the targets they were judged against */
};

/* Initialises an empty report; max_turns is the rollout's turn budget (e.g. 3). */
void leap_report_init(struct leap_report *r, int max_turns);

/* Adds one record. Records with an `error` are counted and otherwise ignored. */
void leap_report_add(struct leap_report *r, const json_t *rec);

/* leap_report_add for the record read at file:line (a name that lives as long as the report):
 * a second record of the same (group, sample, turn) is reported on stderr naming the first,
 * counted in errors and duplicates, and not summarised. */
void leap_report_add_at(struct leap_report *r, const json_t *rec, const char *file, long line);

/* The summary as one JSON object (new reference):
 * {records, errors, trajectories, backends:[...], tasks:[{task, ...stats}], all:{...stats},
 *  outcomes:{...}, dcp:{...}, advantage:{...}}. Non-finite numbers are written as null, and so
 * is fast_p for p > 0 where correct samples have no timing data. */
json_t *leap_report_json(struct leap_report *r);

enum leap_report_format { LEAP_FMT_TEXT, LEAP_FMT_MARKDOWN, LEAP_FMT_JSON, LEAP_FMT_CSV };

/* Writes the summary `sum` (from leap_report_json) in `fmt`. Returns 0, or -1 on a write
 * error (errno set). */
int leap_report_print(FILE *fp, const json_t *sum, enum leap_report_format fmt);

/* KernelBench's fast_0, fast_1 and fast_2 as KernelBench defines them: per answer (every
 * record with a status counts once: correct, and for p > 0 a speedup above p), over all
 * answers, for all turns and for each turn (turn 1 alone is KernelBench's single-shot
 * number); with what the speedups are against. New reference:
 * {definition, answers, fast_p: {"0", "1", "2"}, by_turn: [{turn, answers, fast_p}], against}.
 * fast_1 and fast_2 are null where correct answers have no timing data. */
json_t *leap_report_kernelbench_json(const struct leap_report *r);

/* Writes the table of leap_report_kernelbench_json's object `kb` (text or markdown), labelled
 * as per answer beside leap's per-trajectory fast_p. Returns 0, or -1 on a write error. */
int leap_report_print_kernelbench(FILE *fp, const json_t *kb, enum leap_report_format fmt);

/* Writes the SVG charts pass-by-turn.svg, speedup.svg, dcp.svg and advantage.svg into `dir`
 * (created if missing). Returns 0, or -1 with a new message in *err. */
int leap_report_plot(struct leap_report *r, const json_t *sum, const char *dir, char **err);

void leap_report_free(struct leap_report *r);

#endif
