/* progress.h - the progress line on stderr: done/total, rate, ETA and outcomes, one stage at a time. */
#ifndef LEAP_PROGRESS_H
#define LEAP_PROGRESS_H

/* One progress line on stderr, redrawn in place at most five times a second (from half a
 * second in):
 *   leap-verify: 95/472 records (20%), 8.3/s, ETA 45s; 60 pass, 30 mismatch, 5 timeout; 0 errors
 * The total, percentage and ETA appear when the input is regular files (their records are
 * counted when progress is on); the outcomes are what the program counts (leap_progress_count).
 *
 * The stages of a pipeline share one terminal line. Each stage rates itself at every redraw:
 * it is the bottleneck while records wait in its input pipe (or it reads files) and its output
 * pipe is not filling up; a stage starved of input or blocked on its output is not. The stages
 * on one terminal keep those ratings in a small shared file (/dev/shm, per user and terminal),
 * and only the best-rated live stage draws, so the line that stays readable is the bottleneck's
 * (with a slow sampler in front, the stages are all starved and one of them keeps the line).
 * Every stage still writes its own final line when it ends. */
struct leap_progress_outcome {
	char name[24];
	long n;
};

#define LEAP_PROGRESS_OUTCOMES 8

struct leap_progress {
	int on;
	double t0, last;   /* start, last drawn */
	double rated;      /* last rated */
	int mine;          /* this stage draws the line (the last rating said so) */
	long done, errors;
	long total;        /* records expected, or -1 when unknown */
	int in_fd;         /* the pipe or terminal records arrive on, or -1 (files: never starved) */
	int shared_fd;     /* the stages' shared file, or -1 (no terminal, or unavailable) */
	int slot;          /* this stage's slot in it */
	float score;       /* how much this stage looks like the bottleneck (0..1, smoothed) */
	struct leap_progress_outcome out[LEAP_PROGRESS_OUTCOMES];
	int nout;
};

/* mode: -1 on when stderr is a terminal, 0 never, 1 always. */
void leap_progress_init(struct leap_progress *p, int mode);

/* Names the program's inputs (as on its command line: none or "-" is standard input): when
 * they are all regular files their records (non-blank lines) are counted as the total, and
 * records arriving through a pipe are watched for the bottleneck rating. Does nothing when
 * progress is off. */
void leap_progress_input(struct leap_progress *p, int nfiles, char *const *files);

/* Sets the total number of records expected (for programs that know it otherwise). */
void leap_progress_total(struct leap_progress *p, long total);

/* Adds one to the outcome `name` (shown in the order first seen), or sets it to n. */
void leap_progress_count(struct leap_progress *p, const char *name);
void leap_progress_set(struct leap_progress *p, const char *name, long n);

/* Records that `done` records were processed so far, `errors` of them with an error. */
void leap_progress_update(struct leap_progress *p, long done, long errors);

/* Draws the final state and ends the line (if progress is on); leaves the shared file. */
void leap_progress_end(struct leap_progress *p);

#endif
