/* prune.c - Difficulty-Conditioned Pruning: decide a group's fate after a turn, write lean feedback. */
/*
 * Why the gate is taken once, at turn 1: prune.h. The decision itself is arithmetic on counts
 * (failures, and failures of a status no feedback fixes, against thresholds that are counts,
 * fractions or the group's size less a count), apart from reading records, so that it is
 * tested alone and every decision comes with its reason in words (leap_prune_reason). The next
 * turn's record is built from the raw line's member spans (scan.c), not a parsed object: the
 * fields the next turn keeps pass through as they were, and the last turn's results are
 * dropped by name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonl.h"
#include "prune.h"
#include "core/record.h"
#include "scan.h"
#include "core/util.h"
#include "core/banned.h"

int leap_threshold_parse(const char *s, struct leap_threshold *t)
{
	if (!s || !*s)
		return -1;
	size_t n = strlen(s);
	if (s[0] == 'G') {
		int64_t k = 0;
		if (s[1] && (s[1] != '-' || leap_parse_i64(s + 2, 0, 1 << 30, &k)))
			return -1;
		*t = (struct leap_threshold){(double)k, 0, 1};
		return 0;
	}
	if (s[n - 1] == '%') {
		char *num = xstrndup(s, n - 1);
		double v;
		int bad = leap_parse_double(num, 0, 100, &v);
		free(num);
		if (bad)
			return -1;
		*t = (struct leap_threshold){v / 100.0, 1, 0};
		return 0;
	}
	if (strchr(s, '.') || strchr(s, 'e') || strchr(s, 'E')) {
		double v;
		if (leap_parse_double(s, 0, 1, &v))
			return -1;
		*t = (struct leap_threshold){v, 1, 0};
		return 0;
	}
	int64_t c;
	if (leap_parse_i64(s, 0, 1 << 30, &c))
		return -1;
	*t = (struct leap_threshold){(double)c, 0, 0};
	return 0;
}

double leap_threshold_count(const struct leap_threshold *t, long n)
{
	if (t->rel)
		return (double)n - t->v;
	return t->frac ? t->v * (double)n : t->v;
}

/* The DCP settings of the presets. The paper's method (arXiv 2608.01804, from its abstract and
 * secondary summaries; the full text was not found): easy when fewer than half of the group
 * failed at turn 1, hopeless when every sample failed (N_fail > T_max with T_max = G - 1, the
 * value leap reads from "such groups are skipped"), a decision taken once. The ablations
 * switch one rule off each. */
static const struct {
	const char *name;
	struct leap_threshold easy_below, hopeless_above;
	long max_turns; /* 0: unchanged */
} presets[] = {
	{"leap", {0.5, 1, 0}, {1, 0, 1}, 3},
	{"debug-all", {0, 0, 0}, {1.0, 1, 0}, 3},        /* no easy, no hopeless: every failure debugs */
	{"debug-below-half", {0.5, 1, 0}, {1.0, 1, 0}, 3}, /* the easy rule alone */
	{"single-turn", {0.5, 1, 0}, {1, 0, 1}, 1},       /* no feedback turn */
};

int leap_prune_preset(const char *name, struct leap_prune_opts *o)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(name, presets[i].name)) {
			o->easy_below = presets[i].easy_below;
			o->hopeless_above = presets[i].hopeless_above;
			o->catastrophic = 0;
			o->regate = 0;
			o->max_turns = presets[i].max_turns;
			return 0;
		}
	return -1;
}

int leap_prune_preset_fill(const char *name, struct leap_prune_opts *o, unsigned given)
{
	struct leap_prune_opts p = *o;
	if (leap_prune_preset(name, &p))
		return -1;
	if (!(given & LEAP_PRUNE_GIVEN_EASY))
		o->easy_below = p.easy_below;
	if (!(given & LEAP_PRUNE_GIVEN_HOPELESS))
		o->hopeless_above = p.hopeless_above;
	if (!(given & LEAP_PRUNE_GIVEN_CAT))
		o->catastrophic = p.catastrophic;
	if (!(given & LEAP_PRUNE_GIVEN_TURNS))
		o->max_turns = p.max_turns;
	if (!(given & LEAP_PRUNE_GIVEN_REGATE))
		o->regate = p.regate;
	return 0;
}

void leap_prune_defaults(struct leap_prune_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (leap_prune_preset("leap", o))
		leap_die("internal error: no preset 'leap'");
	o->slow_below = 1.0;
	o->feedback_bytes = 1024;
}

int leap_status_set_parse(const char *s, unsigned *out)
{
	unsigned set = 0;
	char *copy = xstrdup(s), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum leap_status st = leap_status_parse(tok);
		if (st == LEAP_ST_NONE) {
			free(copy);
			return -1;
		}
		set |= 1u << st;
	}
	free(copy);
	*out = set;
	return 0;
}

const char *leap_verdict_name(enum leap_verdict v)
{
	switch (v) {
	case LEAP_VERDICT_EASY:
		return "easy";
	case LEAP_VERDICT_HOPELESS:
		return "hopeless";
	default:
		return "expand";
	}
}

enum leap_verdict leap_prune_verdict(const struct leap_prune_opts *o, long n, long n_fail, long n_cat)
{
	if ((double)n_fail < leap_threshold_count(&o->easy_below, n))
		return LEAP_VERDICT_EASY;
	if ((double)n_fail > leap_threshold_count(&o->hopeless_above, n))
		return LEAP_VERDICT_HOPELESS;
	if (o->catastrophic && n > 0 && n_cat == n)
		return LEAP_VERDICT_HOPELESS;
	return LEAP_VERDICT_EXPAND;
}

enum leap_verdict leap_prune_gate(const struct leap_prune_opts *o, long n, long n_fail, long n_cat, int carried)
{
	if (!o->regate && carried >= LEAP_VERDICT_EASY && carried <= LEAP_VERDICT_EXPAND)
		return (enum leap_verdict)carried;
	return leap_prune_verdict(o, n, n_fail, n_cat);
}

const char *leap_prune_reason(const struct leap_prune_opts *o, enum leap_verdict v, int status, long turn,
			      double speedup, int *expand)
{
	*expand = 0;
	if (v == LEAP_VERDICT_EASY)
		return "easy";
	if (v == LEAP_VERDICT_HOPELESS)
		return "hopeless";
	int last = turn >= o->max_turns;
	if (status == LEAP_ST_PASS) {
		if (o->expand_slow && speedup > 0 && speedup < o->slow_below && !last) {
			*expand = 1;
			return "slow";
		}
		return "solved";
	}
	if (last)
		return "max_turns";
	*expand = 1;
	return "failed";
}

struct members {
	struct leap_span *name, *value;
	size_t n, cap;
};

/* leap_scan_members callback: appends one member's spans to the struct members at arg. */
static void collect(struct leap_span name, struct leap_span value, void *arg)
{
	struct members *ms = arg;
	if (ms->n == ms->cap) {
		ms->cap = ms->cap ? ms->cap * 2 : 32;
		ms->name = xrealloc(ms->name, ms->cap * sizeof(*ms->name));
		ms->value = xrealloc(ms->value, ms->cap * sizeof(*ms->value));
	}
	ms->name[ms->n] = name;
	ms->value[ms->n] = value;
	ms->n++;
}

/* 1 when the member name span `name` is one of names[0..n). */
static int name_in(struct leap_span name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (leap_span_str_eq(name, names[i]))
			return 1;
	return 0;
}

/* Appends the JSON text of string s. */
static void add_json_string(struct leap_buf *b, const char *s)
{
	json_t *j = json_string(s);
	if (!j || leap_json_append(b, j))
		leap_die("cannot serialise a string");
	json_decref(j);
}

int leap_next_turn_line(struct leap_buf *b, const char *raw, size_t len, int status, long turn, long group_size,
			const struct leap_prune_opts *o)
{
	static const char *const drop[] = {"completion", "code",      "compile", "verify",   "bench",
					   "status",     "tokens",    "reward",  "rank",     "advantage",
					   "error",      "prune",     "feedback", "group_size", "dcp"};
	static const char *const results[] = {"compile", "verify", "bench", "code", "backend"}; /* what leap_feedback reads */
	struct members ms = {0};
	if (leap_scan_members(raw, len, collect, &ms)) {
		free(ms.name);
		free(ms.value);
		return -1;
	}
	/* the last value of a name wins, as in a parsed record */
	struct leap_span completion = {NULL, 0}, messages = {NULL, 0};
	json_t *res = json_object();
	for (size_t i = 0; i < ms.n; i++) {
		if (leap_span_str_eq(ms.name[i], "completion"))
			completion = ms.value[i];
		else if (leap_span_str_eq(ms.name[i], "messages"))
			messages = ms.value[i];
		else if (name_in(ms.name[i], results, 5)) {
			struct leap_buf key = {0};
			leap_span_str(ms.name[i], &key);
			json_t *v = json_loadb(ms.value[i].p, ms.value[i].n, JSON_ALLOW_NUL | JSON_DECODE_ANY, NULL);
			if (v)
				json_object_set_new(res, key.s, v);
			leap_buf_free(&key);
		}
	}
	char *fb = leap_feedback(res, status, o);
	json_decref(res);

	/* messages + [{assistant: completion}, {user: feedback}] */
	struct leap_buf msg = {0};
	const char *p = messages.p;
	size_t n = messages.n;
	if (p && n >= 2 && p[0] == '[') {
		size_t i = 1;
		while (i < n - 1 && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
			i++;
		leap_buf_add(&msg, p, n - 1);
		if (i < n - 1)
			leap_buf_add(&msg, ",", 1);
	} else {
		leap_buf_add(&msg, "[", 1);
	}
	leap_buf_adds(&msg, "{\"role\":\"assistant\",\"content\":");
	if (leap_span_is_string(completion))
		leap_buf_add(&msg, completion.p, completion.n);
	else
		leap_buf_adds(&msg, "\"\"");
	leap_buf_adds(&msg, "},{\"role\":\"user\",\"content\":");
	add_json_string(&msg, fb);
	leap_buf_adds(&msg, "}]");

	leap_buf_add(b, "{", 1);
	int first = 1, turn_done = 0, msgs_done = 0;
	for (size_t i = 0; i < ms.n; i++) {
		struct leap_span nm = ms.name[i];
		if (name_in(nm, drop, sizeof(drop) / sizeof(drop[0])))
			continue;
		int is_turn = leap_span_str_eq(nm, "turn"), is_msgs = !is_turn && leap_span_str_eq(nm, "messages");
		if ((is_turn && turn_done) || (is_msgs && msgs_done))
			continue;
		if (!first)
			leap_buf_add(b, ",", 1);
		first = 0;
		leap_buf_add(b, nm.p, nm.n);
		leap_buf_add(b, ":", 1);
		if (is_turn) {
			leap_buf_addf(b, "%ld", turn + 1);
			turn_done = 1;
		} else if (is_msgs) {
			leap_buf_add(b, msg.s, msg.len);
			msgs_done = 1;
		} else {
			leap_buf_add(b, ms.value[i].p, ms.value[i].n);
		}
	}
	if (!turn_done) {
		leap_buf_addf(b, "%s\"turn\":%ld", first ? "" : ",", turn + 1);
		first = 0;
	}
	if (!msgs_done) {
		leap_buf_adds(b, first ? "\"messages\":" : ",\"messages\":");
		leap_buf_add(b, msg.s, msg.len);
	}
	leap_buf_adds(b, ",\"feedback\":");
	add_json_string(b, fb);
	leap_buf_addf(b, ",\"group_size\":%ld}", group_size);
	leap_buf_free(&msg);
	free(fb);
	free(ms.name);
	free(ms.value);
	return 0;
}
