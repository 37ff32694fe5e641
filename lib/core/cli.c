/* cli.c - the command line every leap program shares: --help, --version, progress, task path. */
/*
 * What every program must do the same way is written once: the common options (--help,
 * --version, --progress) come last in each program's option table, a usage error prints the
 * synopsis and exits 2, and the task suite is found by one rule (--tasks, LEAP_TASKS, then
 * beside the executable, installed or in a checkout), so that an installed program needs no
 * compiled-in path. A suite named by the user must exist, and saying so is the user's error,
 * not a task "not found". The default backend is cuda only when a CUDA device is usable.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"
#include "banned.h"

void leap_common_init(struct leap_common *c, const struct leap_usage *usage)
{
	memset(c, 0, sizeof(*c));
	c->usage = usage;
	c->progress = -1;
	leap_opts_getopt(&c->g, usage->opts);
}

int leap_common_getopt(struct leap_common *c, int argc, char **argv)
{
	return getopt_long(argc, argv, c->g.shortopts, c->g.longopts, NULL);
}

static void print_synopsis(FILE *fp, const struct leap_usage *usage)
{
	/* The synopsis is every line of the head up to the first blank one. */
	const char *head = usage->head, *end = strstr(head, "\n\n");
	size_t n = end ? (size_t)(end - head) + 1 : strlen(head);
	fwrite(head, 1, n, fp);
	fprintf(fp, "Try '%s --help' for more information.\n", leap_prog());
}

void leap_usage_error(const struct leap_common *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", leap_prog(), msg);
	free(msg);
	print_synopsis(stderr, c->usage);
	exit(LEAP_EXIT_FATAL);
}

int leap_common_option(struct leap_common *c, int opt, const char *arg)
{
	switch (opt) {
	case 'h':
		if (leap_usage_print(stdout, c->usage) || fflush(stdout) == EOF)
			exit(LEAP_EXIT_FATAL);
		exit(LEAP_EXIT_OK);
	case 'V':
		printf("%s (leap) %s\n", leap_prog(), LEAP_VERSION);
		exit(fflush(stdout) == EOF ? LEAP_EXIT_FATAL : LEAP_EXIT_OK);
	case '?':
		/* getopt_long already said what was wrong */
		print_synopsis(stderr, c->usage);
		exit(LEAP_EXIT_FATAL);
	case ':':
		print_synopsis(stderr, c->usage);
		exit(LEAP_EXIT_FATAL);
	case LEAP_OPT_PROGRESS:
		c->progress = 1;
		return 1;
	case LEAP_OPT_NO_PROGRESS:
		c->progress = 0;
		return 1;
	case LEAP_OPT_TASKS:
		c->tasks = arg;
		return 1;
	default:
		return 0;
	}
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A suite named by --tasks or LEAP_TASKS must be a directory: a wrong one is the user's error,
 * said as such, not "task 'softmax' not found in /wrong". */
static char *named_suite(const char *dir, const char *how)
{
	struct stat st;
	if (stat(dir, &st))
		leap_die("%s%s: %s (the task suite)", how, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		leap_die("%s%s: not a directory (the task suite)", how, dir);
	return xstrdup(dir);
}

char *leap_tasks_dir(const char *opt)
{
	if (opt && *opt)
		return named_suite(opt, "--tasks ");
	const char *env = getenv("LEAP_TASKS");
	if (env && *env)
		return named_suite(env, "LEAP_TASKS=");
	char *exe = leap_exe_dir();
	if (exe) {
		static const char *const rel[] = {"/../share/leap/tasks", "/../tasks"};
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char *p = xasprintf("%s%s", exe, rel[i]);
			if (is_dir(p)) {
				char *real = realpath(p, NULL);
				free(exe);
				if (real) {
					free(p);
					return real;
				}
				return p;
			}
			free(p);
		}
		char *installed = xasprintf("%s/../share/leap/tasks", exe); /* named in messages */
		free(exe);
		return installed;
	}
	return xstrdup("tasks");
}

long leap_group_size_option(const struct leap_common *c, const char *arg)
{
	int64_t v;
	if (leap_parse_i64(arg, 1, LEAP_GROUP_SIZE_MAX, &v))
		leap_usage_error(c, "--group-size: '%s' is not an integer from 1 to %d", arg, LEAP_GROUP_SIZE_MAX);
	return (long)v;
}
