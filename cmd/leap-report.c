/* leap-report - summary tables and charts of a rollout: pass by turn, fast_p, DCP ledger, advantages. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/jsonl.h"
#include "report/report.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-report [OPTION]... [FILE]...\n"
	"\n"
	"Summarise records of a rollout (any stage; typically the finished trajectories of\n"
	"leap-prune --done, or leap-advantage's output): per task and overall pass rate by turn,\n"
	"recovery of turn-k failures at turn k+1, outcome shares, KernelBench's fast_p, the\n"
	"geometric-mean speedup and roofline fraction of correct samples, the DCP ledger (group\n"
	"decisions, compile/run time spent against an unpruned rollout) and advantage statistics.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 report written, 1 some input records carried an error (they are counted,\n"
	"not summarised), 2 usage error, unreadable input or a write error.\n";

enum { OPT_METRIC = LEAP_OPT_PRIVATE };

/* The options of leap-report, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"format", 'f', required_argument, "FMT", 0,
	 "text (default), markdown, json or csv (csv: the per-task table)"},
	{"plot", 'p', required_argument, "DIR", 0,
	 "also write SVG charts into DIR (pass-by-turn, tasks, speedup, dcp,\n"
	 "advantage)"},
	{"max-turns", 't', required_argument, "N", 0,
	 "the rollout's turn budget, for the DCP ledger (default 3)"},
	{"metric", 0, required_argument, "NAME", OPT_METRIC,
	 "kernelbench: also KernelBench's fast_0, fast_1, fast_2 per answer\n"
	 "(every record counts), beside leap's per-trajectory fast_p;\n"
	 "leap (default): leap's alone"},
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

int main(int argc, char **argv)
{
	struct leap_common common;
	leap_common_init(&common, &usage);
	enum leap_report_format fmt = LEAP_FMT_TEXT;
	const char *plot = NULL;
	int max_turns = 3, kernelbench = 0, opt;
	while ((opt = leap_common_getopt(&common, argc, argv)) != -1) {
		if (leap_common_option(&common, opt, optarg))
			continue;
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = LEAP_FMT_TEXT;
			else if (!strcmp(optarg, "markdown") || !strcmp(optarg, "md"))
				fmt = LEAP_FMT_MARKDOWN;
			else if (!strcmp(optarg, "json"))
				fmt = LEAP_FMT_JSON;
			else if (!strcmp(optarg, "csv"))
				fmt = LEAP_FMT_CSV;
			else
				leap_usage_error(&common, "--format: '%s' is not text, markdown, json or csv", optarg);
			break;
		case 'p':
			plot = optarg;
			break;
		case 't':
			if (leap_parse_int(optarg, 1, LEAP_REPORT_MAX_TURNS, &max_turns))
				leap_usage_error(&common, "--max-turns: '%s' is not an integer from 1 to %d", optarg,
						 LEAP_REPORT_MAX_TURNS);
			break;
		case OPT_METRIC:
			if (!strcmp(optarg, "kernelbench"))
				kernelbench = 1;
			else if (!strcmp(optarg, "leap"))
				kernelbench = 0;
			else
				leap_usage_error(&common, "--metric: '%s' is not leap or kernelbench", optarg);
			break;
		default:
			leap_usage_error(&common, "unhandled option");
		}
	}
	struct leap_report r;
	leap_report_init(&r, max_turns);
	struct leap_in in;
	leap_in_init(&in, argc - optind, argv + optind, NULL);
	struct leap_progress progress;
	leap_progress_init(&progress, common.progress);
	leap_progress_input(&progress, argc - optind, argv + optind);
	json_t *rec;
	while (leap_in_next(&in, &rec) != LEAP_READ_EOF) {
		leap_report_add_at(&r, rec, in.name, in.line);
		json_decref(rec);
		leap_progress_update(&progress, in.records + in.bad, (long)r.errors);
	}
	leap_progress_end(&progress);
	int open_failed = in.open_failed;
	leap_in_close(&in);

	json_t *sum = leap_report_json(&r);
	if (kernelbench)
		json_object_set_new(sum, "kernelbench", leap_report_kernelbench_json(&r));
	signal(SIGPIPE, SIG_IGN);
	int rc = LEAP_EXIT_OK;
	if (leap_report_print(stdout, sum, fmt) ||
	    (kernelbench && (fmt == LEAP_FMT_TEXT || fmt == LEAP_FMT_MARKDOWN) &&
	     leap_report_print_kernelbench(stdout, json_object_get(sum, "kernelbench"), fmt))) {
		leap_warn_errno("write error");
		rc = LEAP_EXIT_FATAL;
	}
	if (plot) {
		char *err = NULL;
		if (leap_report_plot(&r, sum, plot, &err)) {
			leap_warn("%s", err);
			free(err);
			rc = LEAP_EXIT_FATAL;
		}
	}
	long errors = r.errors;
	json_decref(sum);
	leap_report_free(&r);
	if (fflush(stdout) == EOF || fclose(stdout) == EOF) {
		leap_warn_errno("write error");
		rc = LEAP_EXIT_FATAL;
	}
	if (rc || open_failed)
		return LEAP_EXIT_FATAL;
	return errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
