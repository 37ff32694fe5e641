/* feedback.c - the lean feedback a failed or slow candidate gets for its next turn.
 *
 * This is what the model reads after a turn, so every sentence must be something it can act
 * on: the failure named in one headline, the evidence (the compiler's errors with the notes
 * and hints that belong to them, the mismatch, the crash), and one instruction, all within
 * --feedback-bytes. It lives apart from prune.c, which decides which groups go on: what a
 * record's feedback says never changes a decision. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "feedback.h"
#include "core/jsonl.h"
#include "prune.h"
#include "core/record.h"
#include "core/util.h"
#include "core/banned.h"

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

/* 1 for the severities that stop a build. */
static int is_error(const char *sev)
{
	return !strcmp(sev, "error") || !strcmp(sev, "fatal error") || !strcmp(sev, "fatal");
}

/* Appends line `line` (1-based) of `code` as the compilers print it, "  L | text", with a
 * caret under byte column `col` (the prefix's tabs kept, so it lines up at any tab width).
 * Long lines are cut to a window around the column. Nothing when there is no such line. */
void leap_feedback_quote(struct leap_buf *b, const char *code, long line, long col)
{
	if (!code || line < 1)
		return;
	const char *p = code;
	for (long l = 1; l < line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return;
	size_t n = strcspn(p, "\r\n"), from = 0;
	size_t c = col > 0 ? (size_t)col - 1 : 0;
	if (c > n)
		c = n;
	if (n > 160) { /* a window of 160 bytes around the column */
		from = c > 80 ? c - 80 : 0;
		while (from > 0 && ((unsigned char)p[from] & 0xC0) == 0x80)
			from--;
		n = utf8_prefix(p + from, n - from, 160) + from;
	}
	int w = snprintf(NULL, 0, "%ld", line);
	leap_buf_addf(b, "\n %ld | %s", line, from ? "..." : "");
	leap_buf_add(b, p + from, n - from);
	if (col < 1)
		return;
	leap_buf_addf(b, "\n %*s | %s", w, "", from ? "   " : "");
	for (size_t k = from; k < c && k < n; k++)
		if (p[k] == '\t')
			leap_buf_add(b, "\t", 1);
		else if (((unsigned char)p[k] & 0xC0) != 0x80)
			leap_buf_add(b, " ", 1);
	leap_buf_add(b, "^", 1);
}

/* Appends the headline of one diagnostic: "line L:C: SEVERITY: MESSAGE", the place named by
 * `where` instead when it is not the candidate's code. */
static void diag_head(struct leap_buf *b, const json_t *dg)
{
	json_int_t line = leap_get_int(dg, "line", 0), col = leap_get_int(dg, "col", 0);
	const char *where = leap_get_str(dg, "where", NULL);
	if (where && !strcmp(where, "prelude"))
		leap_buf_adds(b, "in the required prototype: ");
	else if (where)
		leap_buf_addf(b, "%s: ", where);
	else if (line > 0 && col > 0)
		leap_buf_addf(b, "line %lld:%lld: ", (long long)line, (long long)col);
	else if (line > 0)
		leap_buf_addf(b, "line %lld: ", (long long)line);
	leap_buf_addf(b, "%s: %s", leap_get_str(dg, "severity", "error"), leap_get_str(dg, "message", ""));
}

/* Appends what the compiler printed under a diagnostic (the quoted line with its caret, a
 * fix-it), or, for the candidate's own line with nothing printed, that line quoted from
 * `code`; starts with a newline when not empty. */
static void diag_excerpt(struct leap_buf *b, const json_t *dg, const char *code)
{
	const char *excerpt = leap_get_str(dg, "excerpt", NULL);
	if (excerpt && *excerpt) {
		leap_buf_add(b, "\n", 1);
		leap_buf_adds(b, excerpt);
	} else if (!json_object_get(dg, "where")) {
		leap_feedback_quote(b, code, (long)leap_get_int(dg, "line", 0), (long)leap_get_int(dg, "col", 0));
	}
}

/* Appends `piece` to `b` when b stays within `limit` bytes; returns 1 when it did. */
static int add_within(struct leap_buf *b, const struct leap_buf *piece, size_t limit)
{
	if (b->len + piece->len > limit)
		return 0;
	leap_buf_add(b, piece->s, piece->len);
	return 1;
}

/* The headline of a diagnostic as diag_head writes it; the caller frees it. Two messages
 * with the same headline say the same thing at the same place. */
static char *head_text(const json_t *dg)
{
	struct leap_buf b = {0};
	diag_head(&b, dg);
	return leap_buf_detach(&b);
}

/* 1 when the array of strings `a` holds `s`. */
static int holds(const json_t *a, const char *s)
{
	size_t j;
	const json_t *v;
	json_array_foreach(a, j, v)
		if (!strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

/* 1 when the error at diags[i] repeats the headline of an earlier one (not a note): gcc
 * repeats "inlining failed in call to '_mm256_loadu_ps'" in its header once per call of the
 * intrinsic when a `target` attribute is missing, and only the notes under each (the
 * candidate's line) differ. Such a repeat is shown as its notes, under the first. */
static int repeats(const json_t *diags, size_t i)
{
	char *h = head_text(json_array_get(diags, i));
	int same = 0;
	for (size_t k = 0; k < i && !same; k++) {
		const json_t *e = json_array_get(diags, k);
		if (strcmp(leap_get_str(e, "severity", ""), "note")) {
			char *o = head_text(e);
			same = !strcmp(h, o);
			free(o);
		}
	}
	free(h);
	return same;
}

/* Appends to `blk` the notes that follow diags[i], each with its excerpt, while the block stays
 * within `limit`. A note already shown is left out (the compiler repeats them: gcc's "did you
 * forget to '#include <stddef.h>'?" under each use, at each use's place); the others go into
 * `shown`, by message and by headline. Under an error outside the candidate's code (in a
 * header: `place`) a note is the same only at the same place: its place ("called from here")
 * is what ties the error to the candidate's lines. */
static void diag_notes(struct leap_buf *blk, const json_t *diags, size_t i, const char *code, json_t *shown,
		       size_t limit, int place)
{
	struct leap_buf piece = {0};
	for (size_t k = i + 1; k < json_array_size(diags); k++) {
		const json_t *note = json_array_get(diags, k);
		if (strcmp(leap_get_str(note, "severity", ""), "note"))
			break;
		const char *m = leap_get_str(note, "message", "");
		char *h = head_text(note);
		if (holds(shown, place ? h : m)) {
			free(h);
			continue;
		}
		piece.len = 0;
		leap_buf_add(&piece, "\n", 1);
		leap_buf_adds(&piece, h);
		size_t head_len = piece.len;
		diag_excerpt(&piece, note, code);
		if (add_within(blk, &piece, limit) || (piece.len = head_len, add_within(blk, &piece, limit))) {
			json_array_append_new(shown, json_string(m));
			json_array_append_new(shown, json_string(h));
		} /* else not even the note without its excerpt fit */
		free(h);
	}
	leap_buf_free(&piece);
}

/* Appends to `blk` the block of the message at diags[i]: its headline, then its excerpt and
 * each note that follows it (with the note's excerpt), each piece only while the block stays
 * within `limit`; then the notes of each later repeat of it (repeats()) while it stays within
 * `rep_limit` (a repeat's notes are extra: they never cost the block its place). */
static void diag_block(struct leap_buf *blk, const json_t *diags, size_t i, const char *code, json_t *shown,
		       size_t limit, size_t rep_limit)
{
	struct leap_buf piece = {0};
	const json_t *dg = json_array_get(diags, i);
	char *h = head_text(dg);
	leap_buf_adds(blk, h);
	diag_excerpt(&piece, dg, code);
	add_within(blk, &piece, limit);
	leap_buf_free(&piece);
	diag_notes(blk, diags, i, code, shown, limit, json_object_get(dg, "where") != NULL);
	for (size_t k = i + 1; k < json_array_size(diags); k++) {
		char *o = head_text(json_array_get(diags, k));
		if (!strcmp(o, h) && strcmp(leap_get_str(json_array_get(diags, k), "severity", ""), "note"))
			diag_notes(blk, diags, k, code, shown, rep_limit, 1);
		free(o);
	}
	free(h);
}

/* The compile message when it says more than the diagnostics: the required prototype of a
 * wrong or missing entry point (the linker says only "undefined reference to `f'"), a
 * forbidden include or library, a limit; NULL for a plain compile or link error, whose
 * message repeats the first diagnostic. */
static const char *compile_verdict(const json_t *compile)
{
	const char *reason = leap_get_str(compile, "reason", NULL), *msg = leap_get_str(compile, "message", NULL);
	if (!reason || !msg || !*msg || !strcmp(reason, "compile") || !strcmp(reason, "link"))
		return NULL;
	return msg;
}

/* Collects the details for a compile failure in at most `room` bytes: each error with its
 * excerpt and the notes that follow it, as whole blocks while they fit (the first one piece
 * by piece), then how many errors were left out; warnings only when nothing is an error.
 * Without diagnostics: the log, else the message. The first headline alone may be longer
 * than `room` (the caller cuts it). */
static void compile_details(struct leap_buf *d, const json_t *compile, const char *code, size_t room)
{
	const char *verdict = compile_verdict(compile);
	if (verdict) { /* first, whole: it is the one instruction that fixes the build */
		leap_buf_adds(d, verdict);
		if (!strchr(".;", verdict[strlen(verdict) - 1])) /* a prototype ends in its own ';' */
			leap_buf_adds(d, ".");
	}
	const json_t *diags = json_object_get(compile, "diagnostics");
	size_t nerr = 0, i, nblocks = 0, left = 0, total = 0;
	const json_t *dg;
	json_array_foreach(diags, i, dg)
		nerr += is_error(leap_get_str(dg, "severity", "")) != 0;
	json_array_foreach(diags, i, dg) { /* the messages shown as blocks */
		const char *sev = leap_get_str(dg, "severity", "error");
		total += strcmp(sev, "note") && (!nerr || is_error(sev)) && !repeats(diags, i);
	}
	struct leap_buf blk = {0};
	json_t *shown = json_array(); /* messages and headlines of the notes shown so far */
	json_array_foreach(diags, i, dg) {
		const char *sev = leap_get_str(dg, "severity", "error");
		if (!strcmp(sev, "note") || (nerr && !is_error(sev)) || repeats(diags, i))
			continue; /* notes go with their message, a repeat's under the first; warnings only when nothing failed */
		if (left) {
			left++;
			continue;
		}
		/* room for the count of those that would be left out after this one */
		size_t after = total - nblocks - 1;
		size_t reserve = after ? (size_t)snprintf(NULL, 0, "\n(%zu more errors not shown)", after) : 0;
		size_t limit = room > reserve + d->len + 1 ? room - reserve - d->len - 1 : 0;
		leap_buf_reset(&blk);
		json_t *trial = json_deep_copy(shown);
		diag_block(&blk, diags, i, code, trial, nblocks ? (size_t)-1 : limit, limit);
		if (nblocks && blk.len > limit) {
			json_decref(trial);
			left = 1;
			continue;
		}
		json_decref(shown);
		shown = trial;
		if (d->len)
			leap_buf_add(d, "\n", 1);
		leap_buf_add(d, blk.s, blk.len);
		nblocks++;
	}
	json_decref(shown);
	leap_buf_free(&blk);
	if (left) {
		char more[64];
		int k = snprintf(more, sizeof more, "\n(%zu more %s not shown)", left,
				 nerr ? (left == 1 ? "error" : "errors") : (left == 1 ? "message" : "messages"));
		if (d->len + (size_t)k <= room)
			leap_buf_add(d, more, (size_t)k);
	}
	if (nblocks || left)
		return;
	const char *log = leap_get_str(compile, "log", NULL);
	const char *msg = leap_get_str(compile, "message", NULL);
	if (log && *log) {
		if (d->len)
			leap_buf_add(d, "\n", 1);
		leap_buf_adds(d, log);
	} else if (msg && *msg && !verdict) {
		leap_buf_adds(d, msg);
	}
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

/* The speedup's 95% interval (bench.speedup_ci) into *lo, *hi: 1 when the timing has one. */
static int speed_interval(const json_t *bench, double *lo, double *hi)
{
	const json_t *ci = json_object_get(bench, "speedup_ci");
	*lo = json_number_value(json_array_get(ci, 0));
	*hi = json_number_value(json_array_get(ci, 1));
	return json_array_size(ci) == 2 && *lo > 0 && *hi >= *lo;
}

/* The timing of a slow pass, so that the lesson is about the right machine and the right
 * rival: "Timed on NVIDIA H200 at rows=8192, cols=4096: median 0.52 ms, against 0.31 ms for
 * the baseline, a straightforward hand-written CUDA kernel (speedup 0.6x)." The baseline is
 * bench.baseline_kind when leap-bench names it (vendor: a library such as cuBLAS; torch-eager,
 * torch-compile: a module task's torch), else a
 * hand-written kernel on cuda and the task's C reference on cpu. */
static void slow_details(struct leap_buf *d, const json_t *bench, const char *backend)
{
	double ms = leap_get_num(bench, "median_ms", NAN), base = leap_get_num(bench, "baseline_ms", NAN);
	double sp = leap_get_num(bench, "speedup", NAN);
	const char *device = leap_get_str(bench, "device", NULL);
	const struct leap_backend_ops *be = leap_backend_find(backend);
	int cpu = be && (be->flags & LEAP_BK_HOST);
	if (!isfinite(ms) || !isfinite(base)) {
		if (isfinite(sp))
			leap_buf_addf(d, "Speedup over the baseline: %.3gx.", sp);
		return;
	}
	leap_buf_adds(d, "Timed");
	if (device)
		leap_buf_addf(d, " on %s", device);
	json_int_t cores = leap_get_int(bench, "cores", 0);
	if (cpu && cores > 0)
		leap_buf_addf(d, " (%lld core%s)", (long long)cores, cores == 1 ? "" : "s");
	const json_t *cs = json_object_get(bench, "case");
	const char *k;
	const json_t *v;
	int first = 1;
	json_object_foreach((json_t *)cs, k, v) {
		leap_buf_addf(d, "%s%s=", first ? " at " : ", ", k);
		if (leap_json_append(d, v))
			leap_buf_adds(d, "?");
		first = 0;
	}
	const char *kind = leap_get_str(bench, "baseline_kind", cpu ? "reference" : "kernel");
	const char *what = !strcmp(kind, "vendor")        ? "a vendor library (cuBLAS or cuDNN)"
			   : !strcmp(kind, "reference")   ? "the task's C reference compiled with cc -O2"
			   : !strcmp(kind, "torch-eager") ? "the PyTorch module run by torch (eager)"
			   : !strcmp(kind, "torch-compile")
				   ? "the PyTorch module compiled by torch.compile (AOTInductor)"
				   : "a straightforward hand-written CUDA kernel";
	leap_buf_addf(d, ": median %.4g ms, against %.4g ms for the baseline, %s", ms, base, what);
	double lo, hi;
	if (speed_interval(bench, &lo, &hi) && isfinite(sp) && sp > 0)
		leap_buf_addf(d, " (speedup %.3gx: %.3gx to %.3gx the baseline)", sp, lo, hi);
	else if (speed_interval(bench, &lo, &hi))
		leap_buf_addf(d, " (%.3gx to %.3gx the baseline: too noisy to count)", lo, hi);
	else if (isfinite(sp))
		leap_buf_addf(d, " (speedup %.3gx)", sp);
	leap_buf_adds(d, ".");
}

/* The bytes left for the details beside the headline and the instruction. */
static size_t room(const struct leap_prune_opts *o, const char *head, const char *tail)
{
	size_t fixed = strlen(head) + strlen(tail) + 2;
	return o->feedback_bytes > fixed ? o->feedback_bytes - fixed : 0;
}

char *leap_feedback(const json_t *rec, int status, const struct leap_prune_opts *o)
{
	const json_t *compile = json_object_get(rec, "compile");
	const json_t *verify = json_object_get(rec, "verify");
	const json_t *bench = json_object_get(rec, "bench");
	const char *code = leap_get_str(rec, "code", NULL);
	char headbuf[160];
	const char *head, *tail = "Reply with the complete corrected code in one fenced code block.";
	struct leap_buf d = {0};
	const char *vmsg = leap_get_str(verify, "message", NULL);
	/* a failure leap-bench found while timing (it set the record's status; verify passed) is
	 * told in bench's words: verify's would say that every case passed */
	const char *bst = leap_get_str(bench, "status", "");
	if (status != LEAP_ST_PASS &&
	    (!strcmp(bst, "mismatch") || !strcmp(bst, "runtime_error") || !strcmp(bst, "timeout")))
		vmsg = leap_get_str(bench, "message", vmsg);
	switch (status) {
	case LEAP_ST_NO_CODE:
		head = "No code was found in your answer.";
		tail = "Reply with the complete code in one fenced code block.";
		compile_details(&d, compile, code, room(o, head, tail));
		break;
	case LEAP_ST_COMPILE_ERROR:
		head = "Your code does not compile.";
		compile_details(&d, compile, code, room(o, head, tail));
		break;
	case LEAP_ST_RUNTIME_ERROR:
		head = "Your kernel failed at run time.";
		if (vmsg)
			leap_buf_adds(&d, vmsg);
		/* the line the crash report names (verify.crash), or the call that allocated the
		 * block written past (verify.heap), quoted */
		leap_feedback_quote(&d, code, (long)leap_get_int(json_object_get(verify, "crash"), "line",
								   leap_get_int(json_object_get(verify, "heap"), "line", 0)), 0);
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
		double sp = leap_get_num(bench, "speedup", NAN), lo, hi;
		int ci = speed_interval(bench, &lo, &hi);
		if (isfinite(sp) && sp >= 1 && ci) {
			snprintf(headbuf, sizeof headbuf, "Your kernel is correct and %.3gx to %.3gx as fast as the "
				 "baseline, short of the %.3gx asked for.", lo, hi, o->slow_below);
			head = headbuf;
		} else if (isfinite(sp) && sp >= 1) {
			snprintf(headbuf, sizeof headbuf, "Your kernel is correct and %.3gx as fast as the baseline, "
				 "short of the %.3gx asked for.", sp, o->slow_below);
			head = headbuf;
		} else if (!(sp > 0) && ci && hi >= 1) {
			snprintf(headbuf, sizeof headbuf, "Your kernel is correct; its timing was too noisy to tell its "
				 "speed (%.3gx to %.3gx the baseline's).", lo, hi);
			head = headbuf;
		} else {
			head = "Your kernel is correct but slower than the baseline.";
		}
		tail = "Make it faster; reply with the complete code in one fenced code block.";
		slow_details(&d, bench, leap_get_str(rec, "backend", leap_backend_name(leap_backend_record_default())));
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
