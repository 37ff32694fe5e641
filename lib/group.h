/* group.h - streaming GRPO groups: collect records by group key, hand a group over once complete. */
#ifndef LEAP_GROUP_H
#define LEAP_GROUP_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "util.h"

struct leap_in;

/* One record held in an open group, with the few values the filters decide on, extracted
 * once when the record arrives so that the parsed record itself need not be kept. */
struct leap_member {
	char *raw;          /* the record's raw line (owned), NUL-terminated */
	size_t len;         /* its length in bytes */
	const char *file;   /* input name for messages (not owned; lives as long as the input) */
	long line;          /* 1-based line number in `file` */
	long seq;           /* arrival order over the whole input (0-based) */
	long sample;        /* `sample`, or -1 when absent */
	long turn;          /* `turn`, or 1 when absent */
	int status;         /* enum leap_status of `status`, LEAP_ST_NONE when absent/unknown */
	int final;          /* 1 when this record ends its trajectory (see the program) */
	int has_tokens;     /* 1 when `tokens` is an integer >= 0 */
	long tokens;        /* `tokens` when has_tokens */
	double speedup;     /* `bench.speedup` when finite and > 0 and bench.status is "ok", else 0 */
	int speed_unusable; /* 1 when bench.speedup is > 0 but bench.status is not "ok" (noisy,
			     * suspicious, missing): the timing is not used (speedup 0) */
	int has_error;      /* 1 when the record carries an `error` member */
	int gate;           /* dcp.verdict carried from the turn that decided the group (0 easy,
			     * 1 hopeless, 2 expand: enum leap_verdict), -1 when absent */
	long gate_turn, gate_fail, gate_n; /* dcp.turn, dcp.n_fail, dcp.group_size (0 when absent) */
	int in_done;        /* leap-prune: the record was taken from the done file (a re-run) */
	char *note;         /* an owned message (e.g. the duplicate's), freed with the raw text */
	int has_value;      /* 1 when `value` holds the number the program works on */
	double value;       /* a reward or a rank score, depending on the program */
	long turns;         /* rank.turns, or 0 */
	int has_reward;     /* 1 when `reward` is a finite number */
	double reward;
	int has_score;      /* 1 when rank.score is a finite number */
	double score;
	long want;          /* `group_size` (records of its group in this turn), or 0 */
	size_t task_off;    /* `task`: its JSON string text is raw[task_off..task_off+task_len) */
	size_t task_len;    /* 0 when the record has no task string */
	int has_key;        /* 1 when the record has the field the program appends */
	double out;         /* the result computed for the record (an advantage) */
	const char *skip;   /* when not NULL, the record does not take part: this is why */
};

/* An open or completed group: the members in arrival order. */
struct leap_group {
	char *key;                 /* the group key (owned) */
	struct leap_member *m;     /* members in arrival order */
	size_t n, cap;
	long units;                /* units counted toward completion so far */
	long want;                 /* units that complete the group; 0 when unknown */
	struct leap_group *prev, *next; /* open groups in order of first arrival */
	struct leap_group *hnext;       /* hash chain */
	size_t hash;
};

/* Open groups by key. Only open groups are held: a completed group is handed to the caller
 * and forgotten, so memory is bounded by the groups open at one time. */
struct leap_grouper {
	struct leap_group **buckets;
	size_t nbuckets, count;
	struct leap_group *head, *tail;
};

/* Prepares an empty grouper. */
void leap_grouper_init(struct leap_grouper *g);

/* Adds member *m (its raw text is taken over; *m is zeroed) to the group named
 * `key`, creating the group if it is not open. `unit` (0 or 1) is added to the group's unit
 * count; when `want` > 0 it becomes the group's target (the largest target seen wins).
 * When the group's units reach a positive target, the group is removed from the grouper and
 * returned (the caller owns it and frees it with leap_group_free); otherwise NULL. */
struct leap_group *leap_grouper_add(struct leap_grouper *g, const char *key, struct leap_member *m, int unit,
				    long want);

/* Removes and returns the open group that arrived first, or NULL when none is open. Used at
 * end of input, when the remaining groups are decided with what arrived. */
struct leap_group *leap_grouper_pop(struct leap_grouper *g);

/* The open group named `key`, or NULL. */
struct leap_group *leap_grouper_get(const struct leap_grouper *g, const char *key);

/* Duplicates. A record is identified by (group, sample, turn); a second record with the same
 * identity (the sample a number >= 0) takes no part in any decision, tournament or advantage:
 * the programs write it as an error record naming the first one's position. One policy for
 * every program: this message, and the rule that the first record wins. */

/* The index of the first member of grp with the same sample (>= 0) and turn as m, or -1. */
long leap_group_find_dup(const struct leap_group *grp, const struct leap_member *m);

/* A new string: the message for a second record of (group, sample, turn) whose first is at
 * file:line. */
char *leap_dup_message(const char *group, long sample, long turn, const char *file, long line);

/* Marks m a duplicate (m->skip: its message, warned on stderr) and returns 1 when `open`, the
 * open group named `group` (or NULL), already holds a record of the same sample and turn;
 * else 0. A marked duplicate stays in its group, so that it is written in its place, but
 * takes no part and does not count toward the group's size. */
int leap_group_mark_dup(const struct leap_group *open, const char *group, struct leap_member *m);

/* Frees a group handed out by leap_grouper_add/pop and its members. */
void leap_group_free(struct leap_group *grp);

/* Frees every open group and the table; the grouper is empty and reusable afterwards. */
void leap_grouper_free(struct leap_grouper *g);

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

/* Numbers the trajectories of a group: members with the same `sample` (>= 0) form one
 * trajectory; a member without a sample is a trajectory of its own. traj[i] receives the
 * trajectory of member i; trajectories are numbered 0.. in order of first arrival. Returns
 * the number of trajectories. */
size_t leap_group_trajectories(const struct leap_group *grp, size_t *traj);

/* Releases one member's raw text and note. */
void leap_member_clear(struct leap_member *m);

/* 1 when every input (files, or standard input when nfiles is 0 or a file is "-") can be
 * read twice: regular files, standard input named at most once. *off receives standard
 * input's current offset. */
int leap_inputs_seekable(int nfiles, char *const *files, off_t *off);

/* Before a second leap_in pass over inputs leap_inputs_seekable accepted: puts standard
 * input back at `off` when it is one of them. Dies with a message when it cannot. */
void leap_inputs_rewind(int nfiles, char *const *files, off_t off);

/* Appends to `b` the record whose raw text is raw[0..len) with the members of `add`
 * appended, and a newline, without re-serialising the raw text when it is safe: the raw text
 * is a JSON object ending in '}' and does not hold any key of `add`. Otherwise the text is
 * parsed, updated with `add` and re-serialised (keys keep their order; existing keys are
 * replaced in place). `rec`, when not NULL, is the parsed raw text and saves the parse.
 * Returns 0, or -1 when the raw text is not a JSON object (b is then unchanged). */
int leap_splice_line(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add);

/* Like leap_splice_line when the caller knows whether the raw text holds a key of `add`
 * (clash 1) or not (clash 0); clash -1 means unknown. */
int leap_splice_line_known(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add,
			   int clash);

/* Appends to `b` the record raw[0..len) with `error` = {program, file, line, message}
 * appended (or replaced) and a newline. Returns 0, or -1 when the raw text is not an
 * object. */
int leap_splice_error(struct leap_buf *b, const char *raw, size_t len, const char *file, long line,
		      const char *message);

/* A file that records are appended to as whole lines: each write(2) holds whole lines only
 * (the file is opened with O_APPEND), so several writers can share it. */
struct leap_lines {
	int fd;
	const char *path;
	struct leap_buf buf;
	long written;
};

/* Opens `path` for appending (created 0644 when missing). Dies with a message on failure. */
void leap_lines_open(struct leap_lines *f, const char *path);
/* Queues line[0..len) (which must end in '\n'); writes out when 64 KiB are queued. Dies with
 * a message on a write error. */
void leap_lines_add(struct leap_lines *f, const char *line, size_t len);
/* Writes out what is queued. Dies with a message on a write error. */
void leap_lines_flush(struct leap_lines *f);
/* Writes out and closes. Returns LEAP_EXIT_OK, or LEAP_EXIT_FATAL after a message. */
int leap_lines_close(struct leap_lines *f);

#endif
