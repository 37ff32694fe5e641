/* progress.c - the progress line on stderr: done/total, rate, ETA and outcomes, one stage at a time. */
/*
 * What the line shows, and how the stages of a pipeline share one terminal, is progress.h's
 * comment. The sharing is a small file in /dev/shm, per user and terminal, updated under flock;
 * a stage that died is forgotten by its pid and the age of its rating, so that no stale stage
 * holds the line. Progress is only ever drawn on stderr and never changes what is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"
#include "banned.h"

/* The file the stages on one terminal share: who draws, and each stage's rating. */
#define SHARED_SLOTS 32
struct shared_slot {
	int32_t pid;
	float score;
	double stamp; /* CLOCK_MONOTONIC seconds of the last rating */
};
struct shared {
	int32_t owner, pad;
	double pad2;
	struct shared_slot s[SHARED_SLOTS];
};

/* Opens (creating) the shared file of the terminal on stderr; -1 when there is none. Only a
 * regular file of our own, never through a link, is used. */
static int shared_open(void)
{
	struct stat tty;
	if (!isatty(STDERR_FILENO) || fstat(STDERR_FILENO, &tty))
		return -1;
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	char path[256];
	snprintf(path, sizeof path, "%s/leap-progress-%lu-%lx", dir && *dir ? dir : "/tmp", (unsigned long)getuid(),
		 (unsigned long)tty.st_rdev);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != getuid())) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void leap_progress_init(struct leap_progress *p, int mode)
{
	memset(p, 0, sizeof(*p));
	p->on = mode < 0 ? isatty(STDERR_FILENO) : mode;
	p->t0 = p->last = leap_now();
	p->rated = -1;
	p->total = -1;
	p->in_fd = -1;
	p->slot = -1;
	p->shared_fd = p->on ? shared_open() : -1;
}

/* Non-blank lines of the regular file open on fd, read with pread (the file offset, which a
 * reader of standard input shares, stays where it is); -1 on a read error. */
static long count_records(int fd)
{
	char buf[1 << 16];
	long n = 0;
	int content = 0;
	off_t off = 0;
	ssize_t k;
	while ((k = pread(fd, buf, sizeof buf, off)) > 0) {
		for (ssize_t i = 0; i < k; i++) {
			char c = buf[i];
			if (c == '\n') {
				n += content;
				content = 0;
			} else if (c != ' ' && c != '\t' && c != '\r') {
				content = 1;
			}
		}
		off += k;
	}
	return k < 0 ? -1 : n + content;
}

void leap_progress_input(struct leap_progress *p, int nfiles, char *const *files)
{
	if (!p->on)
		return;
	long total = 0;
	for (int i = 0; i < (nfiles ? nfiles : 1) && total >= 0; i++) {
		int use_stdin = !nfiles || !strcmp(files[i], "-");
		int fd = use_stdin ? STDIN_FILENO : open(files[i], O_RDONLY | O_CLOEXEC);
		struct stat st;
		long n = -1;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			n = count_records(fd);
		else if (use_stdin)
			p->in_fd = STDIN_FILENO;
		total = n < 0 ? -1 : total + n;
		if (fd >= 0 && !use_stdin)
			close(fd);
	}
	p->total = total;
}

void leap_progress_total(struct leap_progress *p, long total)
{
	p->total = total;
}

static struct leap_progress_outcome *outcome(struct leap_progress *p, const char *name)
{
	for (int i = 0; i < p->nout; i++)
		if (!strncmp(p->out[i].name, name, sizeof p->out[i].name - 1))
			return &p->out[i];
	if (p->nout == LEAP_PROGRESS_OUTCOMES)
		return NULL;
	struct leap_progress_outcome *o = &p->out[p->nout++];
	snprintf(o->name, sizeof o->name, "%s", name);
	o->n = 0;
	return o;
}

void leap_progress_count(struct leap_progress *p, const char *name)
{
	struct leap_progress_outcome *o = outcome(p, name);
	if (o)
		o->n++;
}

void leap_progress_set(struct leap_progress *p, const char *name, long n)
{
	struct leap_progress_outcome *o = outcome(p, name);
	if (o)
		o->n = n;
}

/* 1 while this stage looks like the bottleneck: records wait in its input (or it reads files)
 * and its output pipe is less than half full. */
static int looks_busy(const struct leap_progress *p)
{
	int n;
	if (p->in_fd >= 0 && ioctl(p->in_fd, FIONREAD, &n) == 0 && n == 0)
		return 0; /* starved: the stage before it is slower */
	struct stat st;
	if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode) && ioctl(STDOUT_FILENO, FIONREAD, &n) == 0) {
		int cap = fcntl(STDOUT_FILENO, F_GETPIPE_SZ);
		if (cap > 0 && n >= cap / 2)
			return 0; /* blocked: the stage after it is slower */
	}
	return 1;
}

static int alive(const struct shared_slot *s, double now)
{
	return s->pid > 0 && now - s->stamp < 600 && (kill(s->pid, 0) == 0 || errno == EPERM);
}

/* Rates this stage, records the rating in the shared file and says whether this stage draws:
 * the best-rated live stage does; the one drawing keeps the line unless another is clearly
 * better (no flapping between stages rated alike). */
static int my_turn(struct leap_progress *p, double now)
{
	p->score = 0.5f * p->score + 0.5f * (float)looks_busy(p);
	if (p->shared_fd < 0 || flock(p->shared_fd, LOCK_EX))
		return 1;
	struct shared sh;
	memset(&sh, 0, sizeof sh);
	if (pread(p->shared_fd, &sh, sizeof sh, 0) < 0)
		memset(&sh, 0, sizeof sh);
	int32_t me = (int32_t)getpid();
	if (p->slot < 0 || sh.s[p->slot].pid != me) {
		p->slot = -1;
		for (int i = 0; i < SHARED_SLOTS && p->slot < 0; i++)
			if (sh.s[i].pid == me || !alive(&sh.s[i], now))
				p->slot = i;
	}
	if (p->slot >= 0)
		sh.s[p->slot] = (struct shared_slot){me, p->score, now};
	const struct shared_slot *best = NULL, *owner = NULL;
	for (int i = 0; i < SHARED_SLOTS; i++) {
		if (!alive(&sh.s[i], now))
			continue;
		if (!best || sh.s[i].score > best->score)
			best = &sh.s[i];
		if (sh.s[i].pid == sh.owner)
			owner = &sh.s[i];
	}
	if (best && (!owner || owner->score < best->score - 0.1f))
		sh.owner = best->pid;
	int mine = sh.owner == me || p->slot < 0;
	if (pwrite(p->shared_fd, &sh, sizeof sh, 0) != (ssize_t)sizeof sh)
		mine = 1;
	flock(p->shared_fd, LOCK_UN);
	return mine;
}

/* Leaves the shared file: frees this stage's slot and, if it drew, the line. */
static void shared_leave(struct leap_progress *p)
{
	if (p->shared_fd < 0)
		return;
	struct shared sh;
	if (p->slot >= 0 && !flock(p->shared_fd, LOCK_EX)) {
		if (pread(p->shared_fd, &sh, sizeof sh, 0) == (ssize_t)sizeof sh && sh.s[p->slot].pid == (int32_t)getpid()) {
			memset(&sh.s[p->slot], 0, sizeof sh.s[p->slot]);
			if (sh.owner == (int32_t)getpid())
				sh.owner = 0;
			if (pwrite(p->shared_fd, &sh, sizeof sh, 0) != (ssize_t)sizeof sh)
				leap_warn_errno("progress: cannot update the shared file");
		}
		flock(p->shared_fd, LOCK_UN);
	}
	close(p->shared_fd);
	p->shared_fd = -1;
}

/* "45s", "12m05s", "3h07m". */
static void duration(struct leap_buf *b, double s)
{
	long t = s < 0 ? 0 : (long)(s + 0.5);
	if (t < 60)
		leap_buf_addf(b, "%lds", t);
	else if (t < 3600)
		leap_buf_addf(b, "%ldm%02lds", t / 60, t % 60);
	else
		leap_buf_addf(b, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

static void draw(struct leap_progress *p, double now, int final)
{
	struct leap_buf b = {0};
	double dt = now - p->t0, rate = dt > 0 ? (double)p->done / dt : 0.0;
	leap_buf_addf(&b, "%s: %ld", leap_prog(), p->done);
	if (p->total >= 0)
		leap_buf_addf(&b, "/%ld records (%d%%)", p->total,
			      p->total ? (int)(100.0 * (double)p->done / (double)p->total) : 100);
	else
		leap_buf_adds(&b, " records");
	if (final) {
		leap_buf_adds(&b, " in ");
		duration(&b, dt);
	}
	leap_buf_addf(&b, ", %.1f/s", rate);
	if (!final && p->total > p->done && rate > 0) {
		leap_buf_adds(&b, ", ETA ");
		duration(&b, (double)(p->total - p->done) / rate);
	}
	for (int i = 0; i < p->nout; i++)
		leap_buf_addf(&b, "%s%ld %s", i ? ", " : "; ", p->out[i].n, p->out[i].name);
	leap_buf_addf(&b, "; %ld error%s", p->errors, p->errors == 1 ? "" : "s");
	struct winsize ws;
	if (!final && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && b.len >= ws.ws_col)
		b.s[ws.ws_col - 1] = '\0'; /* a wrapped line cannot be redrawn in place */
	fprintf(stderr, "\r%s\033[K%s", b.s, final ? "\n" : "");
	fflush(stderr);
	leap_buf_free(&b);
}

void leap_progress_update(struct leap_progress *p, long done, long errors)
{
	p->done = done;
	p->errors = errors;
	if (!p->on)
		return;
	double now = leap_now();
	/* rated ten times a second from the first record on; drawn five times a second, the
	 * first time half a second in, when every stage of the pipe has been rated a few times */
	if (now - p->rated >= 0.1) {
		p->rated = now;
		p->mine = my_turn(p, now);
	}
	if (now - p->last < 0.2 || now - p->t0 < 0.5 || !p->mine)
		return;
	p->last = now;
	draw(p, now, 0);
}

void leap_progress_end(struct leap_progress *p)
{
	if (!p->on)
		return;
	draw(p, leap_now(), 1);
	shared_leave(p);
	p->on = 0; /* once */
}
