/* leap-record - check a record stream against leap-record(5), passing every record through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/jsonl.h"
#include "core/record.h"
#include "core/util.h"
#include "core/banned.h"

/* --help: the synopsis and description, the option list built from the table `opts` below, then
 * the exit status. */
static const char usage_head[] =
	"usage: leap-record [OPTION]... [FILE]...\n"
	"\n"
	"Check JSON Lines records against leap-record(5) and pass every one through: a valid\n"
	"record is written byte for byte as it came; a record whose leap fields have the wrong\n"
	"type, or that lacks a required field, is written with an 'error' naming the field; a\n"
	"line that is not a JSON object becomes an error record holding the raw text. Reads the\n"
	"FILEs in order, or standard input.\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"Exit status: 0 every record valid, 1 some record carried an error (it was still written),\n"
	"2 usage error or an input file that could not be read.\n";

struct ctx {
	struct leap_common common;
	struct leap_in in;
	struct leap_out out;
	struct leap_progress progress;
	char **require;
	size_t nrequire;
	long errors;
};

static void split_require(struct ctx *c, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!*tok)
			continue;
		c->require = xrealloc(c->require, (c->nrequire + 1) * sizeof(*c->require));
		c->require[c->nrequire++] = xstrdup(tok);
	}
	free(copy);
	if (!c->nrequire)
		leap_usage_error(&c->common, "--require: no field names in '%s'", list);
}

static void process(struct ctx *c, json_t *rec)
{
	if (json_object_get(rec, "error")) {
		c->errors++; /* carried from upstream: passed on as it came */
		leap_out_raw(&c->out, c->in.buf, c->in.len);
		return;
	}
	char *msg = leap_record_check(rec);
	for (size_t i = 0; !msg && i < c->nrequire; i++)
		if (!json_object_get(rec, c->require[i]))
			msg = xasprintf("required field '%s' is missing", c->require[i]);
	if (!msg) {
		leap_out_raw(&c->out, c->in.buf, c->in.len);
		return;
	}
	leap_warn("%s:%ld: %s", c->in.name, c->in.line, msg);
	json_t *add = json_object();
	json_t *err = leap_error_record(c->in.name, c->in.line, NULL, 0, "%s", msg);
	json_object_set(add, "error", json_object_get(err, "error"));
	leap_out_splice(&c->out, c->in.buf, c->in.len, rec, add);
	json_decref(err);
	json_decref(add);
	free(msg);
	c->errors++;
}

/* The options of leap-record, in the order --help lists them (opts.h). */
static const struct leap_opt opts[] = {
	{"require", 'r', required_argument, "LIST", 0,
	 "comma-separated fields every record must have (e.g. task,completion)"},
	LEAP_OPTS_COMMON,
	{NULL},
};

static const struct leap_usage usage = {usage_head, opts, 25, usage_tail};

int main(int argc, char **argv)
{
	struct ctx c = {0};
	leap_common_init(&c.common, &usage);
	int opt;
	while ((opt = leap_common_getopt(&c.common, argc, argv)) != -1) {
		if (leap_common_option(&c.common, opt, optarg))
			continue;
		switch (opt) {
		case 'r':
			split_require(&c, optarg);
			break;
		default:
			leap_usage_error(&c.common, "unhandled option");
		}
	}
	leap_out_init(&c.out, stdout);
	leap_in_init(&c.in, argc - optind, argv + optind, stdout);
	leap_progress_init(&c.progress, c.common.progress);
	leap_progress_input(&c.progress, argc - optind, argv + optind);
	json_t *rec;
	enum leap_read r;
	while ((r = leap_in_next(&c.in, &rec)) != LEAP_READ_EOF) {
		if (r == LEAP_READ_BAD) {
			leap_out_write(&c.out, rec);
			c.errors++;
		} else {
			process(&c, rec);
		}
		json_decref(rec);
		leap_progress_update(&c.progress, c.in.records + c.in.bad, c.errors);
	}
	leap_progress_end(&c.progress);
	int open_failed = c.in.open_failed;
	leap_in_close(&c.in);
	for (size_t i = 0; i < c.nrequire; i++)
		free(c.require[i]);
	free(c.require);
	int rc = leap_out_close(&c.out);
	if (rc || open_failed)
		return LEAP_EXIT_FATAL;
	return c.errors ? LEAP_EXIT_RECORDS : LEAP_EXIT_OK;
}
