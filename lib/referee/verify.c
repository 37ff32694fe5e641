/* verify.c - check a compiled candidate against the task's reference in a sandboxed runner. */
/*
 * One runner per candidate runs every case and trial in order, one call each, until the first
 * failure: the first wrong case is what the model needs, and the cases after it cost time and
 * add nothing. The cases (inputs and the reference's outputs, drawn cases included) are made
 * once per (task, seed) and kept for the process (cases_for), since a group's candidates share
 * them; the reference is trusted code built by build.c and called in this process, the
 * candidate only ever runs in the sandbox (session.c). How a run ended becomes one status and
 * words a model can act on: a mismatch is rerun to tell a race from a steady bug, a crash is
 * mapped to the candidate's line (and, on a guard page, to the element of the buffer it
 * guards), a write into a buffer's canary to its element, a denied system call is named. A runner that never ran is the
 * harness's fault: an error, never a verdict.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * Reference computed in the parent, inputs through a memfd:
 *
 * Inputs are generated from a per-run seed and the reference results are computed in the parent
 * (`leap_verify_cases()` in `lib/referee/verify.c`) before any candidate starts; the child receives only the
 * inputs, through shared memory (a memfd of inputs, a memfd of outputs, a control region: the
 * shared regions of lib/sandbox/session.c), and the artifact through a descriptor (the runner copies it
 * into its own memfd, so it needs no path). The expected outputs are never in the child's memory.
 * The parent checks every output, checks that inputs were not modified, and repeats each case
 * over several trials with fresh inputs.
 *
 * Tests: "wrong values, zeros and a static cache are mismatches of kind value" (static_cache.c
 * replays its previous results), "modifying an input is a mismatch of kind input_modified
 * naming the input", "the seed is written into the record and replays the same verdict",
 * leap-bench.bats "wrong only at the benchmark size or after N calls: the record's status
 * becomes mismatch". (leap-bench's inputs and checks: lib/referee/referee.c.)
 *
 * Does not stop: a candidate that computes the right answer some other way (e.g. its own copy
 * of the reference) -- that is a correct candidate. Timing side channels against the parent
 * (which holds the expected outputs in its memory on the same CPU) are out of scope.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "task/build.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "sandbox/crash.h"
#include "core/files.h"
#include "core/jsonl.h"
#include "tlock.h"
#include "torchref.h"
#include "task/unseen.h"
#include "core/util.h"
#include "verify.h"
#include "core/banned.h"

#define MAX_OUTPUT 2048 /* bytes of the candidate's stdout/stderr kept in verify.output */

/* 1 when dir holds an executable leap-run-cpu. */
static int has_runner(const char *dir)
{
	char *p = xasprintf("%s/leap-run-cpu", dir);
	int ok = access(p, X_OK) == 0;
	free(p);
	return ok;
}

char *leap_libexec_dir(void)
{
	const char *e = getenv("LEAP_LIBEXEC");
	if (e && *e)
		return has_runner(e) ? xstrdup(e) : NULL;
	char *exe = leap_exe_dir();
	if (!exe)
		return NULL;
	const char *cands[] = {"%s/../libexec/leap", "%s/../libexec"};
	for (size_t i = 0; i < 2; i++) {
		char *d = xasprintf(cands[i], exe);
		if (has_runner(d)) {
			char *r = realpath(d, NULL);
			free(d);
			free(exe);
			return r ? r : NULL;
		}
		free(d);
	}
	free(exe);
	return NULL;
}

void leap_verifier_init(struct leap_verifier *v, const struct leap_verify_opts *o)
{
	memset(v, 0, sizeof *v);
	v->o = *o;
	leap_sandbox_env_init(&v->env);
	if (!o->sb.cgroups && leap_verifier_memory(v, &v->o.sb, NULL))
		v->o.sb.cgroups = &v->cg;
}

int leap_verifier_memory(struct leap_verifier *v, struct leap_sandbox_opts *sb, const struct leap_cgroups *cg)
{
	if (sb->cg_mem_none || (!sb->mem_bytes && !sb->cg_mem_bytes))
		return 0;
	if (!cg) {
		leap_cgroups_detect(&v->cg, LEAP_CG_NONE);
		cg = &v->cg;
	}
	if (cg->mode[LEAP_CG_MEMORY]) {
		sb->cg_ctrl |= 1u << LEAP_CG_MEMORY;
		return 1;
	}
	if (!v->mem_said++)
		leap_warn("no memory cgroup this process may use (make doctor says why): --memory bounds each cpu "
			  "process's address space, not a sandbox's processes together; a cuda sandbox has no memory "
			  "limit");
	return 0;
}

void leap_verifier_free(struct leap_verifier *v)
{
	leap_cgroups_free(&v->cg); /* detected or still zeroed */
	v->o.sb.cgroups = NULL;
	for (size_t i = 0; i < v->nrefs; i++) {
		if (v->refs[i].handle)
			dlclose(v->refs[i].handle);
		leap_torchref_stop(v->refs[i].torch);
		free(v->refs[i].path);
	}
	free(v->refs);
	v->refs = NULL;
	leap_gpu_free(&v->gpu.g);
	for (size_t i = 0; i < v->ncache; i++) {
		for (size_t j = 0; j < v->cache[i].ncases; j++)
			leap_case_free(&v->cache[i].cd[j]);
		free(v->cache[i].cd);
		free(v->cache[i].ref_s);
		for (size_t k = 0; k < v->cache[i].ndrawn; k++)
			free(v->cache[i].drawn[k].vals);
		free(v->cache[i].drawn);
	}
	free(v->cache);
	v->cache = NULL;
	v->ncache = v->ccap = 0;
	v->nrefs = v->cap = 0;
}

uint64_t leap_random_seed(void)
{
	uint64_t s;
	if (getrandom(&s, sizeof s, 0) == (ssize_t)sizeof s)
		return s;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
}

/* The words for the object a fault outside the artifact happened in (runner/fault.c names
 * its file), into b: the C library, the OpenMP runtime, the harness, another library. */
static void add_object(struct leap_buf *b, const char *obj)
{
	if (!strcmp(obj, "?"))
		leap_buf_adds(b, "at an address that holds no code (a corrupted return address or function pointer)");
	else if (!strncmp(obj, "libc.so", 7))
		leap_buf_addf(b, "in the C library (%s)", obj);
	else if (!strncmp(obj, "libgomp.so", 10))
		leap_buf_addf(b, "in the OpenMP runtime (%s)", obj);
	else if (!strncmp(obj, "leap-run", 8))
		leap_buf_adds(b, "in the harness's own code");
	else
		leap_buf_addf(b, "in %s", obj);
}

/* Parses a crash report's msg (runner/fault.c): "0xOFF" or "-", then optionally " OBJECT",
 * then optionally " @0xDATA". Returns 0 with *off (0 for "-"), obj (the object's name, ""
 * when none; only the characters a file name has) and *data (the data address's offset in the
 * regions' layout, UINT64_MAX when none), or -1. */
static int parse_crash_msg(const char *msg, uint64_t *off, char *obj, size_t n, uint64_t *data)
{
	char *end, head[LEAP_RUN_MSG];
	*off = 0;
	obj[0] = 0;
	*data = UINT64_MAX;
	const char *at = strstr(msg, " @0x");
	if (at) {
		*data = strtoull(at + 2, &end, 16);
		if (*end || (size_t)(at - msg) >= sizeof head)
			return -1;
		memcpy(head, msg, (size_t)(at - msg));
		head[at - msg] = 0;
		msg = head;
	}
	if (!strncmp(msg, "0x", 2)) {
		*off = strtoull(msg, &end, 16);
	} else if (msg[0] == '-') {
		end = (char *)msg + 1;
	} else {
		return -1;
	}
	if (!*end)
		return 0;
	if (*end != ' ')
		return -1;
	size_t k = 0;
	for (const char *p = end + 1; *p && k + 1 < n; p++) {
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-?", *p))
			return -1;
		obj[k++] = *p;
	}
	obj[k] = 0;
	return 0;
}

/* For a runner that died of a signal after reporting where (runner/fault.c): returns the
 * verify.crash object {line, function, called, outside} and the words for the message, or
 * NULL (nothing added) when there was no report or the runner did not die of the signal it
 * reported. A fault in the candidate's code adds " at line L of your code (in F)" to `at`. A
 * fault outside it (a library, the harness, no code at all) adds to `after` a sentence of its
 * own: where it was, the candidate's last call on the stack when there is one, and what such
 * a fault usually means (a write past a buffer that corrupted the heap or the stack, or a bad
 * argument to the library), so that a crash in malloc does not read as a crash without a
 * place. The report is the candidate's to forge: it names places and decides nothing. */
static json_t *crash_place(const struct leap_session *s, enum leap_backend b, const char *artifact,
			   struct leap_buf *at, struct leap_buf *after)
{
	const struct leap_run_reply *c = &s->crash;
	char obj[64];
	uint64_t off, data;
	if (c->magic != LEAP_RUN_MAGIC || !WIFSIGNALED(s->status) || WTERMSIG(s->status) != c->code || c->call > 2 ||
	    parse_crash_msg(c->msg, &off, obj, sizeof obj, &data))
		return NULL;
	int outside = c->call > 0 && obj[0];
	char *func = NULL;
	long line = c->call < 2 ? leap_crash_line(artifact, off, leap_compile_source_name(b), &func) : 0;
	if (line < 1 && !outside)
		return NULL;
	struct leap_buf *m = outside ? after : at;
	if (outside) {
		leap_buf_adds(m, " The fault was outside your code, ");
		add_object(m, obj);
	}
	if (line >= 1) {
		if (!c->call)
			leap_buf_addf(m, " at line %ld of your code", line);
		else
			leap_buf_addf(m, "%s called at line %ld of your code", outside ? "," : " in a library function", line);
		if (func)
			leap_buf_addf(m, " (in %s)", func);
	} else {
		leap_buf_adds(m, ", with no call of your code on the stack");
	}
	if (outside)
		leap_buf_adds(m, ": such a fault usually comes from an earlier write outside a buffer (past its end or "
				 "before its start: it corrupts the heap that malloc and free keep, or the stack), or from "
				 "a bad pointer or size passed to a library function.");
	json_t *o = json_object();
	if (line >= 1)
		json_object_set_new(o, "line", json_integer((json_int_t)line));
	json_object_set_new(o, "called", json_boolean(c->call > 0));
	if (func)
		json_object_set_new(o, "function", json_string(func));
	if (outside)
		json_object_set_new(o, "outside", json_string(obj));
	free(func);
	return o;
}

/* "c[17], 16 past its last element (c has 1 element)" or "c[-1], 1 before its first": the
 * element of buffer p (slot 0 of case d) that byte `rel` from its start belongs to. */
static void place_words(struct leap_buf *m, const struct leap_case_data *d, size_t p, int64_t rel)
{
	const char *name = d->t->params[p].name;
	int64_t es = d->rp[p].elsize ? (int64_t)d->rp[p].elsize : 1, n = d->sizes[p];
	int64_t i = rel >= 0 ? rel / es : -((-rel + es - 1) / es);
	if (i < 0)
		leap_buf_addf(m, "%s[%lld], %lld before its first element", name, (long long)i, (long long)-i);
	else
		leap_buf_addf(m, "%s[%lld], %lld past its last element (%s has %lld element%s)", name, (long long)i,
			      (long long)(i - n + 1), name, (long long)n, n == 1 ? "" : "s");
}

/* The offset of byte `rel`'s buffer in slot 0 of case d, for parameter p. */
static uint64_t slot0_off(const struct leap_case_data *d, size_t p)
{
	return d->rp[p].kind == LEAP_RUN_K_IN ? d->in[p] : d->out[p];
}

/* Where an overrun leap_session_guards found in buffer p lies, from its start: the first byte
 * after the buffer that lost the canary, else the last one before it (the nearest to the
 * buffer is the index the code got wrong by least). 0 when none is found. */
static int64_t damage_at(const struct leap_session *s, const struct leap_case_data *d, size_t p)
{
	uint64_t off = slot0_off(d, p);
	struct leap_run_range r[4];
	leap_run_canary_ranges(off, d->rp[p].bytes, r);
	for (int k = 2; k < 4; k++)
		for (uint64_t b = r[k].off; b < r[k].off + r[k].len; b++)
			if (s->arena[b] != LEAP_RUN_CANARY)
				return (int64_t)(b - off);
	for (int k = 1; k >= 0; k--)
		for (uint64_t b = r[k].off + r[k].len; b-- > r[k].off;)
			if (s->arena[b] != LEAP_RUN_CANARY)
				return (int64_t)b - (int64_t)off;
	return 0;
}

/* For a fault the runner placed in the shared regions (runner/fault.c, " @0xDATA"): the
 * buffer of slot 0 of case d whose guard page holds that address, in a sentence added to msg
 * and as {buffer, index} in *crash (made when NULL). The guard after a buffer is looked for
 * before the guard before one (a shared page is past the end of the one before it, the
 * common error). Forgeable like every crash report: it names a place and decides nothing. */
static void guard_place(const struct leap_session *s, const struct leap_case_data *d, struct leap_buf *msg,
			json_t **crash)
{
	const struct leap_run_reply *c = &s->crash;
	char obj[64];
	uint64_t off, data;
	if (c->magic != LEAP_RUN_MAGIC || !WIFSIGNALED(s->status) || WTERMSIG(s->status) != c->code ||
	    parse_crash_msg(c->msg, &off, obj, sizeof obj, &data) || data == UINT64_MAX)
		return;
	for (int after = 1; after >= 0; after--)
		for (size_t p = 0; p < d->t->nparams; p++) {
			if (d->rp[p].kind == LEAP_RUN_K_SCALAR)
				continue;
			struct leap_run_range r[4];
			leap_run_canary_ranges(slot0_off(d, p), d->rp[p].bytes, r);
			const struct leap_run_range *g = &r[after ? 3 : 0];
			if (data < g->off || data - g->off >= g->len)
				continue;
			int64_t rel = (int64_t)data - (int64_t)slot0_off(d, p);
			leap_buf_addf(msg, " The address it faulted on is in the guard page %s buffer %s: ", after ? "after" : "before",
				      d->t->params[p].name);
			place_words(msg, d, p, rel);
			leap_buf_adds(msg, ".");
			if (!*crash)
				*crash = json_object();
			int64_t es = d->rp[p].elsize ? (int64_t)d->rp[p].elsize : 1;
			json_object_set_new(*crash, "buffer", json_string(d->t->params[p].name));
			json_object_set_new(*crash, "index", json_integer(rel >= 0 ? rel / es : -((-rel + es - 1) / es)));
			return;
		}
}

/* For a runner that died of SIGSYS after naming the call its filter denied (runner/filter.c):
 * appends " (NAME)" to msg and returns the name (new), else NULL. Forgeable like every crash
 * report: it names a call and decides nothing (the verdict is the signal's). */
static char *denied_call(const struct leap_session *s, struct leap_buf *msg)
{
	const struct leap_run_reply *c = &s->crash;
	if (c->magic != LEAP_RUN_MAGIC || !WIFSIGNALED(s->status) || WTERMSIG(s->status) != SIGSYS ||
	    c->code != SIGSYS || c->call != LEAP_RUN_CRASH_SYSCALL || !c->msg[0])
		return NULL;
	char name[64];
	size_t n = 0;
	for (const char *p = c->msg; *p && n < sizeof name - 1; p++) /* only what a call's name holds */
		if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("_ ()", *p))
			name[n++] = *p;
	name[n] = 0;
	if (!n)
		return NULL;
	leap_buf_addf(msg, ": %s", name);
	return xstrdup(name);
}

/* Appends which kernels the CUDA error may come from: the error names none, and the
 * artifact's kernels are what is known (usually one). */
static void kernels_named(struct leap_buf *msg, const char *artifact)
{
	int n = 0;
	char *k = leap_artifact_kernels(artifact, &n);
	if (n == 1)
		leap_buf_addf(msg, ", in your kernel %s", k);
	else if (n > 1)
		leap_buf_addf(msg, ", in one of your kernels (%s)", k);
	free(k);
}

/* Builds the verify object of a failed or finished verification. */
static json_t *verdict(const char *status, uint64_t seed, size_t cases, int trials, const struct leap_errstats *es,
		       json_t *mismatch, double t0, const char *message, struct leap_buf *output)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:i,s:f,s:f}", "status", status, "seed", (json_int_t)seed, "cases", (json_int_t)cases,
			      "trials", trials, "max_abs_err", es->max_abs, "max_rel_err", es->max_rel);
	if (mismatch)
		json_object_set_new(o, "mismatch", mismatch);
	json_object_set_new(o, "ms", json_real((leap_now() - t0) * 1e3));
	json_object_set_new(o, "message", json_string(message));
	if (output && output->len)
		json_object_set_new(o, "output", json_string(output->s));
	return o;
}

/* Status name -> record status. */
static enum leap_status record_status(const char *s)
{
	if (!strcmp(s, "no_device"))
		return LEAP_ST_NONE;
	return leap_status_parse(s);
}

/* What running the cases of one candidate came to. */
struct vrun {
	int nondeterministic;     /* a rerun of the mismatched call gave other outputs */
	int r;                    /* the session's last result (LEAP_SESS_*) */
	int overrun;              /* the parameter whose guard a call damaged, or -1 */
	int64_t overrun_at;       /* where, from the buffer's start (damage_at) */
	struct leap_errstats es;
	size_t passed;            /* cases passed */
	json_t *mismatch;         /* the first mismatch, or NULL */
	struct leap_buf msg;
	int phase_case, phase_trial; /* where the run was last, -1 while loading */
	double run_ms;            /* the candidate's own time in its calls */
	double bound_s;           /* > 0: the call ran past this bound (call_bound) */
	double ref_s;             /* then: the reference's time on that case */
};

#define RERUNS 3 /* reruns of a mismatched call, to tell a race from a steady bug */

/* The longest one call of case ci may take, in seconds (0: no bound of its own): o.slow times
 * the reference's time on the same case plus o.slow_floor, and for the first call its
 * backend's first_call_s more. A call past it would hold the pipeline (the timing
 * lock, and every record behind it in the output's order) for nothing an honest kernel needs:
 * the reference is the plainest code of the task, timed in this process on the same inputs. */
static double call_bound(const struct leap_verifier *v, const struct leap_vcache *vc, size_t ci, enum leap_backend b,
			 int first)
{
	if (v->o.slow <= 0)
		return 0;
	double bound = v->o.slow * vc->ref_s[ci] + v->o.slow_floor;
	return bound + (first ? leap_backend_of(b)->first_call_s : 0);
}

/* The longest the candidate's load may take (its constructors and static initializers run
 * then), in seconds (0: no bound of its own): o.slow_floor, and its backend's first_call_s
 * more (cuda: its module's registration). Honest code does no work there; a load that
 * sleeps or spins holds its record, and every record behind it, as a slow call would. */
static double load_bound(const struct leap_verifier *v, enum leap_backend b)
{
	if (v->o.slow <= 0)
		return 0;
	return v->o.slow_floor + leap_backend_of(b)->first_call_s;
}

/* Runs one call of case d (slot 0, staged) in s within `bound` seconds (call_bound; the
 * session's own deadline still holds): past it, the call is a timeout and vr->bound_s says
 * which bound it ran past. Returns an enum leap_sess. */
static int bounded_call(struct leap_session *s, const struct leap_case_data *d, double bound, struct vrun *vr,
			struct leap_block *bt)
{
	uint32_t slot = 0;
	double deadline = s->sb.deadline, end = leap_now() + bound;
	int tight = bound > 0 && end < deadline;
	if (tight)
		s->sb.deadline = end;
	int r = leap_session_block(s, d, &slot, 1, LEAP_RUN_OP_CALL, bt);
	s->sb.deadline = deadline;
	if (r == LEAP_SESS_TIMEOUT && tight)
		vr->bound_s = bound;
	return r;
}

/* Takes the cpu timing lock shared for one call of a cpu candidate (tlock.h), so that leap-bench
 * waits for one call at most, never for a whole record, and gets in between two calls. The time
 * waited for it is leap-bench's, not the candidate's: it moves the session's deadline. Returns
 * the descriptor for leap_timing_unshare (-1: none). */
static int share_call(const struct leap_verifier *v, struct leap_session *s, enum leap_backend b)
{
	double t0 = leap_now();
	int fd = leap_timing_share(v->o.cache, leap_backend_has(b, LEAP_BK_HOST));
	s->sb.deadline += leap_now() - t0;
	return fd;
}

/* A mismatch message without its "Wrong output in case 2 (rows=7, cols=33): ", which the
 * sentence around it says once. */
static const char *after_case(const char *m)
{
	const char *colon = strncmp(m, "Wrong output in case ", 21) ? NULL : strstr(m, "): ");
	return colon ? colon + 3 : m;
}

/* The output bytes (out and in-out buffers) of slot 0, appended to b. */
static void outputs_of(const struct leap_session *s, const struct leap_case_data *d, struct leap_buf *b)
{
	for (size_t p = 0; p < d->t->nparams; p++)
		if (d->rp[p].kind == LEAP_RUN_K_OUT || d->rp[p].kind == LEAP_RUN_K_INOUT)
			leap_buf_add(b, (const char *)s->arena + d->out[p], (size_t)d->rp[p].bytes);
}

/* After a mismatch on input set k of case d: runs the same call on the same inputs again, up
 * to RERUNS times, until the outputs differ from the first run's. A race (threads sharing a
 * scratch buffer) looks like a plain mismatch on one case and passes on another run; a
 * steady bug gives the same bytes every time. When they differ, says so in vr->msg before
 * the first run's words, and what the other run gave. A failed rerun ends the reruns and
 * changes no verdict: the first run's stands. */
static void rerun_mismatch(struct leap_session *s, const struct leap_case_data *d, uint32_t k, double bound,
			   struct vrun *vr, const char *first)
{
	struct leap_buf was = {0}, now = {0};
	outputs_of(s, d, &was);
	char *again = NULL;
	int differ = 0;
	for (int r = 0; r < RERUNS && !differ; r++) {
		leap_session_stage(s, d, k, 0);
		struct leap_block bt;
		struct vrun past = {.bound_s = 0}; /* a rerun past the bound changes no verdict */
		if (bounded_call(s, d, bound, &past, &bt) != LEAP_SESS_OK || leap_session_guards(s, d, 0) >= 0)
			break;
		leap_buf_reset(&now);
		outputs_of(s, d, &now);
		differ = now.len != was.len || memcmp(now.s, was.s, now.len);
		if (differ) {
			struct leap_errstats es = {0, 0};
			json_decref(leap_case_check(d, k, 0, s->arena, 1, &es, &again));
		}
	}
	if (differ) {
		vr->nondeterministic = 1;
		leap_buf_addf(&vr->msg, "Nondeterministic: two runs of case %zu (%s), trial %u, on the same inputs gave "
					"different outputs; a data race (threads sharing a scratch buffer, or writing the "
					"same element) is the usual cause. First run: %s Another run: %s",
			      d->index + 1, d->desc, k + 1, after_case(first),
			      again ? after_case(again) : "every element was right.");
	} else {
		leap_buf_adds(&vr->msg, first);
	}
	free(again);
	leap_buf_free(&was);
	leap_buf_free(&now);
}

/* Appends which cases passed before the one that failed (they run in order, and the first
 * failure ends the run): " Case 1 (rows=1, cols=2) passed; the later ones were not run." */
static void add_passed(struct leap_buf *msg, const struct leap_vcache *vc, size_t passed)
{
	if (!passed)
		return;
	leap_buf_adds(msg, passed == 1 ? " Case " : " Cases ");
	for (size_t i = 0; i < passed && i < 6; i++)
		leap_buf_addf(msg, "%s%zu (%s)", !i ? "" : i + 1 == passed ? " and " : ", ", i + 1, vc->cd[i].desc);
	if (passed > 6)
		leap_buf_addf(msg, " and %zu more", passed - 6);
	leap_buf_addf(msg, " passed before it%s", passed + 1 < vc->ncases ? "; the later ones were not run." : ".");
}

/* Trial k of case ci in session s: staged, called within its bound, its guards and outputs
 * checked (a mismatch rerun). */
static void one_call(const struct leap_verifier *v, const struct leap_vcache *vc, size_t ci, int k, enum leap_backend b,
		     struct leap_session *s, struct vrun *vr)
{
	struct leap_case_data *d = &vc->cd[ci];
	double bound = call_bound(v, vc, ci, b, ci == 0 && k == 0);
	leap_session_layout(s, d);
	leap_session_stage(s, d, (uint32_t)k, 0);
	struct leap_block bt;
	vr->r = bounded_call(s, d, bound, vr, &bt);
	vr->ref_s = vc->ref_s[ci];
	if (vr->r != LEAP_SESS_OK)
		return;
	vr->run_ms += bt.ms;
	if ((vr->overrun = leap_session_guards(s, d, 0)) >= 0) {
		vr->overrun_at = damage_at(s, d, (size_t)vr->overrun); /* the arena ends with the session */
		return;
	}
	char *m = NULL;
	vr->mismatch = leap_case_check(d, (uint32_t)k, 0, s->arena, 1, &vr->es, &m);
	if (vr->mismatch) {
		rerun_mismatch(s, d, (uint32_t)k, bound, vr, m);
		free(m);
	}
}

/* Runs every case and trial in session s until the first mismatch, damaged guard or failure,
 * holding the timing lock shared for one call at a time (share_call). */
static void run_cases(const struct leap_verifier *v, const struct leap_vcache *vc, enum leap_backend b,
		      struct leap_session *s, struct vrun *vr)
{
	for (size_t ci = 0; ci < vc->ncases && vr->r == LEAP_SESS_OK && !vr->mismatch; ci++) {
		const struct leap_case_data *d = &vc->cd[ci];
		for (int k = 0; k < v->o.trials && k < (int)d->nsets && vr->r == LEAP_SESS_OK && !vr->mismatch && vr->overrun < 0;
		     k++) {
			vr->phase_case = (int)ci;
			vr->phase_trial = k;
			int tl = share_call(v, s, b);
			one_call(v, vc, ci, k, b, s, vr);
			leap_timing_unshare(tl);
		}
		if (vr->r == LEAP_SESS_OK && !vr->mismatch && vr->overrun < 0)
			vr->passed++;
		if (vr->overrun >= 0)
			break;
	}
}

/* For a LEAP_RUN_HEAP reply (runner/heap.c): its words and where the block was allocated
 * added to msg, and the verify.heap object {line, function} (NULL when the allocating call is
 * not a line of the candidate's code). Forgeable like a crash report: only ever a failure. */
static json_t *heap_place(const struct leap_run_reply *last, enum leap_backend b, const char *artifact,
			  const char *where, struct leap_buf *msg)
{
	leap_buf_addf(msg, "Your code %s", last->msg);
	char *func = NULL;
	long line = last->code > 0 ? leap_crash_line(artifact, (uint64_t)last->code - 1, leap_compile_source_name(b),
						      &func)
				   : 0;
	json_t *o = NULL;
	if (line > 0) {
		leap_buf_addf(msg, " at line %ld of your code", line);
		if (func)
			leap_buf_addf(msg, " (in %s)", func);
		o = json_pack("{s:I}", "line", (json_int_t)line);
		if (func)
			json_object_set_new(o, "function", json_string(func));
	}
	free(func);
	leap_buf_addf(msg, "%s. A write past the end of a block corrupts the heap even where it does no visible harm: "
			   "check the block's size and every index into it.", where);
	return o;
}

/* The runner's "no device" in the words of what is missing: CUDA says "CUDA driver version is
 * insufficient for CUDA runtime version" where there is no NVIDIA driver at all, which reads
 * as a version to upgrade. Without libcuda.so.1 the machine has no NVIDIA GPU leap can use;
 * with it and no device, CUDA sees none. A driver that is really too old is leap_gpu's check. */
static void no_device_words(struct leap_buf *msg, const char *runner_msg)
{
	if (!strstr(runner_msg, "no CUDA device available")) {
		leap_buf_adds(msg, runner_msg);
		return;
	}
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		dlclose(h);
	if (!h)
		leap_buf_adds(msg, "no NVIDIA GPU: this machine has no NVIDIA driver (libcuda.so.1 cannot be loaded)");
	else if (strstr(runner_msg, "zero devices") || strstr(runner_msg, "no CUDA-capable device"))
		leap_buf_adds(msg, "no NVIDIA GPU: the driver is installed, but CUDA sees no device (check "
				   "CUDA_VISIBLE_DEVICES and nvidia-smi)");
	else
		leap_buf_adds(msg, runner_msg);
}

/* The status of a runner's reply that is not a result, its words added to msg (and, for a
 * write past a block of the code's own, the place in *heap). */
static const char *reply_status(const struct leap_run_reply *last, enum leap_backend b, const char *artifact,
				const char *where, struct leap_buf *msg, json_t **heap)
{
	switch (last->status) {
	case LEAP_RUN_NO_DEVICE:
		leap_buf_adds(msg, "Not verified: ");
		no_device_words(msg, last->msg);
		leap_buf_adds(msg, ".");
		return "no_device";
	case LEAP_RUN_LOAD:
	case LEAP_RUN_ABI:
		leap_buf_addf(msg, "The compiled code could not be used: %s.", last->msg);
		return "runtime_error";
	case LEAP_RUN_CALL:
	case LEAP_RUN_DEVICE:
		leap_buf_addf(msg, "Runtime error%s: %s", where, last->msg);
		if (leap_backend_of(b)->flags & LEAP_BK_KERNELS)
			kernels_named(msg, artifact);
		leap_buf_adds(msg, ".");
		return "runtime_error";
	case LEAP_RUN_HEAP: /* runner/heap.c */
		*heap = heap_place(last, b, artifact, where, msg);
		return "runtime_error";
	case LEAP_RUN_FORGED: /* lib/sandbox/session.c: the code wrote on the harness's reply descriptor */
		leap_buf_addf(msg, "Runtime error%s: %s (your code wrote on the harness's descriptors).", where, last->msg);
		return "runtime_error";
	default:
		leap_buf_addf(msg, "The harness failed%s: %s (the code may have damaged it).", where, last->msg);
		return "runtime_error";
	}
}

/* The status of a runner that died or ran out of time, its words (and the denied system call
 * or the crash's place, into *denied and *crash) added to vr->msg. Takes `why`. */
static const char *death_status(const struct leap_verifier *v, const struct leap_session *s, enum leap_backend b,
				const char *artifact, const char *where, char *why, int timeout, struct vrun *vr,
				char **denied, json_t **crash)
{
	if (timeout && vr->bound_s > 0 && vr->phase_case < 0) {
		leap_buf_addf(&vr->msg, "Your code took longer than %.3g s to load (its constructors and static "
				 "initializers run then): the bound on loading is %g s.", vr->bound_s, vr->bound_s);
		free(why);
		return "timeout";
	}
	if (timeout && vr->bound_s > 0) {
		leap_buf_addf(&vr->msg, "Your code's call took longer than %.3g s%s: the bound on one call is %g times "
				 "the reference's time on the same case (%.3g ms) plus %g s.", vr->bound_s, where, v->o.slow,
			      vr->ref_s * 1e3, v->o.slow_floor);
		free(why);
		return "timeout";
	}
	if (timeout) {
		leap_buf_addf(&vr->msg, "Your code %s%s: the limit is %g s.", why ? why : "timed out", where,
			      v->o.sb.timeout);
		free(why);
		return "timeout";
	}
	leap_buf_addf(&vr->msg, "Your code %s", why ? why : "died");
	free(why);
	*denied = denied_call(s, &vr->msg);
	struct leap_buf after = {0};
	*crash = crash_place(s, b, artifact, &vr->msg, &after);
	leap_buf_addf(&vr->msg, "%s.", where);
	if (after.len)
		leap_buf_add(&vr->msg, after.s, after.len);
	leap_buf_free(&after);
	return "runtime_error";
}

struct leap_session_host leap_verifier_host(struct leap_verifier *v)
{
	return (struct leap_session_host){v->o.libexec, &v->env, &v->o.sb, &v->gpu, v->o.device};
}

json_t *leap_verify_artifact(struct leap_verifier *v, const struct leap_task *t, enum leap_backend b,
			     const char *artifact, uint64_t seed, enum leap_status *st, char **err)
{
	struct leap_vcache *vc = leap_verify_cases(v, t, seed, err);
	if (!vc)
		return NULL;
	double t0 = leap_now(); /* verify.ms: the candidate's verification, not the preparation */
	int trials = v->o.trials;
	struct leap_session s;
	struct leap_session_opts so = {0};
	for (size_t ci = 0; ci < vc->ncases; ci++) /* the drawn cases too: one may need more room than any listed */
		leap_session_fit(&so, &vc->cd[ci], 1);
	so.lock_cache = v->o.cache; /* cuda: the GPU's lock, shared: never while leap-bench times on it */
	struct vrun vr = {.overrun = -1, .phase_case = -1, .phase_trial = -1};
	struct leap_session_host host = leap_verifier_host(v);
	so.load_s = load_bound(v, b);
	double opened = leap_now();
	vr.r = leap_session_open(&host, &s, b, artifact, &so, err);
	if (vr.r < 0)
		return NULL;
	if (vr.r == LEAP_SESS_TIMEOUT && so.load_s > 0 && leap_now() - opened < v->o.sb.timeout)
		vr.bound_s = so.load_s; /* the load's bound, not the record's deadline */
	if (vr.r == LEAP_SESS_OK)
		run_cases(v, vc, b, &s, &vr);
	char *why = NULL, *denied = NULL;
	int timeout = 0;
	struct leap_buf output = {0};
	struct leap_run_reply last = s.last;
	leap_session_end(&s, &why, &timeout, &output, MAX_OUTPUT);
	/* the harness's or the machine's faults, never a verdict on the candidate: a runner that
	 * never ran (one that cannot be executed, the process limit of the sandbox user reached
	 * at execve...); one that could not set up (its hello: before the candidate's code) was
	 * leap_session_open's -1 */
	char *fault = leap_sandbox_start_error(&s.sb);
	if (fault) {
		*err = fault;
		free(why);
		json_decref(vr.mismatch);
		leap_buf_free(&vr.msg);
		leap_buf_free(&output);
		return NULL;
	}
	char where[160] = " while loading";
	if (vr.phase_case >= 0)
		snprintf(where, sizeof where, " in case %d (%s), trial %d", vr.phase_case + 1, vc->cd[vr.phase_case].desc,
			 vr.phase_trial + 1);
	const char *status = vr.mismatch ? "mismatch" : "pass";
	json_t *crash = NULL, *heap = NULL;
	if (vr.overrun >= 0) {
		status = "runtime_error";
		leap_buf_addf(&vr.msg, "Your code wrote outside the bounds of buffer %s%s, at ", t->params[vr.overrun].name,
			      where);
		place_words(&vr.msg, &vc->cd[vr.phase_case], (size_t)vr.overrun, vr.overrun_at);
		leap_buf_adds(&vr.msg, ".");
	} else if (vr.r == LEAP_SESS_REPLY) {
		status = reply_status(&last, b, artifact, where, &vr.msg, &heap);
	} else if (vr.r == LEAP_SESS_DIED || vr.r == LEAP_SESS_TIMEOUT) {
		status = death_status(v, &s, b, artifact, where, why, timeout, &vr, &denied, &crash);
		if (!timeout && vr.phase_case >= 0)
			guard_place(&s, &vc->cd[vr.phase_case], &vr.msg, &crash);
		why = NULL;
	} else if (vr.mismatch) {
		add_passed(&vr.msg, vc, vr.passed);
	} else {
		if (vc->ndrawn > vc->nrandom)
			leap_buf_addf(&vr.msg,
				      "All %zu cases passed (%zu listed, %zu of random sizes, %zu of every remainder of %s "
				      "modulo %lld; %d trials each, one for each remainder).",
				      vr.passed, t->ncases, vc->nrandom, vc->ndrawn - vc->nrandom,
				      t->params[t->residue_param].name, (long long)t->residue_mod, trials);
		else if (vc->ndrawn)
			leap_buf_addf(&vr.msg, "All %zu cases passed (%zu listed, %zu of random sizes; %d trials each).",
				      vr.passed, t->ncases, vc->ndrawn, trials);
		else
			leap_buf_addf(&vr.msg, "All %zu cases passed (%d trials each).", vr.passed, trials);
	}
	free(why);
	json_t *result = verdict(status, seed, vr.passed, trials, &vr.es, vr.mismatch, t0, vr.msg.s ? vr.msg.s : "",
				 &output);
	json_object_set_new(result, "run_ms", json_real(vr.run_ms));
	if (crash)
		json_object_set_new(result, "crash", crash);
	if (heap)
		json_object_set_new(result, "heap", heap);
	if (vr.nondeterministic)
		json_object_set_new(result, "nondeterministic", json_true());
	if (denied)
		json_object_set_new(result, "denied_syscall", json_string(denied));
	if (s.sb.mem_hit)
		json_object_set_new(result, "memory_limit", json_integer((json_int_t)s.sb.mem_limit));
	free(denied);
	if (vc->nrandom)
		json_object_set_new(result, "drawn", leap_verify_drawn_json(vc));
	*st = record_status(status);
	leap_buf_free(&vr.msg);
	leap_buf_free(&output);
	return result;
}

void leap_verify_setup(struct leap_verify_opts *o, const char *cache, const char *tasks_dir,
			 struct leap_unseen_set *h)
{
	if (!o->sb.nproc) { /* room for a thread per CPU (OpenMP) and then some */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o->sb.nproc = n > 64 ? 4 * n : 256;
	}
	o->libexec = leap_libexec_dir();
	if (!o->libexec)
		leap_die("cannot find the runner leap-run-cpu (set LEAP_LIBEXEC to its directory)");
	o->cache = cache ? xstrdup(cache) : leap_cache_dir();
	if (!o->cache)
		leap_die("no cache directory: use --cache DIR or set LEAP_CACHE (no HOME, no home directory)");
	/* The candidate must not find the references: one policy for every program (unseen.c). */
	h->paths = leap_unseen(o->cache, tasks_dir, LEAP_UNSEEN_RUNNER, &h->n);
	o->sb.hide = (const char *const *)h->paths;
	o->sb.nhide = h->n;
	leap_unseen_root(&h->root, h->paths, h->n);
	o->sb.root = &h->root;
}

