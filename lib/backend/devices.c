/* devices.c - device lists (--devices 0-7, 0,2,5) for the worker pools; is a CUDA device usable? */
/*
 * --devices gives each worker pool its GPUs, so a list is checked strictly (every number with
 * its end pointer, ranges ascending, no device twice) rather than read loosely into a wrong
 * pool. Whether CUDA is usable is asked of the driver in a forked child: the driver is never
 * loaded into this process, which goes on to fork workers and sandboxes, and a driver that hangs
 * dies of the child's alarm instead of holding the program.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices.h"
#include "core/util.h"
#include "core/banned.h"

/* Reads one device index at *p (digits only: no sign, no blanks), advancing *p past it.
 * Returns the index, or -1 when there is none or it is above LEAP_DEVICE_MAX. */
static long number(const char **p)
{
	if (!isdigit((unsigned char)**p))
		return -1;
	char *end;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (errno || end == *p || v < 0 || v > LEAP_DEVICE_MAX)
		return -1;
	*p = end;
	return v;
}

int leap_devices_parse(const char *s, struct leap_devices *d, char **err)
{
	memset(d, 0, sizeof *d);
	unsigned char seen[LEAP_DEVICE_MAX + 1] = {0};
	size_t cap = 0;
	const char *p = s;
	if (!*p) {
		*err = xstrdup("the device list is empty");
		return -1;
	}
	for (;;) {
		long a = number(&p), b = a;
		if (a >= 0 && *p == '-') {
			p++;
			b = number(&p);
		}
		if (a < 0 || b < 0 || (*p && *p != ',')) {
			*err = xasprintf("'%s' is not a list of device indices in [0, %d] such as 0-7 or 0,2,5", s,
					 LEAP_DEVICE_MAX);
			goto fail;
		}
		if (b < a) {
			*err = xasprintf("'%s': the range %ld-%ld is backwards", s, a, b);
			goto fail;
		}
		for (long i = a; i <= b; i++) {
			if (seen[i]) {
				*err = xasprintf("'%s' names device %ld twice", s, i);
				goto fail;
			}
			seen[i] = 1;
			xgrow((void **)&d->idx, &cap, (size_t)d->n + 1, sizeof *d->idx);
			d->idx[d->n++] = (int)i;
		}
		if (!*p)
			break;
		p++; /* the comma: a list may not end with one */
	}
	d->name = xcalloc((size_t)d->n, sizeof *d->name);
	for (int i = 0; i < d->n; i++)
		d->name[i] = xasprintf("%d", d->idx[i]);
	return 0;
fail:
	free(d->idx);
	memset(d, 0, sizeof *d);
	return -1;
}

void leap_devices_free(struct leap_devices *d)
{
	for (int i = 0; i < d->n && d->name; i++)
		free(d->name[i]);
	free(d->name);
	free(d->idx);
	memset(d, 0, sizeof *d);
}

/* The probe child: exit 0 with a device, 2 without the driver library, 3 when cuInit fails,
 * 4 with zero devices. */
static void probe_child(void)
{
	alarm(20);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		_exit(2);
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
	int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
	int k = 0;
	if (!init || !count || init(0) != 0)
		_exit(3);
	_exit(count(&k) == 0 && k > 0 ? 0 : 4);
}

int leap_cuda_usable(char *why, size_t n)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (vis && (!*vis || !strcmp(vis, "-1"))) {
		snprintf(why, n, "CUDA_VISIBLE_DEVICES='%s' hides every device", vis);
		return 0;
	}
	glob_t g;
	int found = glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	if (!found) {
		snprintf(why, n, "no /dev/nvidia* device");
		return 0;
	}
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, n, "cannot start the probe: %s", strerror(errno));
		return 0;
	}
	if (pid == 0)
		probe_child();
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, n, "the probe was lost: %s", strerror(errno));
			return 0;
		}
	int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	static const char *const reason[] = {"", "", "the CUDA driver (libcuda.so.1) is not installed",
					     "the CUDA driver does not start (cuInit failed)",
					     "the CUDA driver sees no device"};
	if (code == 0)
		return 1;
	snprintf(why, n, "%s", code >= 2 && code <= 4 ? reason[code] : "the driver probe died (a hang or a crash)");
	return 0;
}
