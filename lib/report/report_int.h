/* report_int.h - what report.c, report_print.c and report_plot.c share: the summary's vocabulary. */
/*
 * Private to the files of report.h. The summary is computed in one file and printed and drawn
 * in two others from its JSON object, so the names they all use are defined here once: the
 * baselines a speedup is against, the entry kept per trajectory (the charts read it too) and
 * the classes of the DCP ledger, in their order.
 */
#ifndef LEAP_REPORT_INT_H
#define LEAP_REPORT_INT_H

#include <stdint.h>

#include "report.h"

/* What a speedup is against (leap-bench's bench.baseline_kind); 0: not said (older records). */
static const char *const against[] = {"unknown", "vendor", "kernel", "reference", "torch-eager", "torch-compile"};
#define NAGAINST (sizeof against / sizeof against[0])

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

#endif
