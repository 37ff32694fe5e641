/* feedback.c - the lean feedback a failed or slow candidate gets for its next turn.
 *
 * This is what the model reads after a turn, so every sentence must be something it can act
 * on: the failure named in one headline, the evidence (the compiler's errors with the notes
 * and hints that belong to them, the mismatch, the crash), and one instruction, all within
 * --feedback-bytes. It lives apart from prune.c, which decides which groups go on: what a
 * record's feedback says never changes a decision. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "prune.h"
#include "record.h"
#include "util.h"
#include "banned.h"

/* Appends s[0..n) to b; the caller made sure it fits. */
static void add_n(struct leap_buf *b, const char *s, size_t n)
{
	leap_buf_add(b, s, n);
}

/* The longest prefix of s[0..n) not longer than `max` that ends on a UTF-8 character
 * boundary. */
static size_t utf8_prefix(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	size_t k = max;
	while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;
	return k;
}

/* Collects the details for a compile failure: the error diagnostics first (all of them when
 * none is an error), one per line as "line L:C: SEVERITY: MESSAGE"; else the log; else the
 * message. */
static void compile_details(struct leap_buf *d, const json_t *compile)
{
	const json_t *diags = json_object_get(compile, "diagnostics");
	size_t nerr = 0, i;
	const json_t *dg;
	json_array_foreach(diags, i, dg) {
		const char *sev = leap_get_str(dg, "severity", "");
		if (!strcmp(sev, "error") || !strcmp(sev, "fatal error") || !strcmp(sev, "fatal"))
			nerr++;
	}
	for (int pass = 0; pass < 2; pass++) {
		json_array_foreach(diags, i, dg) {
			const char *sev = leap_get_str(dg, "severity", "error");
			int is_err = !strcmp(sev, "error") || !strcmp(sev, "fatal error") || !strcmp(sev, "fatal");
			/* pass 0: errors; pass 1: the rest, only when there was no error */
			if (pass == 0 ? !is_err : (nerr > 0 || is_err))
				continue;
			if (d->len)
				leap_buf_add(d, "\n", 1);
			json_int_t line = leap_get_int(dg, "line", 0), col = leap_get_int(dg, "col", 0);
			if (line > 0 && col > 0)
				leap_buf_addf(d, "line %lld:%lld: ", (long long)line, (long long)col);
			else if (line > 0)
				leap_buf_addf(d, "line %lld: ", (long long)line);
			leap_buf_addf(d, "%s: %s", sev, leap_get_str(dg, "message", ""));
		}
	}
	if (d->len)
		return;
	const char *log = leap_get_str(compile, "log", NULL);
	const char *msg = leap_get_str(compile, "message", NULL);
	if (log && *log)
		leap_buf_adds(d, log);
	else if (msg && *msg)
		leap_buf_adds(d, msg);
}

/* Renders a mismatch object {case, index, got, want, ...} as "key value, ..." text. */
static void mismatch_details(struct leap_buf *d, const json_t *mm)
{
	const char *key;
	const json_t *v;
	int first = 1;
	json_object_foreach((json_t *)mm, key, v) {
		if (!first)
			leap_buf_add(d, ", ", 2);
		first = 0;
		leap_buf_addf(d, "%s ", key);
		if (json_is_string(v))
			leap_buf_adds(d, json_string_value(v));
		else if (leap_json_append(d, v))
			leap_buf_adds(d, "?");
	}
}

char *leap_feedback(const json_t *rec, int status, const struct leap_prune_opts *o)
{
	const json_t *compile = json_object_get(rec, "compile");
	const json_t *verify = json_object_get(rec, "verify");
	const json_t *bench = json_object_get(rec, "bench");
	const char *head, *tail = "Reply with the complete corrected code in one fenced code block.";
	struct leap_buf d = {0};
	const char *vmsg = leap_get_str(verify, "message", NULL);
	switch (status) {
	case LEAP_ST_NO_CODE:
		head = "No code was found in your answer.";
		tail = "Reply with the complete code in one fenced code block.";
		compile_details(&d, compile);
		break;
	case LEAP_ST_COMPILE_ERROR:
		head = "Your code does not compile.";
		compile_details(&d, compile);
		break;
	case LEAP_ST_RUNTIME_ERROR:
		head = "Your kernel failed at run time.";
		if (vmsg)
			leap_buf_adds(&d, vmsg);
		break;
	case LEAP_ST_TIMEOUT:
		head = "Your kernel did not finish within the time limit.";
		if (vmsg)
			leap_buf_adds(&d, vmsg);
		break;
	case LEAP_ST_MISMATCH:
		head = "Your kernel computes wrong results.";
		if (vmsg)
			leap_buf_adds(&d, vmsg);
		else if (json_is_object(json_object_get(verify, "mismatch")))
			mismatch_details(&d, json_object_get(verify, "mismatch"));
		break;
	case LEAP_ST_PASS: {
		head = "Your kernel is correct but slower than the baseline.";
		tail = "Make it faster; reply with the complete code in one fenced code block.";
		double ms = leap_get_num(bench, "median_ms", NAN), base = leap_get_num(bench, "baseline_ms", NAN);
		double sp = leap_get_num(bench, "speedup", NAN);
		if (isfinite(ms) && isfinite(base))
			leap_buf_addf(&d, "Median %.4g ms against the baseline's %.4g ms (speedup %.3g).", ms, base, sp);
		else if (isfinite(sp))
			leap_buf_addf(&d, "Speedup over the baseline: %.3g.", sp);
		break;
	}
	default:
		head = "Your answer was not accepted.";
		break;
	}
	/* head "\n" details "\n" tail, details cut to fit. */
	size_t max = o->feedback_bytes, hl = strlen(head), tl = strlen(tail);
	struct leap_buf b = {0};
	size_t fixed = hl + 1 + tl + (d.len ? 1 : 0);
	if (fixed + (d.len ? 4 : 0) > max) {
		/* Not even the headline and the instruction fit: cut the whole text. */
		struct leap_buf all = {0};
		leap_buf_adds(&all, head);
		if (d.len) {
			leap_buf_add(&all, "\n", 1);
			leap_buf_add(&all, d.s, d.len);
		}
		leap_buf_add(&all, "\n", 1);
		leap_buf_adds(&all, tail);
		add_n(&b, all.s, utf8_prefix(all.s, all.len, max));
		leap_buf_free(&all);
	} else {
		leap_buf_add(&b, head, hl);
		leap_buf_add(&b, "\n", 1);
		if (d.len) {
			size_t room = max - fixed;
			if (d.len <= room) {
				leap_buf_add(&b, d.s, d.len);
			} else {
				add_n(&b, d.s, utf8_prefix(d.s, d.len, room - 3));
				leap_buf_add(&b, "...", 3);
			}
			leap_buf_add(&b, "\n", 1);
		}
		leap_buf_add(&b, tail, tl);
	}
	leap_buf_free(&d);
	struct leap_buf clean = {0};
	leap_utf8_sanitize(&clean, b.s ? b.s : "", b.len);
	leap_buf_free(&b);
	return leap_buf_detach(&clean);
}
