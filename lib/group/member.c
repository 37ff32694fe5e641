/* member.c - scan a record into the few values the group programs decide on, without jansson. */
/*
 * The group programs hold records until their group is complete, so what they hold must be
 * small and cheap to get: the raw line and a fixed struct of the values any of them decides
 * on, found by scan.c in one pass without building a json_t. A line the scanner refuses is
 * handed to jansson, which either names the error (an error record) or re-serialises it for
 * a second scan, so both paths end in the same struct.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "member.h"
#include "core/jsonl.h"
#include "core/record.h"
#include "scan.h"
#include "splice.h"
#include "core/banned.h"

enum { K_GROUP, K_TASK, K_SAMPLE, K_TURN, K_STATUS, K_TOKENS, K_BENCH, K_PRUNE, K_REWARD, K_RANK, K_GSIZE,
       K_DCP, K_ERROR, K_OWN, K_N };

/* The fields scanned, by K_ (K_OWN, the program's own, is its caller's): their names are the
 * rows of leap-record(5)'s table (record.c), spelt there only. */
static const enum leap_field scanned[K_N - 1] = {
	[K_GROUP] = LEAP_F_GROUP,
	[K_TASK] = LEAP_F_TASK,
	[K_SAMPLE] = LEAP_F_SAMPLE,
	[K_TURN] = LEAP_F_TURN,
	[K_STATUS] = LEAP_F_STATUS,
	[K_TOKENS] = LEAP_F_TOKENS,
	[K_BENCH] = LEAP_F_BENCH,
	[K_PRUNE] = LEAP_F_PRUNE,
	[K_REWARD] = LEAP_F_REWARD,
	[K_RANK] = LEAP_F_RANK,
	[K_GSIZE] = LEAP_F_GROUP_SIZE,
	[K_DCP] = LEAP_F_DCP,
	[K_ERROR] = LEAP_F_ERROR,
};

/* Fills the carried DCP gate of m from the `dcp` object (leap-prune's next-turn records). */
static void scan_gate(struct leap_member *m, struct leap_span dcp)
{
	static const char *const verdicts[] = {"easy", "hopeless", "expand"}; /* enum leap_verdict */
	long long v;
	m->gate = -1;
	if (!leap_span_is_object(dcp))
		return;
	struct leap_span name = leap_span_member(dcp, "verdict");
	for (int i = 0; i < 3; i++)
		if (leap_span_str_eq(name, verdicts[i]))
			m->gate = i;
	if (!leap_span_int(leap_span_member(dcp, "turn"), &v) && v >= 1 && v <= 0x7fffffffL)
		m->gate_turn = (long)v;
	if (!leap_span_int(leap_span_member(dcp, "n_fail"), &v) && v >= 0 && v <= 0x7fffffffL)
		m->gate_fail = (long)v;
	if (!leap_span_int(leap_span_member(dcp, "group_size"), &v) && v >= 0 && v <= 0x7fffffffL)
		m->gate_n = (long)v;
}

/* Reads a span holding [lo, hi] (two finite numbers, lo <= hi, both > 0). Returns 0 or -1. The
 * span was validated as JSON: each number ends at ',' or ']' inside it. */
static int span_interval(struct leap_span v, double *lo, double *hi)
{
	const char *p = v.p, *end = v.p ? v.p + v.n : NULL;
	char *e;
	if (!p || *p != '[')
		return -1;
	double x[2];
	for (int i = 0; i < 2; i++) {
		while (++p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			;
		if (p >= end || (*p != '-' && (*p < '0' || *p > '9')))
			return -1;
		x[i] = strtod(p, &e);
		p = e;
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p >= end || *p != (i ? ']' : ','))
			return -1;
	}
	if (!(x[0] > 0 && x[0] <= x[1] && isfinite(x[1])))
		return -1;
	*lo = x[0];
	*hi = x[1];
	return 0;
}

/* The speedup of a timing leap can trust: bench.speedup when bench.status is "ok" (a noisy or
 * suspicious timing, or one whose status is missing, carries no usable speed), with its
 * interval bench.speedup_ci when it has one. */
static void scan_speed(struct leap_member *m, struct leap_span bench)
{
	double d;
	if (leap_span_num(leap_span_member(bench, "speedup"), &d) || !(d > 0))
		return;
	if (!leap_span_str_eq(leap_span_member(bench, "status"), "ok")) {
		m->speed_unusable = 1;
		return;
	}
	m->speedup = d;
	if (span_interval(leap_span_member(bench, "speedup_ci"), &m->speed_lo, &m->speed_hi))
		m->speed_lo = m->speed_hi = 0;
}

/* leap_member_scan_text; the line is copied into m->raw only when `copy`. */
static int scan_text(struct leap_member *m, const char *text, size_t len, const char *file, long line, long seq,
		     const char *own, struct leap_buf *key, int *has_group, int copy)
{
	const char *keys[K_N];
	for (int i = 0; i < K_N - 1; i++)
		keys[i] = leap_field_name(scanned[i]);
	keys[K_OWN] = own ? own : "";
	struct leap_span sp[K_N];
	memset(m, 0, sizeof(*m));
	if (leap_scan_object(text, len, keys, own ? K_N : K_N - 1, sp))
		return -1;
	if (!own)
		sp[K_OWN] = (struct leap_span){NULL, 0};
	*has_group = !leap_span_str(sp[K_GROUP], key) || !leap_span_str(sp[K_TASK], key);
	/* a group key with a NUL byte cannot name a group */
	if (*has_group && memchr(key->s, '\0', key->len))
		*has_group = 0;
	m->raw = copy ? xstrndup(text, len) : NULL;
	m->len = len;
	m->file = file;
	m->line = line;
	m->seq = seq;
	long long v;
	m->sample = !leap_span_int(sp[K_SAMPLE], &v) && v >= 0 && v <= 0x7fffffffL ? (long)v : -1;
	m->turn = !leap_span_int(sp[K_TURN], &v) && v >= 1 && v <= 0x7fffffffL ? (long)v : 1;
	m->status = LEAP_ST_NONE;
	if (leap_span_is_string(sp[K_STATUS])) {
		for (int i = 0; i <= LEAP_ST_PASS; i++)
			if (leap_span_str_eq(sp[K_STATUS], leap_status_name((enum leap_status)i)))
				m->status = i;
	}
	if (sp[K_TOKENS].p && sp[K_TOKENS].p[0] != '-' && !memchr(sp[K_TOKENS].p, '.', sp[K_TOKENS].n) &&
	    !memchr(sp[K_TOKENS].p, 'e', sp[K_TOKENS].n) && !memchr(sp[K_TOKENS].p, 'E', sp[K_TOKENS].n) &&
	    !leap_span_int(sp[K_TOKENS], &v) && v <= 0x7fffffffffffL) {
		m->has_tokens = 1;
		m->tokens = (long)v;
	}
	double d;
	scan_speed(m, sp[K_BENCH]);
	scan_gate(m, sp[K_DCP]);
	m->has_error = sp[K_ERROR].p != NULL;
	m->final = !leap_span_str_eq(leap_span_member(sp[K_PRUNE], "decision"), "expand");
	if (!leap_span_num(sp[K_REWARD], &d)) {
		m->has_reward = 1;
		m->reward = d;
	}
	if (leap_span_is_object(sp[K_RANK])) {
		if (!leap_span_num(leap_span_member(sp[K_RANK], "score"), &d)) {
			m->has_score = 1;
			m->score = d;
		}
		if (!leap_span_int(leap_span_member(sp[K_RANK], "turns"), &v) && v >= 1 && v <= 0x7fffffffL)
			m->turns = (long)v;
	}
	if (!leap_span_int(sp[K_GSIZE], &v) && v > 0 && v <= 0x7fffffffL)
		m->want = (long)v;
	m->has_key = sp[K_OWN].p != NULL;
	if (leap_span_is_string(sp[K_TASK])) {
		m->task_off = (size_t)(sp[K_TASK].p - text);
		m->task_len = sp[K_TASK].n;
	}
	return 0;
}

int leap_member_scan_text(struct leap_member *m, const char *text, size_t len, const char *file, long line,
			  long seq, const char *own, struct leap_buf *key, int *has_group)
{
	return scan_text(m, text, len, file, line, seq, own, key, has_group, 1);
}

/* leap_member_scan, copying the line only when `copy`. */
static int scan_in(struct leap_member *m, const struct leap_in *in, long seq, const char *own, struct leap_buf *key,
		   int *has_group, int copy)
{
	const char *raw = in->buf;
	size_t len = in->len;
	if (in->line == 1 && len >= 3 && !memcmp(raw, "\xef\xbb\xbf", 3))
		raw += 3, len -= 3;
	return scan_text(m, raw, len, in->name, in->line, seq, own, key, has_group, copy);
}

int leap_member_scan(struct leap_member *m, const struct leap_in *in, long seq, const char *own,
		     struct leap_buf *key, int *has_group)
{
	return scan_in(m, in, seq, own, key, has_group, 1);
}

enum leap_read leap_member_line(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				struct leap_buf *key, int *has_group, json_t **bad, int copy, int *as_read)
{
	*bad = NULL;
	if (as_read)
		*as_read = 0;
	if (!scan_in(m, in, seq, own, key, has_group, copy)) {
		if (as_read)
			*as_read = m->len == in->len; /* no byte-order mark was dropped */
		return LEAP_READ_RECORD;
	}
	json_t *rec;
	if (leap_in_parse(in, &rec) == LEAP_READ_BAD) {
		*bad = rec;
		return LEAP_READ_BAD;
	}
	/* jansson took what the scanner refused (a corner of the grammar): go on with
	 * jansson's own compact text of it */
	struct leap_buf text = {0};
	if (leap_json_append(&text, rec))
		leap_die("cannot serialise a record");
	json_decref(rec);
	if (scan_text(m, text.s, text.len, in->name, in->line, seq, own, key, has_group, copy))
		leap_die("internal error: %s:%ld: a record jansson wrote does not scan", in->name, in->line);
	leap_buf_free(&text);
	return LEAP_READ_RECORD;
}

/* leap_member_next, the line copied only when `copy`. */
static enum leap_read member_next(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				  struct leap_buf *key, int *has_group, json_t **bad, int copy)
{
	*bad = NULL;
	if (leap_in_next_line(in) == LEAP_READ_EOF)
		return LEAP_READ_EOF;
	return leap_member_line(in, seq, own, m, key, has_group, bad, copy, NULL);
}

enum leap_read leap_member_next(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				struct leap_buf *key, int *has_group, json_t **bad)
{
	return member_next(in, seq, own, m, key, has_group, bad, 1);
}

enum leap_read leap_member_peek(struct leap_in *in, long seq, struct leap_member *m, struct leap_buf *key,
				int *has_group, json_t **bad)
{
	return member_next(in, seq, NULL, m, key, has_group, bad, 0);
}

void leap_member_error_line(struct leap_buf *b, const struct leap_member *m, const char *why)
{
	leap_buf_reset(b);
	if (leap_splice_error(b, m->raw, m->len, m->file, m->line, why))
		leap_die("internal error: a scanned record is not an object");
}

void leap_member_clear(struct leap_member *m)
{
	free(m->raw);
	free(m->note);
	m->raw = NULL;
	m->note = NULL;
	m->len = 0;
}
