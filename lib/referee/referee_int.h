/* referee_int.h - what the parts of leap-bench's referee share: a record's state (struct rec)
 * and the functions one part calls in another. The map of the parts is the design comment at the
 * top of referee.c; the interface to the rest of leap is bench.h. */
#ifndef LEAP_REFEREE_INT_H
#define LEAP_REFEREE_INT_H

#include <stdint.h>
#include <jansson.h>

#include "bench.h"
#include "torchbase.h"

/* One element in FRESH_EVERY of a derived set's inputs is its donor's: enough that every
 * histogram, sum and column maximum of the suite changes from set to set (a column of 16 rows
 * or more gets a new maximum with probability about 1/16 per set, so many columns do), at the
 * cost of a copy of the inputs. */
#define FRESH_EVERY 16

/* Per-call times of blocks, or ratios of pairs (one sample each), and the calls they hold. */
struct series {
	double *x;
	size_t n, cap;
	long calls;
};

/* The state of one record's timing. */
struct rec {
	struct leap_bencher *B;
	const struct leap_task *t;
	enum leap_backend b;
	struct leap_bpool *P;
	struct leap_case_data *d;
	struct leap_session cs;      /* the candidate's session */
	struct leap_session *bs;     /* the baseline's (kept in the pool from record to record) */
	int have_cs;
	double target;               /* --target-ci of the backend */
	double ovh;                  /* ms of an empty block (calibrated on the baseline's runner) */
	uint32_t k;                  /* calls of the next pair's blocks */
	double cand_ms, base_ms;     /* the last time per call of each */
	double host_ms;              /* the last pair's own time per call beyond its blocks: making its
				      * sets, moving and checking them (0 until a pair is made) */
	struct series cand, base;    /* times per call of each pair's blocks */
	struct series ratio;         /* per pair: the baseline's time per call over the candidate's */
	int narrow;                  /* pairs in a row whose interval was within the target */
	double cpu_ms;               /* the candidate's CPU time over its timed blocks (-1: none) */
	int running;                 /* cpu: blocks are timed less their stalls (leap_bench_opts.wall_clock) */
	double stall_ms;             /* the candidate's stalls over its timed blocks (left out when running) */
	int prio;                    /* the referee's priority while it times (enum leap_prio_how) */
	uint32_t *perm;              /* [2 * slots] the slots picked: the candidate's, then (cuda: at
				      * [k], of the same region; cpu: at [slots], of its own) the
				      * baseline's */
	long calls;
	/* the outcome */
	int r;                       /* the candidate session's enum leap_sess */
	char *err;                   /* a harness failure */
	json_t *mismatch;
	char *mmsg;
	int overrun;                 /* the parameter whose guard was damaged, or -1 */
	long bad_call;
	uint32_t bad_set;
	double block_limit;          /* the wall limit of the block that timed out (s), or 0 */
};

/* referee.c: the sessions, and the block length the loop and the pool size aim at */
int ref_session_open(struct leap_verifier *v, struct leap_session *s, enum leap_backend b, const char *artifact,
		     const struct leap_session_opts *o, char **err);
struct leap_session_opts ref_session_opts(struct leap_bencher *B, const struct leap_case_data *d,
					  enum leap_backend b, uint32_t calls, int freeze);
double ref_block_target(const struct leap_bench_opts *o);
void ref_base_session(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
		      struct leap_session_opts *so);

/* verdict.c: the samples, the stopping rule, the verdicts */
void ref_series_add(struct series *s, double v, uint32_t calls);
void ref_series_stats(const struct series *s, struct leap_stats *st);
int ref_rec_done(struct rec *R, double elapsed);
json_t *ref_verdict_failed(struct rec *R, const char *why, int timeout, enum leap_status *st);
json_t *ref_verdict_wrong(struct rec *R, enum leap_status *st);
json_t *ref_verdict_timed(struct rec *R, const char *base_art);

/* inpool.c: the input pool */
char *ref_baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, int *skip,
			    char **err);
/* --pool-memory, or the backend's own when it was not given (inpool.c). */
uint64_t ref_pool_budget(struct leap_bencher *B, enum leap_backend b);
struct leap_bpool *ref_pool_get(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
				uint64_t seed, const char *base_art, int *nodev, char **err);
uint32_t ref_pool_fresh(struct leap_bpool *P, int make);
void ref_pool_make(struct leap_bpool *P, uint32_t s);
uint64_t ref_pool_dev_off(const struct leap_bpool *P, uint32_t s, size_t param);

/* devmove.c: the cuda data moves and the device's probes */
int ref_stage_dev(struct rec *R, int client, const uint32_t *sets, const uint32_t *slots, uint32_t n);
int ref_fetch_dev(struct rec *R, int client, const uint32_t *slots, uint32_t n);
int ref_device_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
		     const struct leap_case_data *d, double *gbs, double *gflops);
const struct leap_memfloor *ref_cpu_memfloor(struct leap_bencher *B, const char *device);

#endif
