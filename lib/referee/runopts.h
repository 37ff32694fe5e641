/* runopts.h - the sandbox and ad-hoc options leap-verify and leap-bench share. */
#ifndef LEAP_RUNOPTS_H
#define LEAP_RUNOPTS_H

#include <stdint.h>

#include "core/cli.h"
#include "backend/devices.h"
#include "verify.h"

/* Option codes of the shared long-only options, below the programs' own (LEAP_OPT_PRIVATE). */
enum {
	LEAP_OPT_NO_NS = LEAP_OPT_PRIVATE - 0x80, /* --no-namespaces */
	LEAP_OPT_TASK,                          /* --task TASK */
	LEAP_OPT_CACHE,                         /* --cache DIR */
	LEAP_OPT_DEVICES,                       /* --devices LIST */
	LEAP_OPT_FSIZE,                         /* --file-size SIZE */
	LEAP_OPT_NPROC,                         /* --nproc N */
	LEAP_OPT_TOL,                           /* --tolerance MODE */
};

/* The shared options' entries of a program's option table (opts.h): name, letter, argument
 * and code are those leap_runopts_option parses; the help is the program's own (defaults
 * differ: leap-bench's --timeout follows --max-time). Each program lists the ones it takes,
 * where its --help shows them. */
#define LEAP_RUNOPT_SEED(help) {"seed", 's', required_argument, "N", 0, help}
#define LEAP_RUNOPT_TIMEOUT(help) {"timeout", 't', required_argument, "SECS", 0, help}
#define LEAP_RUNOPT_MEMORY(help) {"memory", 'm', required_argument, "SIZE", 0, help}
#define LEAP_RUNOPT_DEVICE(help) {"device", 'd', required_argument, "N", 0, help}
#define LEAP_RUNOPT_BACKEND(help) {"backend", 'b', required_argument, "NAME", 0, help}
#define LEAP_RUNOPT_NO_NS(help) {"no-namespaces", 0, no_argument, NULL, LEAP_OPT_NO_NS, help}
#define LEAP_RUNOPT_TASK(help) {"task", 0, required_argument, "TASK", LEAP_OPT_TASK, help}
#define LEAP_RUNOPT_CACHE(help) {"cache", 0, required_argument, "DIR", LEAP_OPT_CACHE, help}
#define LEAP_RUNOPT_DEVICES(help) {"devices", 0, required_argument, "LIST", LEAP_OPT_DEVICES, help}
#define LEAP_RUNOPT_FSIZE(help) {"file-size", 0, required_argument, "SIZE", LEAP_OPT_FSIZE, help}
#define LEAP_RUNOPT_NPROC(help) {"nproc", 0, required_argument, "N", LEAP_OPT_NPROC, help}
#define LEAP_RUNOPT_TOL(help) {"tolerance", 0, required_argument, "MODE", LEAP_OPT_TOL, help}

/* What the shared options set. This parses them once: -s/--seed, -t/--timeout, -m/--memory,
 * -d/--device, -b/--backend and the long-only codes above. */
struct leap_runopts {
	struct leap_verify_opts *o; /* sb.timeout, sb.mem_bytes, sb.fsize_bytes, sb.nproc,
				     * sb.namespaces, device and tolerance are set here */
	struct leap_devices *devs;  /* --devices */
	uint64_t seed;
	int have_seed, have_device;
	const char *task, *backend, *cache;
};

/* Handles one getopt_long result `opt` when it is a shared option: sets the setting, or
 * exits with a usage error naming the option. Returns 1 when handled, 0 when it is not a
 * shared option. */
int leap_runopts_option(struct leap_runopts *r, const struct leap_common *c, int opt, const char *arg);

/* The checks of ad-hoc mode after parsing (argc - optind source files): --backend needs
 * --task, and --task needs a source file. Exits with a usage error. */
void leap_runopts_check(const struct leap_runopts *r, const struct leap_common *c, int nfiles);

#endif
