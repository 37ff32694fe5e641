/* cgroup.c - the candidate's process tree under the kernel's control: freezing, a fixed core
 * set, its CPU time (see cgroup.h for why and how versions are chosen). */
/*
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * Memory cgroup (`--memory`, both programs, both backends):
 *
 * Where this process may make a group in a memory hierarchy (v2 `memory.max` with
 * `memory.swap.max` 0, else the v1 memory controller's `memory.limit_in_bytes` and
 * `memory.memsw.limit_in_bytes`: this machine mounts v1 hierarchies), every sandbox of
 * leap-verify and of leap-bench (its timed candidate and its baseline too), cpu or cuda, is put
 * before it executes the runner in a memory group of its own (the group leap-bench's referee
 * already makes for its freezer and cores) limited to `--memory` plus its shared regions
 * (`leap_sandbox_fit_memory()` in lib/sandbox/sandbox.c; leap-verify's `--memory-max` names another
 * limit, or none). The limit counts the memory the whole tree really uses, every process and
 * thread in any session. Pages count against the group that first touches them: leap maps a cpu
 * sandbox's shared regions populated, so its own group pays for them and a big input pool costs
 * the candidate nothing; a cuda sandbox's lazy staging regions fault in inside it, which the
 * room for the regions covers. When the kernel kills in the group at the limit (v2
 * `memory.events` oom_kill, v1 `memory.oom_control` oom_kill or `memory.failcnt`), the record
 * is `runtime_error` with "reached the memory limit of N MiB (the kernel ended it)"
 * (lib/sandbox/session.c, both programs) and, in leap-verify, `verify.memory_limit` (bytes). The group
 * is removed with the sandbox. Tests: security.bats "verify and bench: --memory bounds the
 * sandbox, not a process: six processes of 64 MiB end at 128M" (hog_processes.c: six children
 * of 64 MiB, each far inside its address-space limit, under --memory 128M; they pass with 1G);
 * security.bats "verify: --memory-max ends a candidate at its memory limit, the limit in the
 * record"; storm.bats (memory acts of four processes never hold 256 MiB under --memory 128M).
 * Cost: moving a process into a v1 group waits for an RCU grace period, 5 to 15 ms of wall time
 * per leap-verify candidate here (leap-bench's sandboxes had groups already).
 *
 * Does not stop: without a memory cgroup this process may use (commonly without root, or in a
 * container that does not delegate one; as `nobody`, in a user namespace) there is no bound on
 * the sandbox, only each cpu process's address space: leap-verify and leap-bench say so once on
 * stderr ("no memory cgroup this process may use"), and `make doctor` reports it -- security.bats
 * "verify and bench: without a memory cgroup (as nobody) each says so once; with one, no word
 * and the bound". GPU memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "core/util.h"
#include "core/banned.h"

/* The v1 name of each controller, and a file that proves a group of it works. */
static const char *const ctrl_name[LEAP_CG_NCTRL] = {"freezer", "cpuset", "cpuacct", "memory", "pids"};
static const char *const v1_probe[LEAP_CG_NCTRL] = {"freezer.state", "cpuset.cpus", "cpuacct.usage",
						     "memory.limit_in_bytes", "pids.max"};
/* The file of a v2 group each function needs (cgroup.freeze and cpu.stat are core files). */
static const char *const v2_probe[LEAP_CG_NCTRL] = {"cgroup.freeze", "cpuset.cpus", "cpu.stat", "memory.max",
						     "pids.max"};

const char *leap_cgroups_mode_name(enum leap_cg_mode m)
{
	return m == LEAP_CG_V2 ? "cgroup v2" : m == LEAP_CG_V1 ? "cgroup v1" : "none";
}

/* Undoes the octal escapes (\040) of a mountinfo field in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* 1 when the comma-separated list has the token `tok`. */
static int has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, tok, n))
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* 1 when the space-separated list has the word `w` (cgroup.subtree_control). */
static int has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; *p;) {
		p += strspn(p, " \n");
		size_t len = strcspn(p, " \n");
		if (len == n && !strncmp(p, w, n))
			return 1;
		p += len;
	}
	return 0;
}

/* A mount of a cgroup hierarchy: where it is and which part of the hierarchy it shows. */
struct mnt {
	char *point, *root;
};

/* Finds the mount of the v2 hierarchy (ctrl < 0) or of the v1 hierarchy holding controller
 * `ctrl`. Returns 0 with new strings in *m, or -1. */
static int find_mount(int ctrl, struct mnt *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int found = -1;
	while (found && getline(&line, &cap, f) > 0) {
		char *save = NULL, *fld[6];
		int n = 0;
		char *tok = strtok_r(line, " \n", &save);
		while (tok && n < 6) {
			fld[n++] = tok;
			tok = strtok_r(NULL, " \n", &save);
		}
		if (n < 6)
			continue;
		while (tok && strcmp(tok, "-")) /* optional fields end at "-" */
			tok = strtok_r(NULL, " \n", &save);
		char *type = strtok_r(NULL, " \n", &save), *src = strtok_r(NULL, " \n", &save);
		char *super = strtok_r(NULL, " \n", &save);
		if (!type || !src || !super)
			continue;
		if (ctrl < 0 ? strcmp(type, "cgroup2") : strcmp(type, "cgroup") || !has_token(super, ctrl_name[ctrl]))
			continue;
		unescape(fld[3]);
		unescape(fld[4]);
		m->root = xstrdup(fld[3]);
		m->point = xstrdup(fld[4]);
		found = 0;
	}
	free(line);
	fclose(f);
	return found;
}

/* Our own group in the v2 hierarchy (ctrl < 0) or the v1 hierarchy of `ctrl`, as a
 * directory, or NULL. */
static char *own_dir(int ctrl)
{
	struct mnt m;
	if (find_mount(ctrl, &m))
		return NULL;
	FILE *f = fopen("/proc/self/cgroup", "r");
	char *line = NULL, *dir = NULL;
	size_t cap = 0;
	while (f && !dir && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = 0;
		const char *ctrls = c1 + 1, *path = c2 + 1;
		if (ctrl < 0 ? strcmp(line, "0") || *ctrls : !has_token(ctrls, ctrl_name[ctrl]))
			continue;
		size_t rl = strcmp(m.root, "/") ? strlen(m.root) : 0;
		if (strncmp(path, m.root, rl) || (path[rl] && path[rl] != '/'))
			continue; /* our group is outside what the mount shows */
		dir = xasprintf("%s%s", m.point, path + rl);
		size_t dl = strlen(dir);
		while (dl > 1 && dir[dl - 1] == '/')
			dir[--dl] = 0;
	}
	free(line);
	if (f)
		fclose(f);
	free(m.point);
	free(m.root);
	return dir;
}

/* Writes s into dir/file. Returns 0, or -1 with errno set. */
static int put(const char *dir, const char *file, const char *s)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Reads dir/file (at most n-1 bytes, NUL-terminated). Returns the length or -1. */
static ssize_t get(const char *dir, const char *file, char *buf, size_t n)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	buf[r > 0 ? r : 0] = 0;
	return r;
}

static void kill_listed(const char *dir);

/* Removes the groups leap-PID-* under dir whose process no longer runs (a leap-bench killed
 * with SIGKILL leaves its groups behind, and a v1 freezer may still hold what was in them):
 * thawed, emptied, removed. */
static void sweep(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid;
		if (sscanf(e->d_name, "leap-%d-", &pid) != 1 || pid <= 0 || pid == (int)getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		put(p, "freezer.state", "THAWED"); /* whichever exists */
		put(p, "cgroup.freeze", "0");
		kill_listed(p);
		double until = leap_now() + 0.2;
		while (rmdir(p) && errno == EBUSY && leap_now() < until) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		free(p);
	}
	closedir(d);
}

/* 1 when a group made under dir provides `file`, i.e. this process may make groups there and
 * they work. */
static int probe(const char *dir, const char *file)
{
	char *p = xasprintf("%s/leap-%d-probe", dir, (int)getpid());
	int ok = 0;
	if (mkdir(p, 0755) == 0 || errno == EEXIST) {
		char *f = xasprintf("%s/%s", p, file);
		ok = access(f, W_OK) == 0 || access(f, R_OK) == 0;
		free(f);
		rmdir(p);
	}
	free(p);
	return ok;
}

/* 1 when controller c can be served by v2 here (ctl: our cgroup.subtree_control). */
static int v2_serves(const struct leap_cgroups *cg, int c, const char *ctl)
{
	/* freezing and CPU time are core files; cpuset, memory and pids need the controller
	 * enabled for our children */
	int core = c == LEAP_CG_FREEZER || c == LEAP_CG_CPUACCT;
	const char *name = c == LEAP_CG_CPUSET ? "cpuset" : c == LEAP_CG_MEMORY ? "memory" : "pids";
	return cg->v2 && (core || has_word(ctl, name)) && probe(cg->v2, v2_probe[c]);
}

/* 1 when controller c can be served by its v1 hierarchy here (sets cg->v1[c]). */
static int v1_serves(struct leap_cgroups *cg, int c, struct leap_buf *note)
{
	if (!cg->v1[c] && !(cg->v1[c] = own_dir(c)))
		return 0;
	sweep(cg->v1[c]);
	if (probe(cg->v1[c], v1_probe[c]))
		return 1;
	leap_buf_addf(note, "cannot make %s groups under %s; ", ctrl_name[c], cg->v1[c]);
	free(cg->v1[c]);
	cg->v1[c] = NULL;
	return 0;
}

void leap_cgroups_detect(struct leap_cgroups *cg, enum leap_cg_mode prefer)
{
	memset(cg, 0, sizeof *cg);
	struct leap_buf note = {0};
	cg->v2 = own_dir(-1);
	if (cg->v2)
		sweep(cg->v2);
	if (cg->v2 && !probe(cg->v2, "cgroup.freeze")) {
		leap_buf_addf(&note, "cannot make groups under %s (%s); ", cg->v2, strerror(errno));
		free(cg->v2);
		cg->v2 = NULL;
	}
	char ctl[256] = "";
	if (cg->v2)
		get(cg->v2, "cgroup.subtree_control", ctl, sizeof ctl);
	for (int c = 0; c < LEAP_CG_NCTRL; c++) {
		if (prefer == LEAP_CG_V1 && v1_serves(cg, c, &note))
			cg->mode[c] = LEAP_CG_V1;
		else if (v2_serves(cg, c, ctl))
			cg->mode[c] = LEAP_CG_V2;
		else if (prefer != LEAP_CG_V1 && v1_serves(cg, c, &note))
			cg->mode[c] = LEAP_CG_V1;
	}
	if (!cg->mode[LEAP_CG_FREEZER])
		leap_buf_addf(&note, "no cgroup freezer this process may use");
	snprintf(cg->note, sizeof cg->note, "%s", note.s ? note.s : "");
	leap_buf_free(&note);
}

void leap_cgroups_free(struct leap_cgroups *cg)
{
	free(cg->v2);
	for (int c = 0; c < LEAP_CG_NCTRL; c++)
		free(cg->v1[c]);
	memset(cg, 0, sizeof *cg);
}

/* Opens dir/file, or -1. */
static int open_in(const char *dir, const char *file, int flags)
{
	char *p = xasprintf("%s/%s", dir, file);
	int fd = open(p, flags | O_CLOEXEC);
	free(p);
	return fd;
}

/* The directory of controller c's group in g (the v2 group when c is served by v2). */
static const char *dir_of(const struct leap_cgroup *g, enum leap_cg_ctrl c)
{
	return g->mode[c] == LEAP_CG_V2 ? g->dir[LEAP_CG_NCTRL] : g->mode[c] == LEAP_CG_V1 ? g->dir[c] : NULL;
}

/* Prepares a new v1 cpuset group: its memory nodes are its parent's, its CPUs `cpus`. */
static int v1_cpuset(const char *parent, const char *dir, const cpu_set_t *cpus)
{
	char mems[256], list[1024];
	if (get(parent, "cpuset.mems", mems, sizeof mems) <= 0)
		return -1;
	if (cpus)
		leap_cpus_format(cpus, list, sizeof list);
	else if (get(parent, "cpuset.cpus", list, sizeof list) <= 0)
		return -1;
	return put(dir, "cpuset.mems", mems) || put(dir, "cpuset.cpus", list) ? -1 : 0;
}

int leap_cgroup_make(struct leap_cgroups *cg, struct leap_cgroup *g, unsigned ctrl, const cpu_set_t *cpus,
		     char **err)
{
	memset(g, 0, sizeof *g);
	g->freeze_fd = g->events_fd = g->usage_fd = g->pressure_fd = -1;
	unsigned long n = ++cg->seq;
	for (int c = 0; c < LEAP_CG_NCTRL; c++) {
		if (!(ctrl & (1u << c)) || !cg->mode[c])
			continue;
		int slot = cg->mode[c] == LEAP_CG_V2 ? LEAP_CG_NCTRL : c;
		const char *parent = cg->mode[c] == LEAP_CG_V2 ? cg->v2 : cg->v1[c];
		g->mode[c] = cg->mode[c];
		if (g->dir[slot])
			continue;
		char *d = xasprintf("%s/leap-%d-%lu", parent, (int)getpid(), n);
		if (mkdir(d, 0755) && errno != EEXIST) {
			*err = xasprintf("cannot make the control group %s: %s", d, strerror(errno));
			free(d);
			goto fail;
		}
		g->dir[slot] = d;
	}
	const char *cs = dir_of(g, LEAP_CG_CPUSET);
	if (cs && g->mode[LEAP_CG_CPUSET] == LEAP_CG_V1 && v1_cpuset(cg->v1[LEAP_CG_CPUSET], cs, cpus)) {
		*err = xasprintf("cannot set the CPUs of %s: %s", cs, strerror(errno));
		goto fail;
	}
	if (cs && g->mode[LEAP_CG_CPUSET] == LEAP_CG_V2 && cpus) {
		char list[1024];
		leap_cpus_format(cpus, list, sizeof list);
		if (put(cs, "cpuset.cpus", list)) {
			*err = xasprintf("cannot set the CPUs of %s: %s", cs, strerror(errno));
			goto fail;
		}
	}
	const char *fz = dir_of(g, LEAP_CG_FREEZER), *ac = dir_of(g, LEAP_CG_CPUACCT);
	if (fz) {
		int v2 = g->mode[LEAP_CG_FREEZER] == LEAP_CG_V2;
		g->freeze_fd = open_in(fz, v2 ? "cgroup.freeze" : "freezer.state", O_RDWR);
		g->events_fd = v2 ? open_in(fz, "cgroup.events", O_RDONLY) : g->freeze_fd;
		if (g->freeze_fd < 0 || g->events_fd < 0) {
			*err = xasprintf("cannot open the freezer of %s: %s", fz, strerror(errno));
			goto fail;
		}
	}
	if (ac) {
		g->usage_fd = open_in(ac, g->mode[LEAP_CG_CPUACCT] == LEAP_CG_V2 ? "cpu.stat" : "cpuacct.usage", O_RDONLY);
		if (g->usage_fd < 0) {
			*err = xasprintf("cannot open the CPU accounting of %s: %s", ac, strerror(errno));
			goto fail;
		}
	}
	if (g->dir[LEAP_CG_NCTRL]) /* a core file of every v2 group where the kernel has PSI */
		g->pressure_fd = open_in(g->dir[LEAP_CG_NCTRL], "cpu.pressure", O_RDONLY);
	g->made = 1;
	return 0;
fail:
	g->made = 1; /* what was made is removed below */
	leap_cgroup_remove(g);
	return -1;
}

int leap_cgroup_enter(const struct leap_cgroup *g, pid_t pid, char **err)
{
	char s[32];
	snprintf(s, sizeof s, "%d\n", (int)pid);
	for (int i = 0; i <= LEAP_CG_NCTRL; i++)
		if (g->dir[i] && put(g->dir[i], "cgroup.procs", s)) {
			*err = xasprintf("cannot move the sandbox into %s: %s", g->dir[i], strerror(errno));
			return -1;
		}
	return 0;
}

/* Reads the whole small file behind fd from its start into buf[n]. */
static ssize_t reread(int fd, char *buf, size_t n)
{
	ssize_t r = pread(fd, buf, n - 1, 0);
	buf[r > 0 ? r : 0] = 0;
	return r;
}

/* 1 when the freezer says the groups are (frozen = 1) or are not (0) frozen. */
static int state_is(const struct leap_cgroup *g, int frozen)
{
	char b[256];
	if (reread(g->events_fd, b, sizeof b) <= 0)
		return 0;
	if (g->mode[LEAP_CG_FREEZER] == LEAP_CG_V1)
		return frozen ? !strncmp(b, "FROZEN", 6) : !strncmp(b, "THAWED", 6);
	const char *p = strstr(b, "frozen ");
	return p && p[7] == (frozen ? '1' : '0');
}

/* Waits (polling every 20 us: the kernel's notification of cgroup.events comes through a work
 * queue, milliseconds late) until state_is(g, frozen), at most `timeout` s. 0 or -2. */
static int wait_state(const struct leap_cgroup *g, int frozen, double timeout)
{
	double until = leap_now() + timeout;
	while (!state_is(g, frozen)) {
		if (leap_now() > until)
			return -2;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

int leap_cgroup_freeze(struct leap_cgroup *g, double timeout)
{
	if (!g->made || g->freeze_fd < 0)
		return -1;
	const char *w = g->mode[LEAP_CG_FREEZER] == LEAP_CG_V2 ? "1" : "FROZEN";
	if (pwrite(g->freeze_fd, w, strlen(w), 0) != (ssize_t)strlen(w))
		return -1;
	g->frozen = 1;
	return wait_state(g, 1, timeout);
}

int leap_cgroup_thaw(struct leap_cgroup *g)
{
	if (!g->made || g->freeze_fd < 0)
		return -1;
	const char *w = g->mode[LEAP_CG_FREEZER] == LEAP_CG_V2 ? "0" : "THAWED";
	if (pwrite(g->freeze_fd, w, strlen(w), 0) != (ssize_t)strlen(w))
		return -1;
	g->frozen = 0;
	return wait_state(g, 0, 1.0) ? -1 : 0;
}

int leap_cgroup_usage(const struct leap_cgroup *g, uint64_t *ns)
{
	if (!g->made || g->usage_fd < 0)
		return -1;
	char b[1024];
	if (reread(g->usage_fd, b, sizeof b) <= 0)
		return -1;
	if (g->mode[LEAP_CG_CPUACCT] == LEAP_CG_V1)
		return sscanf(b, "%lu", (unsigned long *)ns) == 1 ? 0 : -1;
	const char *p = strstr(b, "usage_usec ");
	unsigned long long us;
	if (!p || sscanf(p + 11, "%llu", &us) != 1)
		return -1;
	*ns = (uint64_t)us * 1000;
	return 0;
}

int leap_psi_full_us(const char *text, uint64_t *us)
{
	const char *p = strncmp(text, "full ", 5) ? strstr(text, "\nfull ") : text;
	if (!p || !(p = strstr(p + 1, " total=")))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p + 7, &end, 10);
	if (errno || end == p + 7 || (*end && *end != '\n' && *end != ' '))
		return -1;
	*us = (uint64_t)v;
	return 0;
}

int leap_cgroup_stalled(const struct leap_cgroup *g, uint64_t *ns)
{
	char b[512];
	uint64_t us;
	if (!g->made || g->pressure_fd < 0 || reread(g->pressure_fd, b, sizeof b) <= 0 || leap_psi_full_us(b, &us))
		return -1;
	*ns = us * 1000;
	return 0;
}

int leap_cgroup_write(const struct leap_cgroup *g, enum leap_cg_ctrl c, const char *file, const char *value,
		      char **err)
{
	const char *d = dir_of(g, c);
	if (!d) {
		*err = xasprintf("no %s control group", ctrl_name[c]);
		return -1;
	}
	if (put(d, file, value)) {
		*err = xasprintf("cannot write '%s' to %s/%s: %s", value, d, file, strerror(errno));
		return -1;
	}
	return 0;
}

ssize_t leap_cgroup_read(const struct leap_cgroup *g, enum leap_cg_ctrl c, const char *file, char *buf, size_t n)
{
	const char *d = dir_of(g, c);
	return d ? get(d, file, buf, n) : -1;
}

int leap_cgroup_memory_max(const struct leap_cgroup *g, uint64_t bytes, char **err)
{
	char v[32];
	snprintf(v, sizeof v, "%llu", (unsigned long long)bytes);
	int v1 = g->mode[LEAP_CG_MEMORY] == LEAP_CG_V1;
	if (leap_cgroup_write(g, LEAP_CG_MEMORY, v1 ? "memory.limit_in_bytes" : "memory.max", v, err))
		return -1;
	/* No swap beyond the limit (v1: memory and swap together at the same limit). A kernel
	 * without swap accounting has no such file: then there is nothing to bound. */
	char *ignored = NULL;
	leap_cgroup_write(g, LEAP_CG_MEMORY, v1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max", v1 ? v : "0",
			  &ignored);
	free(ignored);
	return 0;
}

/* The number after `key` and a space at the start of a line of `text`, or 0. */
static unsigned long long counter(const char *text, const char *key)
{
	size_t k = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ' ')
			return strtoull(l + k + 1, NULL, 10);
	return 0;
}

int leap_cgroup_memory_hit(const struct leap_cgroup *g)
{
	char buf[1024];
	if (g->mode[LEAP_CG_MEMORY] == LEAP_CG_V2)
		return leap_cgroup_read(g, LEAP_CG_MEMORY, "memory.events", buf, sizeof buf) > 0 &&
		       (counter(buf, "oom_kill") > 0 || counter(buf, "oom") > 0);
	if (g->mode[LEAP_CG_MEMORY] != LEAP_CG_V1)
		return 0;
	if (leap_cgroup_read(g, LEAP_CG_MEMORY, "memory.oom_control", buf, sizeof buf) > 0 &&
	    counter(buf, "oom_kill") > 0)
		return 1;
	return leap_cgroup_read(g, LEAP_CG_MEMORY, "memory.failcnt", buf, sizeof buf) > 0 && strtoull(buf, NULL, 10) > 0;
}

/* Sends SIGKILL to every process listed in dir/cgroup.procs. */
static void kill_listed(const char *dir)
{
	char *p = xasprintf("%s/cgroup.procs", dir);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return;
	int pid;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 0)
			kill(pid, SIGKILL);
	fclose(f);
}

void leap_cgroup_remove(struct leap_cgroup *g)
{
	if (!g->made)
		return;
	if (g->freeze_fd >= 0 && g->frozen)
		leap_cgroup_thaw(g); /* a v1-frozen process cannot die */
	for (int i = 0; i <= LEAP_CG_NCTRL; i++)
		if (g->dir[i])
			kill_listed(g->dir[i]);
	if (g->freeze_fd >= 0)
		close(g->freeze_fd);
	if (g->events_fd >= 0 && g->events_fd != g->freeze_fd)
		close(g->events_fd);
	if (g->usage_fd >= 0)
		close(g->usage_fd);
	if (g->pressure_fd >= 0)
		close(g->pressure_fd);
	g->freeze_fd = g->events_fd = g->usage_fd = g->pressure_fd = -1;
	for (int i = 0; i <= LEAP_CG_NCTRL; i++) {
		if (!g->dir[i])
			continue;
		/* Killed processes leave their group when they are reaped: wait up to 200 ms. */
		double until = leap_now() + 0.2;
		while (rmdir(g->dir[i]) && errno == EBUSY && leap_now() < until) {
			kill_listed(g->dir[i]);
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
		free(g->dir[i]);
		g->dir[i] = NULL;
	}
	memset(g->mode, 0, sizeof g->mode);
	g->frozen = 0;
	g->made = 0;
}

/* ---- the candidate's cores ---- */

int leap_cpus_allowed(cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof *set, set) || CPU_COUNT(set) == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		CPU_ZERO(set);
		for (long i = 0; i < (n > 0 ? n : 1) && i < CPU_SETSIZE; i++)
			CPU_SET((int)i, set);
	}
	return CPU_COUNT(set);
}

int leap_cpus_parse(const char *list, cpu_set_t *set, char **err)
{
	cpu_set_t ok;
	leap_cpus_allowed(&ok);
	if (!list || !*list) {
		*set = ok;
		return CPU_COUNT(set);
	}
	CPU_ZERO(set);
	const char *p = list;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || errno || a < 0)
			goto bad;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtol(q, &end, 10);
			if (end == q || errno || b < a)
				goto bad;
		}
		if (*end && *end != ',')
			goto bad;
		for (long i = a; i <= b; i++) {
			if (i >= CPU_SETSIZE || !CPU_ISSET((int)i, &ok)) {
				*err = xasprintf("CPU %ld is not one this process may run on", i);
				return -1;
			}
			CPU_SET((int)i, set);
		}
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			goto bad;
	}
	if (CPU_COUNT(set) == 0)
		goto bad;
	return CPU_COUNT(set);
bad:
	*err = xasprintf("'%s' is not a CPU list such as 0-3 or 0,2", list);
	return -1;
}

int leap_candidate_cores(const char *list)
{
	cpu_set_t set;
	char *err = NULL;
	int n = leap_cpus_parse(list, &set, &err);
	free(err);
	return n;
}

void leap_cpus_format(const cpu_set_t *set, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		int j = i;
		while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set))
			j++;
		int w = j > i ? snprintf(buf + len, n - len, "%s%d-%d", len ? "," : "", i, j)
			      : snprintf(buf + len, n - len, "%s%d", len ? "," : "", i);
		if (w < 0 || (size_t)w >= n - len)
			return;
		len += (size_t)w;
		i = j;
	}
}
