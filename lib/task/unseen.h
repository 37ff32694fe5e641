/* unseen.h - what a candidate must not see: one list for the compilers and the runners. */
#ifndef LEAP_UNSEEN_H
#define LEAP_UNSEEN_H

#include <stddef.h>

/* Who the list is for. The compilers write their outputs into the cache, so they lose only its
 * reference builds (CACHE/artifacts); a runner loses the whole cache. */
enum leap_unseen_for { LEAP_UNSEEN_COMPILER, LEAP_UNSEEN_RUNNER };

/* The directories a candidate must not read (SECURITY.md), for `who`: the suite in use
 * (`tasks_dir`), every other place a suite is looked for ($LEAP_TASKS, the bundled suite beside
 * the program, $PREFIX/share/leap/tasks), and the cache `cache_dir` and the default cache (for
 * the compilers only their `artifacts`, made now so that one made later is hidden too). This is
 * the one place that decides it: leap-compile, leap-verify, leap-bench and the hand modes call
 * it; the run sandbox also builds its minimal root without them. Returns a new vector of *n
 * new strings (free with leap_unseen_free). */
char **leap_unseen(const char *cache_dir, const char *tasks_dir, enum leap_unseen_for who, size_t *n);

/* Frees what leap_unseen returned. */
void leap_unseen_free(char **v, size_t n);

/* One thing the run sandbox's minimal root shows (lib/sandbox/sandbox.c makes it). */
struct leap_root_entry {
	char *path;  /* where it appears (absolute) */
	char *link;  /* LEAP_ROOT_LINK: the link's target as readlink gives it; LEAP_ROOT_DIR:
		      * the directory bound there when not `path` itself, else NULL */
	int kind;
};
enum { LEAP_ROOT_DIR, LEAP_ROOT_FILE, LEAP_ROOT_DEV, LEAP_ROOT_LINK, LEAP_ROOT_DIR_FLAT };

/* What a runner sees: the minimal root the run sandbox pivots into. */
struct leap_root {
	struct leap_root_entry *e;
	size_t n;
};

/* The other half of the policy: the only things a runner's file system holds besides its own
 * empty /tmp, /var/tmp, /dev/shm, its temp dir and a /proc of its PID namespace. Read-only
 * binds of the directories the dynamic loader searches (the one holding the C library, the
 * loader's, /etc/ld.so.conf.d's, LD_LIBRARY_PATH's: they hold libc, libm, libgomp, libstdc++
 * and the CUDA driver's libraries, which the driver opens by name; and the directories those
 * driver libraries link into, libcuda.so.1 -> elsewhere/libcuda.so.580), the symbolic
 * links /lib, /lib64... that lead there, /etc/ld.so.cache, the device nodes null, zero, full,
 * random, urandom and nvidia* (the directory nvidia-caps too), and on a machine with an NVIDIA
 * device /sys (its mounts left out where the kernel allows: the driver reads the PCI topology). Directories under a directory of `unseen`
 * (leap_unseen's list) are left out. Fills *r (free with leap_root_free). */
void leap_unseen_root(struct leap_root *r, char *const *unseen, size_t nunseen);
void leap_root_free(struct leap_root *r);

/* What a runner must not see, both halves: leap_unseen's list for a runner, and the minimal
 * root without it (leap_verify_setup fills one for leap-verify and leap-bench). */
struct leap_unseen_set {
	char **paths;
	size_t n;
	struct leap_root root;
};

/* Frees what a leap_unseen_set holds, and empties it. */
void leap_unseen_set_free(struct leap_unseen_set *u);

#endif
