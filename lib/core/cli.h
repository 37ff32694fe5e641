/* cli.h - the command line every leap program shares: --help, --version, progress, task path. */
#ifndef LEAP_CLI_H
#define LEAP_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "opts.h"
#include "progress.h"
#include "task/task.h"

/* Option codes of the common long options (above any short option character). */
enum {
	LEAP_OPT_PROGRESS = 0x1000,
	LEAP_OPT_NO_PROGRESS,
	LEAP_OPT_TASKS,
	LEAP_OPT_PRIVATE = 0x1100, /* programs number their own long-only options from here */
};

/* Entries of a leap_opt table (opts.h) for the common options, last in every program's list:
 * --progress and --no-progress on one line with the help given, then --help and --version. */
#define LEAP_OPTS_PROGRESS(help)                                              \
	{"progress", 0, no_argument, NULL, LEAP_OPT_PROGRESS, help},          \
	{"no-progress", 0, no_argument, NULL, LEAP_OPT_NO_PROGRESS, NULL}
#define LEAP_OPTS_HELP_VERSION                                                \
	{"help", 'h', no_argument, NULL, 0, "show this help and exit"},       \
	{"version", 'V', no_argument, NULL, 0, "show the version and exit"}
#define LEAP_OPTS_COMMON                                                      \
	LEAP_OPTS_PROGRESS("force the progress line on stderr on or off"),    \
	LEAP_OPTS_HELP_VERSION

/* --tasks DIR, for the programs that read the task suite (before LEAP_OPTS_COMMON). */
#define LEAP_OPTS_TASKS                                                       \
	{"tasks", 0, required_argument, "DIR", LEAP_OPT_TASKS,                \
	 "the task suite (default: $LEAP_TASKS, else the bundled suite)"}

/* The settings behind the common options. */
struct leap_common {
	const struct leap_usage *usage; /* --help (its head begins with the synopsis) */
	int progress;      /* -1: when stderr is a terminal; 0: never; 1: always */
	const char *tasks; /* --tasks DIR, or NULL */
	struct leap_getopt g; /* getopt_long's arrays, built from usage->opts */
};

/* Sets the defaults and builds the getopt_long arrays from the table --help lists, so that
 * the options parsed are always the options shown. */
void leap_common_init(struct leap_common *c, const struct leap_usage *usage);

/* The next option of argv, as getopt_long returns it for the program's table. */
int leap_common_getopt(struct leap_common *c, int argc, char **argv);

/* Handles one getopt_long result `opt` if it is a common option (or '?'): prints help or
 * version and exits 0, prints the usage on stderr and exits 2 for '?', or records the
 * setting. Returns 1 when `opt` was handled, 0 when it is the program's own. */
int leap_common_option(struct leap_common *c, int opt, const char *arg);

/* Prints "PROG: MSG" and the synopsis on stderr and exits with LEAP_EXIT_FATAL. */
void leap_usage_error(const struct leap_common *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* The largest --group-size any program takes. */
#define LEAP_GROUP_SIZE_MAX (1 << 20)

/* Parses --group-size `arg` (an integer from 1 to LEAP_GROUP_SIZE_MAX), or exits with a
 * usage error naming it: one rule and one message for leap-prompt and the group programs. */
long leap_group_size_option(const struct leap_common *c, const char *arg);

/* Resolves the task suite directory: `opt` (--tasks), else $LEAP_TASKS, else the suite next
 * to the executable (../share/leap/tasks when installed, ../tasks in the build tree); when
 * none is found, the installed place (for messages). A suite named by --tasks or LEAP_TASKS
 * that is not a directory is a fatal error (exit 2) naming it. Returns a new string. */
char *leap_tasks_dir(const char *opt);

#endif
