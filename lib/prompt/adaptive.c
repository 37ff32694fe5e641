/* adaptive.c - DCP state across steps: self-tuning easy threshold and per-task easy/hopeless streaks. */
/*
 * leap-prune's DCP thresholds are fixed within a run, but what a step finds easy changes as the
 * policy learns, so what outlives a run is one small JSON file: easy_below moves one step
 * towards the target share of turn-1 groups ended, and each task keeps its streaks of runs in
 * which every turn-1 group was easy or hopeless, from which leap-prompt --skip-from leaves the
 * task out (revisited by a draw seeded per task, so that a skipped task can come back). Runs may
 * commit side by side: the state is re-read and updated under an flock of PATH.lock and
 * replaced by rename, so no update is lost and no reader sees half a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "adaptive.h"
#include "core/fdio.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/jsonl.h"
#include "core/rng.h"
#include "core/util.h"
#include "core/banned.h"

/* A state with no history. */
static void fresh(struct leap_adaptive *a, double target, double step, double easy_below)
{
	a->target = target;
	a->step = step;
	a->easy_below = easy_below;
	a->runs = 0;
	a->tasks = json_object();
	if (!a->tasks)
		leap_die("out of memory");
}

/* Reads the state from an open descriptor (at its start). Empty content is a fresh state. */
static int load_fd(int fd, const char *path, double target, double step, double easy_below,
		   struct leap_adaptive *a, char **err)
{
	struct leap_buf b = {0};
	if (leap_read_fd(fd, &b)) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		leap_buf_free(&b);
		return -1;
	}
	if (!b.len) {
		fresh(a, target, step, easy_below);
		return 0;
	}
	json_error_t je;
	json_t *j = json_loadb(b.s, b.len, 0, &je);
	leap_buf_free(&b);
	const json_t *tasks = json_object_get(j, "tasks");
	double t = leap_get_num(j, "target", NAN), s = leap_get_num(j, "step", NAN);
	double e = leap_get_num(j, "easy_below", NAN);
	if (!json_is_object(j) || !json_is_object(tasks) || !(t >= 0 && t <= 1) || !(s > 0 && s <= 1) ||
	    !(e >= 0 && e <= 1)) {
		*err = j ? xasprintf("%s: not a leap-prune state (target, step, easy_below in [0, 1]; tasks)", path)
			 : xasprintf("%s:%d: %s", path, je.line, je.text);
		json_decref(j);
		return -1;
	}
	a->target = t;
	a->step = s;
	a->easy_below = e;
	a->runs = (long)leap_get_int(j, "runs", 0);
	a->tasks = json_incref((json_t *)tasks);
	json_decref(j);
	return 0;
}

int leap_adaptive_load(const char *path, double target, double step, double easy_below, struct leap_adaptive *a,
		       char **err)
{
	memset(a, 0, sizeof(*a));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			fresh(a, target, step, easy_below);
			return 0;
		}
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	int r = load_fd(fd, path, target, step, easy_below, a, err);
	close(fd);
	return r;
}

void leap_adaptive_apply(struct leap_adaptive *a, long decided, long pruned, const json_t *verdicts)
{
	if (decided > 0) {
		double share = (double)pruned / (double)decided;
		if (share < a->target)
			a->easy_below += a->step;
		else if (share > a->target)
			a->easy_below -= a->step;
		/* keep it on the step grid, away from rounding drift */
		a->easy_below = round(a->easy_below / a->step) * a->step;
		if (a->easy_below < 0)
			a->easy_below = 0;
		if (a->easy_below > 1)
			a->easy_below = 1;
	}
	const char *task;
	json_t *v;
	json_object_foreach((json_t *)verdicts, task, v) {
		const char *verdict = json_string_value(v);
		json_t *t = json_object_get(a->tasks, task);
		if (!json_is_object(t)) {
			t = json_object();
			if (!t || json_object_set_new(a->tasks, task, t))
				leap_die("out of memory");
		}
		json_int_t easy = leap_get_int(t, "easy", 0), hopeless = leap_get_int(t, "hopeless", 0);
		easy = verdict && !strcmp(verdict, "easy") ? easy + 1 : 0;
		hopeless = verdict && !strcmp(verdict, "hopeless") ? hopeless + 1 : 0;
		json_object_set_new(t, "easy", json_integer(easy));
		json_object_set_new(t, "hopeless", json_integer(hopeless));
		json_object_set_new(t, "runs", json_integer(leap_get_int(t, "runs", 0) + 1));
	}
	a->runs++;
}

int leap_adaptive_commit(const char *path, double target, double step, double easy_below, long decided,
			 long pruned, const json_t *verdicts, struct leap_adaptive *a, char **err)
{
	memset(a, 0, sizeof(*a));
	char *lock = xasprintf("%s.lock", path);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0) {
		*err = xasprintf("%s: %s", lock, strerror(errno));
		free(lock);
		return -1;
	}
	while (flock(lfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			*err = xasprintf("%s: lock: %s", lock, strerror(errno));
			close(lfd);
			free(lock);
			return -1;
		}
	}
	int rc = -1;
	char *tmp = NULL;
	if (leap_adaptive_load(path, target, step, easy_below, a, err))
		goto out;
	leap_adaptive_apply(a, decided, pruned, verdicts);
	json_t *j = json_pack("{s:i,s:f,s:f,s:f,s:I,s:O}", "version", 1, "target", a->target, "step", a->step,
			      "easy_below", a->easy_below, "runs", (json_int_t)a->runs, "tasks", a->tasks);
	struct leap_buf b = {0};
	if (!j || leap_json_append(&b, j))
		leap_die("cannot serialise the state");
	json_decref(j);
	leap_buf_add(&b, "\n", 1);
	tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || leap_write_full(fd, b.s, b.len) || fsync(fd) || close(fd)) {
		*err = xasprintf("%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		leap_buf_free(&b);
		goto out;
	}
	leap_buf_free(&b);
	if (rename(tmp, path)) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	close(lfd); /* releases the lock */
	free(lock);
	return rc;
}

void leap_adaptive_free(struct leap_adaptive *a)
{
	json_decref(a->tasks);
	a->tasks = NULL;
}

/* A uniform number in [0, 1) for (seed, task): splitmix64's finaliser over the task's FNV-1a
 * hash plus the seed's multiple of the stream's increment. */
static double draw(unsigned long seed, const char *task)
{
	uint64_t h = leap_fnv1a(LEAP_FNV1A_BASIS, task, strlen(task));
	return leap_rng_unit_of(leap_mix64(h + (uint64_t)seed * LEAP_RNG_GAMMA));
}

int leap_adaptive_skip(const struct leap_adaptive *a, const char *task, long after, double revisit,
		       unsigned long seed)
{
	const json_t *t = json_object_get(a->tasks, task);
	if (!t)
		return 0;
	json_int_t easy = leap_get_int(t, "easy", 0), hopeless = leap_get_int(t, "hopeless", 0);
	if (easy < after && hopeless < after)
		return 0;
	return draw(seed, task) >= revisit;
}
