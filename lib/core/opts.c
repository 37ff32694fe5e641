/* opts.c - getopt_long arrays and the --help option list, built from a program's option table. */
/*
 * Why one table per program: opts.h. This file only derives from it: the getopt_long arrays
 * (an entry that cannot work, such as a duplicate letter, is a programming error caught at
 * start by check_entry, not a silent option lost) and the OPTIONS list of --help, wrapped at
 * the help column, which tests/docs.bats compares with the man page.
 */
#include <string.h>

#include "opts.h"
#include "util.h"
#include "banned.h"

/* The value getopt_long returns for e. */
static int value_of(const struct leap_opt *e)
{
	return e->val ? e->val : e->letter;
}

/* Dies when entry i of t cannot be served as the table means it (see opts.h). */
static void check_entry(const struct leap_opt *t, size_t i)
{
	const struct leap_opt *e = &t[i];
	if (e->has_arg != no_argument && e->has_arg != required_argument && e->has_arg != optional_argument)
		leap_die("internal error: option --%s: bad argument kind %d", e->name, e->has_arg);
	if ((e->has_arg == no_argument) != (e->argname == NULL))
		leap_die("internal error: option --%s: an argument needs a name, and only an argument", e->name);
	if (e->letter && e->val && e->val != e->letter)
		leap_die("internal error: option --%s: -%c returns %d", e->name, e->letter, e->val);
	if (!value_of(e))
		leap_die("internal error: option --%s: no value for getopt_long", e->name);
	if (!e->help && i == 0)
		leap_die("internal error: option --%s: no help and no entry before it", e->name);
	for (size_t j = 0; j < i; j++) {
		if (!strcmp(t[j].name, e->name))
			leap_die("internal error: option --%s is in the table twice", e->name);
		if (e->letter && t[j].letter == e->letter)
			leap_die("internal error: option -%c is in the table twice", e->letter);
		if (value_of(&t[j]) == value_of(e))
			leap_die("internal error: options --%s and --%s return the same value", t[j].name, e->name);
	}
}

void leap_opts_getopt(struct leap_getopt *g, const struct leap_opt *t)
{
	size_t n = 0, s = 0;
	memset(g, 0, sizeof *g);
	for (; t[n].name; n++) {
		if (n == LEAP_OPTS_MAX)
			leap_die("internal error: more than %d options", LEAP_OPTS_MAX);
		check_entry(t, n);
		g->longopts[n] = (struct option){t[n].name, t[n].has_arg, NULL, value_of(&t[n])};
		if (!t[n].letter)
			continue;
		g->shortopts[s++] = (char)t[n].letter;
		if (t[n].has_arg != no_argument)
			g->shortopts[s++] = ':';
		if (t[n].has_arg == optional_argument)
			g->shortopts[s++] = ':';
	}
	/* g->longopts[n] and g->shortopts[s] are the terminators memset wrote */
}

/* Writes "-x, --name ARG" (or "--name[=ARG]") of e; returns the characters written, or -1. */
static int print_names(FILE *fp, const struct leap_opt *e)
{
	int n = 0, k;
	if (e->letter && (n = fprintf(fp, "-%c, ", e->letter)) < 0)
		return -1;
	if ((k = fprintf(fp, "--%s", e->name)) < 0)
		return -1;
	n += k;
	if (e->has_arg == required_argument)
		k = fprintf(fp, " %s", e->argname);
	else if (e->has_arg == optional_argument)
		k = fprintf(fp, "[=%s]", e->argname);
	else
		k = 0;
	return k < 0 ? -1 : n + k;
}

/* Writes the help of an entry whose names end at column at: the first line from column col
 * (two spaces further when the names reach it), the others at col. */
static int print_help(FILE *fp, const char *help, int at, int col)
{
	int pad = at < col ? col - at : 2;
	for (const char *p = help;;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		if (fprintf(fp, "%*s%.*s\n", pad, "", len, p) < 0)
			return -1;
		if (!nl)
			return 0;
		p = nl + 1;
		pad = col;
	}
}

int leap_opts_print(FILE *fp, const struct leap_opt *t, int col)
{
	for (size_t i = 0; t[i].name;) {
		/* the entry and those after it with no help of their own share one line */
		const char *indent = t[i].letter ? "  " : "      ";
		int at = (int)strlen(indent);
		if (fputs(indent, fp) == EOF)
			return -1;
		size_t j = i;
		do {
			if (j > i && fputs(", ", fp) == EOF)
				return -1;
			int m = print_names(fp, &t[j]);
			if (m < 0)
				return -1;
			at += (j > i ? 2 : 0) + m;
			j++;
		} while (t[j].name && !t[j].help);
		if (print_help(fp, t[i].help ? t[i].help : "", at, col))
			return -1;
		i = j;
	}
	return 0;
}

int leap_usage_print(FILE *fp, const struct leap_usage *u)
{
	if (fputs(u->head, fp) == EOF || leap_opts_print(fp, u->opts, u->col) || fputs(u->tail, fp) == EOF)
		return -1;
	return 0;
}
