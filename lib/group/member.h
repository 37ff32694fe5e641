/* member.h - one record as the group programs hold it: its raw line and the values they decide on. */
#ifndef LEAP_MEMBER_H
#define LEAP_MEMBER_H

#include <stddef.h>
#include <jansson.h>

#include "core/jsonl.h"
#include "core/util.h"

/* One record held in an open group, with the few values the filters decide on, extracted
 * once when the record arrives so that the parsed record itself need not be kept.
 *
 * One struct serves the three group programs, so that one scanner (member.c) fills it and
 * the grouper, the duplicate rule, the two-pass mode and the splicing are shared. Each field
 * says in brackets who reads it: P leap-prune (lib/group/prune.c), R leap-rank (lib/group/rank.c), A
 * leap-advantage (lib/group/advantage.c), "all" the shared code; lib/group/rerun.c reads the done file's
 * records with the same scanner. A field a program does not read costs a few bytes per held
 * record, which is why the scanner extracts everything at once rather than per program. */
struct leap_member {
	char *raw;          /* [all] the record's raw line (owned), NUL-terminated */
	size_t len;         /* [all] its length in bytes */
	const char *file;   /* [all] input name for messages (not owned; lives as long as the input) */
	long line;          /* [all] 1-based line number in `file` */
	long seq;           /* [all] arrival order over the whole input (0-based) */
	long sample;        /* [all] `sample`, or -1 when absent */
	long turn;          /* [all] `turn`, or 1 when absent */
	int status;         /* [P R A] enum leap_status of `status`, LEAP_ST_NONE when absent/unknown */
	int final;          /* [P R A] 1 when this record ends its trajectory (see the program) */
	int has_tokens;     /* [R] 1 when `tokens` is an integer >= 0 */
	long tokens;        /* [R] `tokens` when has_tokens */
	double speedup;     /* [P R A] `bench.speedup` when finite and > 0 and bench.status is "ok", else 0 */
	int speed_unusable; /* [R A] 1 when bench.speedup is > 0 but bench.status is not "ok" (noisy,
			     * suspicious, missing): the timing is not used (speedup 0) */
	double speed_lo, speed_hi; /* [R A] bench.speedup_ci with a usable speedup (0 when absent:
				    * a record of leap 0.1); two overlapping intervals tie on speed */
	int has_error;      /* [A, rerun] 1 when the record carries an `error` member */
	int gate;           /* [P] dcp.verdict carried from the turn that decided the group (0 easy,
			     * 1 hopeless, 2 expand: enum leap_verdict), -1 when absent */
	long gate_turn, gate_fail, gate_n; /* [P] dcp.turn, dcp.n_fail, dcp.group_size (0 when absent) */
	int in_done;        /* [P] leap-prune: the record was taken from the done file (a re-run) */
	char *note;         /* [R A] an owned message (e.g. the duplicate's), freed with the raw text */
	int has_value;      /* [A] 1 when `value` holds the number the program works on */
	double value;       /* [A] a reward or a rank score, depending on the program */
	long turns;         /* [A] rank.turns, or 0 */
	int has_reward;     /* [A] 1 when `reward` is a finite number */
	double reward;
	int has_score;      /* [A] 1 when rank.score is a finite number */
	double score;
	long want;          /* [P] `group_size` (records of its group in this turn), or 0 */
	size_t task_off;    /* [P] `task`: its JSON string text is raw[task_off..task_off+task_len) */
	size_t task_len;    /* [P] 0 when the record has no task string */
	int has_key;        /* [all] 1 when the record has the field the program appends */
	double out;         /* [A] the result computed for the record (an advantage) */
	const char *skip;   /* [R A] when not NULL, the record does not take part: this is why */
};

/* Fills *m from the line just read by leap_in_next_line without building a json_t: the
 * line (without a byte-order mark) is validated by leap_scan_object and copied; file, line,
 * sample, turn, status, tokens, bench.speedup (only when bench.status is "ok"), final
 * (prune.decision is not "expand"), reward, rank.score, rank.turns, group_size, the carried
 * dcp gate and whether it has an `error` are extracted, has_key tells whether the
 * record has a member named `own`, and *key receives the group key (`group`, else `task`;
 * *has_group 0 when there is neither). Returns 0, or -1 (m zeroed) when the line is not
 * valid JSON object text: the caller then parses it with leap_in_parse. */
int leap_member_scan(struct leap_member *m, const struct leap_in *in, long seq, const char *own,
		     struct leap_buf *key, int *has_group);

/* Like leap_member_scan for text[0..len) from `file`:`line` (used for a record re-serialised
 * by jansson). */
int leap_member_scan_text(struct leap_member *m, const char *text, size_t len, const char *file, long line,
			  long seq, const char *own, struct leap_buf *key, int *has_group);

/* Reads the next record into *m with leap_member_scan (a line the scanner refuses is parsed
 * by jansson: an invalid one gives LEAP_READ_BAD with an error record in *bad for the
 * caller to write; a valid one is re-serialised compactly and scanned). Returns
 * LEAP_READ_RECORD, LEAP_READ_BAD or LEAP_READ_EOF. */
enum leap_read leap_member_next(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				struct leap_buf *key, int *has_group, json_t **bad);

/* leap_member_next for the line leap_in_next_line has just read (in->buf); the line is
 * copied into m->raw only when `copy`. *as_read (when not NULL) is set to 1 when the record
 * was taken from the line exactly as read (the scanner accepted it and no byte-order mark was
 * dropped), 0 otherwise (re-serialised by jansson, or bad). */
enum leap_read leap_member_line(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				struct leap_buf *key, int *has_group, json_t **bad, int copy, int *as_read);

/* Like leap_member_next without keeping the line (m->raw is NULL, has_key 0): for a first
 * pass that only summarises. */
enum leap_read leap_member_peek(struct leap_in *in, long seq, struct leap_member *m, struct leap_buf *key,
				int *has_group, json_t **bad);

/* Makes b (reset first) m's raw record with `error` = why (naming m's file and line) and a
 * newline: how a program writes a record that takes no part. Dies when the raw text is not
 * an object, which the scanner never lets through. */
void leap_member_error_line(struct leap_buf *b, const struct leap_member *m, const char *why);

/* Releases one member's raw text and note. */
void leap_member_clear(struct leap_member *m);

#endif
