/* runopts.c - one parser for the sandbox and ad-hoc options of leap-verify and leap-bench. */
/*
 * leap-verify and leap-bench run candidates in the same sandbox and take the same options for
 * it (--seed, --timeout, --memory, --file-size, --nproc, --devices, --task...): parsed here
 * once, they have the same ranges and the same words for a bad value in both programs. A
 * program's own defaults and help stay its own (leap-bench's --timeout follows --max-time):
 * only the parsing and the checks are shared.
 */
#include "core/cli.h" /* first: it uses __attribute__((noreturn)), which <stdnoreturn.h> renames */
#include "runopts.h"
#include "core/util.h"
#include "core/banned.h"

int leap_runopts_option(struct leap_runopts *r, const struct leap_common *c, int opt, const char *arg)
{
	int64_t v64;
	char *err = NULL;
	switch (opt) {
	case 's':
		if (leap_parse_i64(arg, 0, LEAP_SEED_MAX, &v64))
			leap_usage_error(c, "--seed: '%s' is not an integer in [0, 2^53)", arg);
		r->seed = (uint64_t)v64;
		r->have_seed = 1;
		return 1;
	case 't':
		if (leap_parse_seconds(arg, &r->o->sb.timeout) || r->o->sb.timeout > 86400)
			leap_usage_error(c, "--timeout: '%s' is not a duration up to a day", arg);
		return 1;
	case 'm':
		if (leap_parse_size(arg, &v64) || v64 < (64 << 20))
			leap_usage_error(c, "--memory: '%s' is not a size of at least 64M", arg);
		r->o->sb.mem_bytes = (uint64_t)v64;
		return 1;
	case LEAP_OPT_FSIZE:
		if (leap_parse_size(arg, &v64) || v64 < 4096)
			leap_usage_error(c, "--file-size: '%s' is not a size of at least 4K", arg);
		r->o->sb.fsize_bytes = (uint64_t)v64;
		return 1;
	case LEAP_OPT_NPROC:
		if (leap_parse_i64(arg, 4, 1 << 20, &v64))
			leap_usage_error(c, "--nproc: '%s' is not an integer in [4, 1048576]", arg);
		r->o->sb.nproc = (long)v64;
		return 1;
	case 'd':
		if (leap_parse_i64(arg, 0, 1023, &v64))
			leap_usage_error(c, "--device: '%s' is not a device index", arg);
		r->o->device = arg;
		r->have_device = 1;
		return 1;
	case LEAP_OPT_DEVICES:
		leap_devices_free(r->devs);
		if (leap_devices_parse(arg, r->devs, &err))
			leap_usage_error(c, "--devices: %s", err);
		return 1;
	case LEAP_OPT_TOL:
		if (leap_tolerance_parse(arg, &r->o->tolerance))
			leap_usage_error(c, "--tolerance: '%s' is not " LEAP_TOLERANCE_NAMES, arg);
		return 1;
	case LEAP_OPT_NO_NS:
		r->o->sb.namespaces = 0;
		return 1;
	case LEAP_OPT_TASK:
		r->task = arg;
		return 1;
	case 'b':
		r->backend = arg;
		return 1;
	case LEAP_OPT_CACHE:
		r->cache = arg;
		return 1;
	}
	return 0;
}

void leap_runopts_check(const struct leap_runopts *r, const struct leap_common *c, int nfiles)
{
	if (r->backend && !r->task)
		leap_usage_error(c, "--backend needs --task (records name their backend)");
	if (r->task && nfiles <= 0)
		leap_usage_error(c, "--task needs at least one source file");
}
