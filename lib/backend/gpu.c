/* gpu.c - facts about this machine's NVIDIA GPUs: driver against runtime, arch, UUIDs, persistence. */
/*
 * Why each fact is asked where it is, is gpu.h's comment. This file keeps them asked once: the
 * devices are queried at the first cuda record (leap_gpu_first_use), not at start, so that a
 * cpu-only stream never runs nvidia-smi, and nvidia-smi runs in a forked child under an alarm,
 * so that a hung one dies of SIGALRM and the program goes on without its facts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "core/util.h"
#include "core/banned.h"

#ifndef LEAP_CUDART_VERSION
#define LEAP_CUDART_VERSION 0
#endif

/* Runs argv (looked up on PATH) with stdout captured and stderr discarded; the child is killed
 * after `secs` seconds. The output (NUL-terminated, new string) when it exits 0, else NULL. */
static char *capture(char *const argv[], unsigned secs)
{
	int fd[2];
	if (pipe2(fd, O_CLOEXEC))
		return NULL;
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return NULL;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (dup2(fd[1], 1) < 0 || null < 0 || dup2(null, 2) < 0)
			_exit(127);
		alarm(secs); /* survives exec: a hung nvidia-smi dies of SIGALRM */
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	struct leap_buf b = {0};
	char chunk[4096];
	for (;;) {
		ssize_t k = read(fd[0], chunk, sizeof chunk);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (b.len < (1 << 20)) /* bounded: a runaway tool cannot exhaust memory */
			leap_buf_add(&b, chunk, (size_t)k);
	}
	close(fd[0]);
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			leap_buf_free(&b);
			return NULL;
		}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws)) {
		leap_buf_free(&b);
		return NULL;
	}
	return leap_buf_detach(&b);
}

/* The next comma-separated field of *p with blanks trimmed, in place; "" at the end. */
static char *field(char **p)
{
	char *s = *p, *e = strchr(s, ',');
	if (e)
		*e = 0, *p = e + 1;
	else
		*p = s + strlen(s);
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

/* Parses one line "index, name, compute_cap, uuid, persistence_mode, memory.total". */
static int parse_line(char *line, struct leap_gpu_dev *d)
{
	memset(d, 0, sizeof *d);
	char *p = line, *idx = field(&p), *name = field(&p), *cc = field(&p), *uuid = field(&p), *pm = field(&p),
	     *mem = field(&p);
	if (leap_parse_int(idx, 0, 1 << 16, &d->index) || !*name)
		return -1;
	snprintf(d->name, sizeof d->name, "%s", name);
	if (sscanf(cc, "%d.%d", &d->cc_major, &d->cc_minor) != 2 || d->cc_major <= 0 || d->cc_major > 99 ||
	    d->cc_minor < 0 || d->cc_minor > 9)
		d->cc_major = d->cc_minor = 0;
	if (!strncmp(uuid, "GPU-", 4) || !strncmp(uuid, "MIG-", 4))
		snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
	d->persistence = !strcmp(pm, "Enabled") ? 1 : !strcmp(pm, "Disabled") ? 0 : -1;
	int64_t m;
	d->memory_mib = leap_parse_i64(mem, 1, INT64_MAX / 2, &m) ? 0 : (long long)m;
	return 0;
}

void leap_gpu_query(struct leap_gpu *g)
{
	memset(g, 0, sizeof *g);
	char *const argv[] = {(char *)"nvidia-smi",
			      (char *)"--query-gpu=index,name,compute_cap,uuid,persistence_mode,memory.total",
			      (char *)"--format=csv,noheader,nounits", NULL};
	char *out = capture(argv, 20);
	if (!out)
		return;
	size_t cap = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct leap_gpu_dev d;
		if (parse_line(line, &d))
			continue;
		xgrow((void **)&g->dev, &cap, (size_t)g->n + 1, sizeof *g->dev);
		g->dev[g->n++] = d;
	}
	free(out);
}

void leap_gpu_free(struct leap_gpu *g)
{
	free(g->dev);
	memset(g, 0, sizeof *g);
}

/* The idx-th entry of CUDA_VISIBLE_DEVICES (new string), or NULL when it is unset or shorter. */
static char *visible_entry(int idx)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	if (!v || !*v)
		return NULL;
	for (int i = 0;; i++) {
		size_t n = strcspn(v, ",");
		if (i == idx)
			return n ? xstrndup(v, n) : NULL;
		if (!v[n])
			return NULL;
		v += n + 1;
	}
}

/* 1 when nvidia-smi's order is CUDA's: CUDA_DEVICE_ORDER=PCI_BUS_ID, or every device alike
 * (CUDA's default puts the fastest first and breaks ties by PCI bus, nvidia-smi's order). */
static int same_order(const struct leap_gpu *g)
{
	const char *o = getenv("CUDA_DEVICE_ORDER");
	if (o && !strcmp(o, "PCI_BUS_ID"))
		return 1;
	for (int i = 1; i < g->n; i++)
		if (strcmp(g->dev[i].name, g->dev[0].name))
			return 0;
	return 1;
}

const struct leap_gpu_dev *leap_gpu_device(const struct leap_gpu *g, int idx)
{
	char *e = visible_entry(idx);
	const struct leap_gpu_dev *d = NULL;
	if (e) {
		int k;
		for (int i = 0; i < g->n && !d; i++)
			if ((!leap_parse_int(e, 0, 1 << 16, &k) && g->dev[i].index == k) ||
			    (g->dev[i].uuid[0] && !strncmp(g->dev[i].uuid, e, strlen(e))))
				d = &g->dev[i];
		free(e);
		return d;
	}
	if (getenv("CUDA_VISIBLE_DEVICES")) /* set, and idx is past its end */
		return NULL;
	return idx >= 0 && idx < g->n && same_order(g) ? &g->dev[idx] : NULL;
}

void leap_gpu_arch(int major, int minor, char *buf, size_t n)
{
	/* The arch-specific targets: Hopper's wgmma/TMA/setmaxnreg and Blackwell's tcgen05 do not
	 * compile for plain sm_90 / sm_100. */
	const char *a = (major == 9 && minor == 0) || (major == 10 && minor == 0) ? "a" : "";
	snprintf(buf, n, "sm_%d%d%s", major, minor, a);
}

char *leap_gpu_arch_flag(const char *arch)
{
	size_t n = strlen(arch);
	if (n > 3 && !strncmp(arch, "sm_", 3) && (arch[n - 1] == 'a' || arch[n - 1] == 'f'))
		return xasprintf("-gencode=arch=compute_%s,code=%s", arch + 3, arch);
	return xasprintf("-arch=%s", arch);
}

int leap_gpu_runtime_version(void)
{
	return LEAP_CUDART_VERSION;
}

int leap_gpu_min_driver(int runtime_version)
{
	/* NVIDIA's table of minimum drivers for each major version (minor version compatibility) */
	switch (runtime_version / 1000) {
	case 11: return 450;
	case 12: return 525;
	case 13: return 580;
	default: return 0;
	}
}

int leap_gpu_driver_check(char *msg, size_t n)
{
	int rt = leap_gpu_runtime_version();
	if (!rt)
		return 0;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	int (*get)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	int drv = 0;
	int ok = !get || get(&drv) != 0 || drv <= 0 || drv / 1000 >= rt / 1000;
	dlclose(h);
	if (ok)
		return 0;
	int need = leap_gpu_min_driver(rt);
	char fix[64] = "";
	if (need)
		snprintf(fix, sizeof fix, " >= %d", need);
	snprintf(msg, n,
		 "the NVIDIA driver supports CUDA %d.%d (cuDriverGetVersion %d), older than the CUDA %d.%d runtime "
		 "leap links (CUDART_VERSION %d): update the driver to%s (CUDA %d), or rebuild leap with a CUDA "
		 "toolkit %d.x that matches the driver",
		 drv / 1000, drv % 1000 / 10, drv, rt / 1000, rt % 1000 / 10, rt, fix[0] ? fix : " a newer one", rt / 1000,
		 drv / 1000);
	return 1;
}

void leap_gpu_require_driver(int *checked)
{
	if (*checked)
		return;
	*checked = 1;
	char msg[512];
	if (leap_gpu_driver_check(msg, sizeof msg))
		leap_die("%s", msg);
}

const struct leap_gpu *leap_gpu_first_use(struct leap_gpu_once *o)
{
	if (o->done)
		return &o->g;
	int checked = 0;
	leap_gpu_require_driver(&checked);
	leap_gpu_query(&o->g);
	o->done = 1;
	char *note = leap_gpu_persistence_note(&o->g);
	if (note)
		leap_warn("%s", note);
	free(note);
	return &o->g;
}

char *leap_gpu_visible(const struct leap_gpu *g, const char *device)
{
	int idx;
	if (!device || leap_parse_int(device, 0, 1 << 16, &idx))
		return NULL;
	char *e = visible_entry(idx);
	if (e)
		return e;
	if (getenv("CUDA_VISIBLE_DEVICES") && *getenv("CUDA_VISIBLE_DEVICES"))
		return NULL; /* past the end of the caller's list: the runner says so */
	const struct leap_gpu_dev *d = g ? leap_gpu_device(g, idx) : NULL;
	return d && d->uuid[0] ? xstrdup(d->uuid) : xstrdup(device);
}

char *leap_gpu_persistence_note(const struct leap_gpu *g)
{
	struct leap_buf b = {0};
	for (int i = 0; i < g->n; i++)
		if (g->dev[i].persistence == 0)
			leap_buf_addf(&b, "%s%d", b.len ? "," : "", g->dev[i].index);
	if (!b.len)
		return NULL;
	char *ids = leap_buf_detach(&b);
	char *note = xasprintf("persistence mode is off on GPU %s: every runner pays a full GPU initialisation "
			       "(seconds); enable it with `sudo nvidia-smi -pm 1`",
			       ids);
	free(ids);
	return note;
}

void leap_gpu_uvm_node(void)
{
	struct stat st;
	if (stat("/dev/nvidiactl", &st) || !S_ISCHR(st.st_mode) || stat("/dev/nvidia-uvm", &st) == 0)
		return;
	char *const argv[] = {(char *)"nvidia-modprobe", (char *)"-u", (char *)"-c=0", NULL};
	free(capture(argv, 20));
}
