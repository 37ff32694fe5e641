/* prune.h - Difficulty-Conditioned Pruning: decide a group's fate after a turn, write lean feedback.
 *
 * The LEAP paper (arXiv 2608.01804) gates a group once, from the failures of its first turn:
 * easy groups and hopeless ones end there, and an expanded group's failed samples keep
 * debugging until they pass or reach the turn limit. The verdict therefore travels with the
 * next-turn records (their `dcp` member) instead of being taken again on a shrinking subset;
 * --regate restores the per-turn decision as an ablation. */
#ifndef LEAP_PRUNE_H
#define LEAP_PRUNE_H

#include <stddef.h>
#include <jansson.h>

/* A threshold on failures: a count, a fraction of the group's size, or the group's size less
 * a count. */
struct leap_threshold {
	double v;
	int frac; /* 1: v is a fraction of the group's size */
	int rel;  /* 1: the threshold is the group's size minus v */
};

/* Parses "8" (a count), "0.5" or "50%" (a fraction; anything with '.' or '%'), "G" or "G-1"
 * (the group's size, less a count). Counts are integers >= 0; fractions lie in [0, 1].
 * Returns 0, or -1 (t unchanged) on bad input. */
int leap_threshold_parse(const char *s, struct leap_threshold *t);

/* The threshold as a number of records for a group of n records. */
double leap_threshold_count(const struct leap_threshold *t, long n);

struct leap_prune_opts {
	struct leap_threshold easy_below;     /* n_fail < this: easy (default 50%) */
	struct leap_threshold hopeless_above; /* n_fail > this: hopeless (default G-1: all failed) */
	unsigned catastrophic;   /* bit (1u << status) per status no feedback fixes (default none) */
	long max_turns;          /* turn >= max_turns: every trajectory ends (default 3) */
	int regate;              /* 1: decide every turn from that turn's records (default: once) */
	int expand_slow;         /* passing records with speedup < slow_below get another turn */
	double slow_below;       /* default 1.0 */
	size_t feedback_bytes;   /* the feedback text is at most this long (default 1024) */
};

/* Sets the defaults above (the preset "leap"). */
void leap_prune_defaults(struct leap_prune_opts *o);

/* Applies the preset `name` (leap, debug-all, debug-below-half, single-turn: the paper's method
 * and its ablations, man/leap-prune.1) to the DCP settings of *o. Returns 0, or -1 for an
 * unknown name. */
int leap_prune_preset(const char *name, struct leap_prune_opts *o);

/* The settings a preset sets, as bits: a flag that sets one explicitly keeps it from the
 * preset (leap_prune_preset_fill). */
enum {
	LEAP_PRUNE_GIVEN_EASY = 1,
	LEAP_PRUNE_GIVEN_HOPELESS = 2,
	LEAP_PRUNE_GIVEN_CAT = 4,
	LEAP_PRUNE_GIVEN_TURNS = 8,
	LEAP_PRUNE_GIVEN_REGATE = 16,
};

/* Fills the settings of *o that are not in `given` (LEAP_PRUNE_GIVEN_* bits: set by flags)
 * from preset `name`, so that the flags override the preset whatever their order. Returns 0,
 * or -1 (*o unchanged) for an unknown name. */
int leap_prune_preset_fill(const char *name, struct leap_prune_opts *o, unsigned given);

/* Parses a comma-separated list of status names into a bit set (1u << status); "" is the
 * empty set. Returns 0, or -1 naming nothing when a name is unknown. */
int leap_status_set_parse(const char *s, unsigned *out);

enum leap_verdict {
	LEAP_VERDICT_EASY,
	LEAP_VERDICT_HOPELESS,
	LEAP_VERDICT_EXPAND,
};

/* "easy", "hopeless" or "expand". */
const char *leap_verdict_name(enum leap_verdict v);

/* The verdict on a group of n >= 1 records, n_fail of which did not pass and n_cat of which
 * have a catastrophic status: easy when n_fail < easy_below; else hopeless when n_fail >
 * hopeless_above, or when every record failed with a catastrophic status (n_cat == n, with a
 * non-empty catastrophic set); else expand. Pure function. */
enum leap_verdict leap_prune_verdict(const struct leap_prune_opts *o, long n, long n_fail, long n_cat);

/* The verdict that governs a group at this turn: `carried` (a verdict an earlier turn took,
 * -1 when none) unless o->regate, else leap_prune_verdict of this turn's counts. Pure. */
enum leap_verdict leap_prune_gate(const struct leap_prune_opts *o, long n, long n_fail, long n_cat, int carried);

/* The decision on one record of a group with verdict v: returns the reason ("easy",
 * "hopeless", "solved", "failed", "slow" or "max_turns") and sets *expand to 1 when the
 * record gets another turn ("failed", "slow"), else 0. `speedup` is bench.speedup (0 when
 * unknown: a pass without timing is never slow). Pure function. */
const char *leap_prune_reason(const struct leap_prune_opts *o, enum leap_verdict v, int status, long turn,
			      double speedup, int *expand);

/* The lean feedback for a record with `status` (a new string of at most o->feedback_bytes
 * bytes, valid UTF-8 when the record's strings are): a headline naming the failure, the
 * details (the first compiler errors with line:column, or verify.message / the mismatch, or
 * the timing of a slow pass) and one instruction. When too long, the details are cut at a
 * character boundary and end in "..."; headline and instruction are kept unless they alone
 * do not fit. Never NULL. */
char *leap_feedback(const json_t *rec, int status, const struct leap_prune_opts *o);

/* Appends to `b` (without a newline) the next-turn record of the record whose text is
 * raw[0..len) (a JSON object; its status `status`, its turn `turn`): the same members in the
 * same order, their text untouched, minus this turn's results (completion, code, compile,
 * verify, bench, status, tokens, reward, rank, advantage, error, prune, feedback,
 * group_size, dcp), with turn + 1, messages + {assistant: completion} + {user: feedback},
 * `feedback` (leap_feedback of the record) and `group_size` (the records of the group sent to
 * that turn) appended. Returns 0, or -1 (b unchanged) when raw is not a JSON object. */
int leap_next_turn_line(struct leap_buf *b, const char *raw, size_t len, int status, long turn, long group_size,
			const struct leap_prune_opts *o);

#endif
