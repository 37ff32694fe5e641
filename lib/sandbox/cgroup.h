/* cgroup.h - the candidate's process tree under the kernel's control: freezing, a fixed core
 * set, its CPU time (and, for later users, its memory). */
#ifndef LEAP_CGROUP_H
#define LEAP_CGROUP_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Why: leap-bench's referee must stop every process and thread a candidate started, the moment
 * a timed block ends and whenever the baseline runs, and it must hold the candidate to a fixed
 * set of cores chosen before the candidate is loaded (OpenMP sizes its thread pool from the
 * affinity it finds at load). Only the kernel can do both for a whole process tree, whatever
 * the tree does (setsid, fork, threads): control groups.
 *
 * Machines differ. Current distributions mount the unified (v2) hierarchy, where cgroup.freeze
 * and cpu.stat are core files of every group and cpuset/memory are controllers a parent may
 * enable for its children; older ones (and this project's CI) mount v1 hierarchies (freezer,
 * cpuset, cpuacct, memory, pids) and often a v2 one without controllers beside them, whose core
 * files still work. leap_cgroups_detect() looks once, at start, at what this process may use:
 * for each function the v2 way where it works, else the v1 hierarchy, else nothing (the caller
 * then falls back: stopping the PID namespace with signals, sched_setaffinity before exec, no
 * CPU accounting). The groups made for one sandbox live under this process's own group in each
 * hierarchy, named leap-PID-N, and are removed with it; leftovers of a process that died are
 * removed by the next detection.
 *
 * Adding a limit (memory.max, pids.max): leap_cgroups_detect() already finds the memory and
 * pids hierarchies (mode[LEAP_CG_MEMORY], mode[LEAP_CG_PIDS]); ask for the controller in
 * leap_cgroup_make()'s `ctrl` mask and write the file with leap_cgroup_write(), which names the
 * file by controller and version.
 */

enum leap_cg_ctrl { LEAP_CG_FREEZER, LEAP_CG_CPUSET, LEAP_CG_CPUACCT, LEAP_CG_MEMORY, LEAP_CG_PIDS, LEAP_CG_NCTRL };

/* How a function is provided (leap_cgroups.mode[ctrl]). */
enum leap_cg_mode { LEAP_CG_NONE = 0, LEAP_CG_V1 = 1, LEAP_CG_V2 = 2 };

/* What this machine lets this process use; detected once per program (owned by main's
 * context), read-only afterwards except for `seq`. */
struct leap_cgroups {
	char *v2;                       /* our group in the v2 hierarchy, where we may make children; NULL: none */
	char *v1[LEAP_CG_NCTRL];        /* our group in the v1 hierarchy of each controller (writable); NULL: none */
	enum leap_cg_mode mode[LEAP_CG_NCTRL]; /* the version used for each function (v2 first) */
	char note[256];                 /* what was not usable and why (for messages), or "" */
	unsigned long seq;              /* groups made so far (names) */
};

/* One sandbox's groups. */
struct leap_cgroup {
	char *dir[LEAP_CG_NCTRL + 1];   /* [LEAP_CG_NCTRL]: the v2 group; others: v1 groups */
	enum leap_cg_mode mode[LEAP_CG_NCTRL];
	int freeze_fd;                  /* v2 cgroup.freeze / v1 freezer.state, or -1 */
	int events_fd;                  /* v2 cgroup.events, or -1 */
	int usage_fd;                   /* v2 cpu.stat / v1 cpuacct.usage, or -1 */
	int pressure_fd;                /* v2 cpu.pressure (PSI), or -1 */
	int frozen;
	int made;                       /* leap_cgroup_make succeeded (a zeroed struct is "none") */
};

/* Detects the hierarchies and what this process may do in them (makes and removes a probe
 * group in each), and removes groups leap-PID-N left by processes that no longer run. Each
 * function is served by v2 where it works, else v1 (prefer LEAP_CG_V1: the other way round).
 * Never fails: cg->mode says what works and cg->note why something does not. */
void leap_cgroups_detect(struct leap_cgroups *cg, enum leap_cg_mode prefer);
void leap_cgroups_free(struct leap_cgroups *cg);

/* The hierarchy a function is used from as text ("cgroup v2", "cgroup v1", "none"). Static. */
const char *leap_cgroups_mode_name(enum leap_cg_mode m);

/* Makes the groups of one sandbox for the functions in `ctrl` (a mask of 1 << LEAP_CG_x; those
 * cg cannot provide are skipped: check g->mode), each with its own freshly made group, the
 * cpuset restricted to `cpus` (when LEAP_CG_CPUSET is asked and `cpus` is not NULL). Returns 0,
 * or -1 with a new message in *err (nothing left behind). */
int leap_cgroup_make(struct leap_cgroups *cg, struct leap_cgroup *g, unsigned ctrl, const cpu_set_t *cpus,
		     char **err);

/* Moves process `pid` (and so every process it starts later) into every group of g. Returns 0,
 * or -1 with a new message in *err. */
int leap_cgroup_enter(const struct leap_cgroup *g, pid_t pid, char **err);

/* Freezes every process of the groups and waits until the kernel says they are all frozen,
 * at most `timeout` seconds. Returns 0, -1 (no freezer in g, or a write failed), -2 (timeout). */
int leap_cgroup_freeze(struct leap_cgroup *g, double timeout);
/* Thaws them. Returns 0 or -1. */
int leap_cgroup_thaw(struct leap_cgroup *g);

/* CPU time used so far by every process that ever ran in the groups, in nanoseconds. Returns
 * 0, or -1 when g has no CPU accounting. */
int leap_cgroup_usage(const struct leap_cgroup *g, uint64_t *ns);

/* The time, in nanoseconds, during which every runnable process of the v2 group waited for a
 * CPU that others held (the "full" line of cpu.pressure: pressure stall information, Linux
 * 5.13 and later for a group): time in which none of them ran although one could have. Returns
 * 0, or -1 when the kernel does not report it for g. */
int leap_cgroup_stalled(const struct leap_cgroup *g, uint64_t *ns);

/* Parses the total of the "full" line of a cpu.pressure text, in microseconds. Returns 0 or
 * -1 (no such line). */
int leap_psi_full_us(const char *text, uint64_t *us);

/* Writes `value` into the control file `file` of controller c's group ("memory.max" for v2,
 * "memory.limit_in_bytes" for v1: the caller names the file of g->mode[c]). Returns 0, or -1
 * with a new message in *err (no such group, or the kernel refused). */
int leap_cgroup_write(const struct leap_cgroup *g, enum leap_cg_ctrl c, const char *file, const char *value,
		      char **err);

/* Reads the control file `file` of controller c's group into buf[n] (NUL-terminated). Returns
 * the length, or -1 (no such group or file). */
ssize_t leap_cgroup_read(const struct leap_cgroup *g, enum leap_cg_ctrl c, const char *file, char *buf, size_t n);

/* Sets the memory limit of g's memory group to `bytes` (v2 memory.max, and memory.swap.max 0
 * where there is one, so that the limit is not met by swapping; v1 memory.limit_in_bytes).
 * Returns 0, or -1 with a new message in *err. */
int leap_cgroup_memory_max(const struct leap_cgroup *g, uint64_t bytes, char **err);

/* 1 when the kernel killed a process of g's memory group for reaching its limit (v2
 * memory.events oom_kill, v1 memory.oom_control oom_kill, else memory.failcnt), else 0. */
int leap_cgroup_memory_hit(const struct leap_cgroup *g);

/* Thaws, kills every process left in the groups, and removes them (waiting briefly for the
 * processes to go). Safe on a group never made, and twice. */
void leap_cgroup_remove(struct leap_cgroup *g);

/* ---- the candidate's cores ---- */

/* The CPUs this process may run on (its affinity): the default core set of a candidate, and
 * the bound of any --cpus list. Returns the number of CPUs in *set. */
int leap_cpus_allowed(cpu_set_t *set);

/* Parses a CPU list ("0-3,6"), each CPU one this process may run on. NULL or "" gives the
 * default: leap_cpus_allowed(). Returns the number of CPUs, or -1 with a new message in *err. */
int leap_cpus_parse(const char *list, cpu_set_t *set, char **err);

/* The number of cores a candidate gets for --cpus `list` (NULL: the default), as the prompt
 * should tell the model; -1 when the list is not valid here. */
int leap_candidate_cores(const char *list);

/* Writes a set as a list ("0-1,4") into buf[n]. */
void leap_cpus_format(const cpu_set_t *set, char *buf, size_t n);

#endif
