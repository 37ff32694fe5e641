/* opts.h - one table per program, from which its getopt_long options and --help list come. */
#ifndef LEAP_OPTS_H
#define LEAP_OPTS_H

#include <getopt.h>
#include <stdio.h>

/* An option used to be written four times: in the usage text, the longopts array, the short
 * option string and the man page; the copies drifted (an option missing from the help, one
 * described twice in the page). Now each program has one table (as git's parse-options and
 * curl's docs/cmdline-opts have): the getopt_long arrays and the OPTIONS part of --help are
 * built from it, and tests/docs.bats checks the man page's OPTIONS against that --help list.
 * The getopt switch stays in each program: it is the code of the options, and their help
 * text sits next to it in the same file.
 *
 * The table is static data (no allocation, no registration): a program lists its own options
 * and the shared ones by the macros of cli.h and runopts.h, in the order --help shows them. */
struct leap_opt {
	const char *name;    /* long name without "--"; NULL ends the table */
	int letter;          /* short option character, or 0 */
	int has_arg;         /* no_argument, required_argument or optional_argument */
	const char *argname; /* the argument as --help shows it ("N", "FILE"); NULL: none */
	int val;             /* what getopt_long returns for it; 0: the letter */
	/* Help text; several lines separated by '\n', each continued at the help column. NULL:
	 * the option is listed on the line of the entry before it, which the help explains
	 * (as "--progress, --no-progress"). */
	const char *help;
};

/* A program's --help: head (the synopsis lines, a blank line, the description and a blank
 * line), the option list of opts with its help text starting at column col, then tail. */
struct leap_usage {
	const char *head;
	const struct leap_opt *opts;
	int col;
	const char *tail;
};

/* Room for the options of the largest table. */
#define LEAP_OPTS_MAX 64

/* What getopt_long takes, built from a table. */
struct leap_getopt {
	struct option longopts[LEAP_OPTS_MAX + 1];
	char shortopts[3 * LEAP_OPTS_MAX + 1];
};

/* Fills g from table t. A table that getopt_long could not serve as meant (a long name or a
 * letter twice, a val that differs from the letter, an argument name without an argument,
 * more than LEAP_OPTS_MAX entries) is a bug of the program: it dies naming the entry. */
void leap_opts_getopt(struct leap_getopt *g, const struct leap_opt *t);

/* Writes the option list of t, one entry (with the entries that share its line) per help
 * paragraph: "  -n, --trials N         help" or "      --drawn-cases N    help", the help at
 * column col (two spaces after an option too long for it). Returns 0, or -1 when writing
 * failed. */
int leap_opts_print(FILE *fp, const struct leap_opt *t, int col);

/* Writes the whole --help text of u. Returns 0, or -1 when writing failed. */
int leap_usage_print(FILE *fp, const struct leap_usage *u);

#endif
