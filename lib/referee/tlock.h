/* tlock.h - the locks under CACHE/locks/: a device's lock (one leap-bench times on a device at a
 * time), and the timing lock (while leap-bench times on the cpu, leap-compile and leap-verify
 * of the same cache hold back). */
#ifndef LEAP_TLOCK_H
#define LEAP_TLOCK_H

#include <stdint.h>

/*
 * A pipeline `leap-compile | leap-verify | leap-bench` on cpu runs compilers and verification
 * runners on the cores leap-bench times on, and they come and go in bursts: a timed block
 * beside them measures them. So leap-bench takes the timing lock exclusively while it times a
 * record, and leap-compile and leap-verify take it shared around each job (a compiler run, a
 * candidate's verification): a job waits while a record is timed, and a record waits for the
 * jobs already running to end. A gate lets leap-bench in between jobs that would otherwise
 * always overlap (flock prefers no one): a job passes the gate before it takes its share, and
 * leap-bench holds the gate while it waits. Locks live in CACHE/locks/ beside the device locks;
 * processes with different caches do not see each other (a shared cache is the way to make a
 * pipeline's stages one).
 */

/* The lock file of a device: CACHE/locks/cpu.lock, or CACHE/locks/gpu-UUID.lock (by UUID, not
 * index: CUDA_VISIBLE_DEVICES and device orders renumber GPUs, a UUID names one). New string. */
char *leap_device_lock_path(const char *cache, const uint8_t uuid[16]);

/* Takes the lock at `path` (LOCK_SH or LOCK_EX), waiting. With `said` not NULL, says that it
 * waits (naming `what`) the first time for *said (once per process, not once per record).
 * Returns the descriptor, or -1 with a new message in *err. */
int leap_device_lock(const char *path, int how, const char *what, int *said, char **err);

/* leap-bench: takes the cpu's device lock (CACHE/locks/cpu.lock: one leap-bench times on the
 * cpu at a time; with `said`, says once that it waits for another) into fd[0], then the timing
 * lock exclusively into fd[1], waiting for the jobs that hold it. Returns 0, or -1 with a new
 * message in *err (nothing held). leap_timing_unlock releases both (fds -1 are skipped). */
int leap_timing_lock(const char *cache, int *said, int fd[2], char **err);
void leap_timing_unlock(int fd[2]);

/* leap-compile, leap-verify: the one place a job holds back for leap-bench. A job that runs
 * on the cpu (`on_cpu`: every compiler run, whatever it builds, and a cpu candidate's
 * verification; lib/compile/cqueue.c and lib/referee/recjob.c) takes the timing lock of cache directory
 * `cache` shared, waiting while a record is timed; a cuda candidate's verification (on_cpu 0)
 * runs on its GPU and takes nothing. Returns a descriptor to give to leap_timing_unshare, or
 * -1 when there is no lock to take (the job goes on without). */
int leap_timing_share(const char *cache, int on_cpu);
void leap_timing_unshare(int fd);

#endif
