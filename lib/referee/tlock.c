/* tlock.c - the locks under CACHE/locks/: a device's lock, and the timing lock (while leap-bench
 * times on the cpu, leap-compile and leap-verify of the same cache hold back; the design is in
 * tlock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/files.h"
#include "core/sig.h"
#include "tlock.h"
#include "core/util.h"
#include "core/banned.h"

/* Opens CACHE/locks/NAME (made when missing). Returns the descriptor or -1. */
static int open_lock(const char *cache, const char *name)
{
	char *dir = xasprintf("%s/locks", cache), *path = xasprintf("%s/%s", dir, name);
	int fd = leap_mkdirs(dir) == 0 ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
	free(dir);
	free(path);
	return fd;
}

/* flock, again after a signal that does not end the program. Returns 0 or -1. */
static int lock_wait(int fd, int how)
{
	while (flock(fd, how))
		if (errno != EINTR || leap_signal_caught())
			return -1;
	return 0;
}

/* ---- a device's lock ---- */

char *leap_device_lock_path(const char *cache, const uint8_t uuid[16])
{
	int any = 0;
	for (int i = 0; i < 16; i++)
		any |= uuid[i];
	if (!any)
		return xasprintf("%s/locks/cpu.lock", cache);
	char hex[33];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
	return xasprintf("%s/locks/gpu-%s.lock", cache, hex);
}

int leap_device_lock(const char *path, int how, const char *what, int *said, char **err)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	int fd = -1;
	if (leap_mkdirs(dir) || (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		*err = xasprintf("cannot open the device lock %s: %s", path, strerror(errno));
	} else if (flock(fd, how | LOCK_NB)) {
		if (said && !(*said)++)
			leap_warn("waiting for the lock on device %s (another leap-bench is timing on it)", what);
		if (lock_wait(fd, how)) {
			*err = xasprintf("cannot lock %s: %s", path, strerror(errno));
			close(fd);
			fd = -1;
		}
	}
	free(dir);
	return fd;
}

/* ---- the timing lock ---- */

int leap_timing_lock(const char *cache, int *said, int fd[2], char **err)
{
	static const uint8_t cpu[16]; /* no UUID: the cpu */
	char *path = leap_device_lock_path(cache, cpu);
	fd[0] = leap_device_lock(path, LOCK_EX, "cpu", said, err);
	fd[1] = -1;
	free(path);
	if (fd[0] < 0)
		return -1;
	int gate = open_lock(cache, "cpu-gate.lock");
	fd[1] = open_lock(cache, "cpu-jobs.lock");
	if (gate < 0 || fd[1] < 0 || lock_wait(gate, LOCK_EX) || lock_wait(fd[1], LOCK_EX)) {
		*err = xasprintf("cannot take the timing lock under %s/locks: %s", cache, strerror(errno));
		if (gate >= 0)
			close(gate);
		leap_timing_unlock(fd);
		return -1;
	}
	close(gate); /* the jobs lock is ours: jobs wait on it now, not on the gate */
	return 0;
}

void leap_timing_unlock(int fd[2])
{
	for (int i = 0; i < 2; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		fd[i] = -1;
	}
}

int leap_timing_share(const char *cache, int on_cpu)
{
	if (!cache || !on_cpu)
		return -1;
	int gate = open_lock(cache, "cpu-gate.lock"), jobs = open_lock(cache, "cpu-jobs.lock");
	int ok = gate >= 0 && jobs >= 0 && lock_wait(gate, LOCK_SH) == 0 && lock_wait(jobs, LOCK_SH) == 0;
	if (gate >= 0)
		close(gate);
	if (!ok && jobs >= 0) {
		close(jobs);
		jobs = -1;
	}
	return jobs;
}

void leap_timing_unshare(int fd)
{
	if (fd >= 0)
		close(fd);
}
