/* session.c - the referee's side of one runner child: shared regions, blocks of calls timed on
 * the referee's clock, freezing between blocks (see session.h and runproto.h). */
/*
 * What a session is, is session.h's comment; the trust rules are runproto.h's. Here they become
 * code: the regions are memfds this process makes and seals (regions.c), sized for the largest case and
 * reusable from record to record (struct leap_regions), so that a record maps memory that is
 * already there; a reply is believed only as far as its moment allows (after the load, a
 * set-up status such as "no device" is the candidate's forgery, unforge, and its message is
 * cut to printable ASCII); and every wait on the runner ends at the sandbox's deadline. The
 * device locks live here because a session is what holds a device.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The runner's first message, then the candidate:
 *
 * The runner starts in two steps (`runner/run.c`: `setup`, then `load`; `lib/sandbox/session.c`:
 * `read_hello`, `load`). Its trusted set-up (the device, the shared regions, the guard pages on
 * cpu, device memory on cuda -- the owner sends its client's regions to leap as file
 * descriptors, a client imports the owner's --, closing the regions' and device memory's
 * descriptors, the system-call filter) ends in a first message, the hello, sent before any
 * candidate code is in the process; only then, on leap's word (and, on cuda, once leap holds
 * the device's lock), does it load the artifact, whose constructors run there, and answer
 * again. Only the hello can say that the machine failed:
 *
 * Stops:
 * - Forged set-up replies. Any reply after the hello that claims "no device" or "no memory" (or
 *   a status the runner never sends) was written by the candidate: it is the candidate's
 *   `runtime_error` with the claim quoted, never leap's error nor `no_device`, in leap-verify
 *   and while timed in leap-bench -- security.bats "verify: a set-up reply forged after the
 *   code loaded is the candidate's runtime error, its claim quoted" (forge_setup.c, a wrong
 *   kernel whose constructor writes a reply of each kind before the runner's own: no device, no
 *   memory, an overrun, a malformed command, an unknown status, a false "loaded", a false load
 *   failure), "bench: a 'no device' or 'no memory' forged while timed fails the record
 *   (runtime_error)".
 * - A runner's set-up failure taken for a verdict. A hello that says the set-up failed, or a
 *   runner that dies or runs out of time before its hello, is leap's error record (exit status
 *   1), never a verdict on the candidate, and on the cpu backend "no device" is no verdict
 *   either -- "a hello that says the runner's set-up failed, or no hello, is leap's error, not
 *   a verdict (on cpu, also 'no device')" (hello_runner.c stands in for the runner, and a
 *   runner that exits at once).
 *
 * Does not stop: the candidate's own words after its load (the crash report, a forged "done", a
 * message of its choosing): quoted, they decide nothing.
 *
 * Device memory between leap-bench's owner and client:
 *
 * The client's regions are the owner's device memory, made with `cuMemCreate` for POSIX file
 * descriptor handles and exported (`cuMemExportToShareableHandle`): only those two allocations
 * are shared, never a block the owner's other memory was carved from, as legacy CUDA IPC
 * handles of `cudaMalloc` memory would (and those do not open across the PID namespaces owner
 * and client run in). The owner sends the two descriptors to leap (`SCM_RIGHTS`, on a socket it
 * holds only during its set-up) before its hello; leap keeps them with the owner's session
 * (close-on-exec) and hands them to each client it starts, which imports, maps and closes them
 * before its hello: the candidate's code never holds a descriptor of device memory, and cannot
 * map the regions anew -- tests/cuda.bats "device memory by descriptor: an owner's two
 * descriptors reach leap and, inherited, every client, cleared first" (memfds stand in for the
 * exported memory; the passing is lib/sandbox/runproto.c's, which the runner uses), check-gpu "owner
 * and client share device memory by descriptor: every bench record timed" (on a GPU). Does not
 * stop: the client's candidate reads and writes the whole of both allocations (all of a case's
 * slots, as before).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/gpu.h"
#include "session.h"
#include "core/sig.h"
#include "referee/tlock.h"
#include "core/util.h"
#include "core/banned.h"

/*
 * Why the clock is here: the runner's process holds candidate code, which can patch the
 * runner's clock or speak the protocol itself with made-up numbers. The only times leap-bench
 * uses are taken in this process, around the whole exchange: from before the candidate is
 * thawed and the go token is written, to after the done reply is read and the candidate is
 * frozen again. Work the candidate leaves running after "done" (a thread, a child in another
 * session) either finishes inside that window, and is counted, or is stopped by the freeze
 * before it can finish the outputs, which are then wrong when this process reads them. The
 * kernel's CPU accounting of the candidate's group must not move while it is frozen: if it
 * does, the freezer did not hold and the timing is refused.
 */

/* How long a freeze may take before the child counts as unfreezable. A freeze waits for every
 * task of the group to be scheduled into the freezer; on a loaded machine (CI's 2 cores beside
 * other work) that took more than 2 s, and an honest kernel's record came out "Not timed". */
#define FREEZE_TIMEOUT 10.0

void leap_session_fit(struct leap_session_opts *o, const struct leap_case_data *d, uint32_t calls)
{
	uint64_t in_len = 0, out_len = 0;
	uint32_t np = (uint32_t)d->t->nparams;
	if (calls < d->arena_sets) /* a block may call every slot of the case once */
		calls = d->arena_sets;
	leap_run_layout2(d->rp, np, d->arena_sets, NULL, NULL, NULL, &in_len, &out_len);
	if (in_len > o->in_cap)
		o->in_cap = in_len;
	if (out_len > o->out_cap)
		o->out_cap = out_len;
	if (np > o->nparams)
		o->nparams = np;
	if (calls > o->calls)
		o->calls = calls;
	if (d->arena_sets > o->nslots)
		o->nslots = d->arena_sets;
}

/* 1 when a reply with `status` may come from the runner once candidate code may have run:
 * the load reply's and a block's statuses. The set-up statuses (no device, no memory) come
 * only in the hello, from the runner's own code; OVERRUN is the referee's finding, never sent. */
static int after_load(int32_t status)
{
	switch (status) {
	case LEAP_RUN_OK:
	case LEAP_RUN_LOAD:
	case LEAP_RUN_ABI:
	case LEAP_RUN_CALL:
	case LEAP_RUN_DEVICE:
	case LEAP_RUN_PROTO:
	case LEAP_RUN_CRASH:
	case LEAP_RUN_HEAP:
		return 1;
	default:
		return 0;
	}
}

/* A reply after the load that claims what only the trusted set-up may say is the candidate's
 * (its constructor or its calls wrote onto the reply descriptor): it becomes LEAP_RUN_FORGED,
 * its message quoting the claim, so that no caller reads it as the machine's fault. */
static void unforge(struct leap_run_reply *r)
{
	char claim[100]; /* with the words around it, the whole claim fits the message */
	size_t n = 0;
	for (const char *p = r->msg; *p && n < sizeof claim - 1; p++)
		claim[n++] = *p == '"' ? '\'' : *p;
	claim[n] = 0;
	int was = r->status;
	r->status = LEAP_RUN_FORGED;
	r->call = 0;
	snprintf(r->msg, sizeof r->msg, "a reply claiming %s (\"%s\") came after the code was loaded; only the "
		 "harness's set-up sends that", was == LEAP_RUN_NO_DEVICE ? "no device" : was == LEAP_RUN_NOMEM ?
		 "no memory" : "a status the runner never sends", claim);
}

/* Keeps only printable ASCII of a reply's message (NUL-terminating it): after the load the
 * message is the candidate's to write, and it reaches the record's JSON (which must stay
 * valid UTF-8) and a model's prompt (which needs no control bytes). */
static void clean_msg(char *m, size_t n)
{
	m[n - 1] = 0;
	for (char *p = m; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

/* Reads one reply into s->last; returns an enum leap_sess. */
static int read_reply(struct leap_session *s)
{
	int r = leap_sandbox_read(&s->sb, &s->last, sizeof s->last);
	if (r == -2) {
		s->dead = 1;
		return LEAP_SESS_TIMEOUT;
	}
	if (r || s->last.magic != LEAP_RUN_MAGIC) {
		s->dead = 1;
		return LEAP_SESS_DIED;
	}
	clean_msg(s->last.msg, sizeof s->last.msg);
	if (s->loaded && !after_load(s->last.status)) {
		unforge(&s->last);
		s->dead = 1;
		return LEAP_SESS_REPLY;
	}
	if (s->last.status == LEAP_RUN_CRASH) { /* its last word before dying (runner/fault.c) */
		s->crash = s->last;
		s->dead = 1;
		/* Wait (up to 2 s) for the death itself, the reply pipe closing, so that the wait
		 * status and not this report says how the runner ended. */
		double deadline = s->sb.deadline, soon = leap_now() + 2;
		if (soon < deadline)
			s->sb.deadline = soon;
		char c;
		if (leap_sandbox_read(&s->sb, &c, 1) == -2 && soon < deadline)
			s->sb.timed_out = 0; /* this wait's end, not the candidate's deadline */
		s->sb.deadline = deadline;
		return LEAP_SESS_DIED;
	}
	return s->last.status == LEAP_RUN_OK ? LEAP_SESS_OK : LEAP_SESS_REPLY;
}

/* read_reply with the session's deadline tightened to `secs` from now (secs > 0), for the
 * replies of the runner's start-up (the hello, then the load): honest start-ups take a small,
 * known time, and the sandbox's deadline is for the whole session. */
static int read_reply_within(struct leap_session *s, double secs)
{
	double deadline = s->sb.deadline;
	if (secs > 0 && leap_now() + secs < deadline)
		s->sb.deadline = leap_now() + secs;
	int r = read_reply(s);
	s->sb.deadline = deadline;
	return r;
}

/* Freezes the child and remembers its CPU time then. Returns an enum leap_sess. */
static int freeze(struct leap_session *s)
{
	int r = leap_sandbox_freeze(&s->sb, FREEZE_TIMEOUT);
	if (r) {
		snprintf(s->last.msg, sizeof s->last.msg, "its processes could not be frozen within %g s", FREEZE_TIMEOUT);
		s->dead = 1;
		return LEAP_SESS_FREEZE;
	}
	s->has_usage = leap_sandbox_usage(&s->sb, &s->frozen_usage) == 0;
	return LEAP_SESS_OK;
}

/* The hello: the runner's first reply, sent by its own code before any candidate code loads
 * (runproto.h). Anything but OK is a set-up failure and the harness's or the machine's, never
 * the candidate's: -1 with *err (the session ended), except no device on a device backend
 * (cuda), which is the
 * no_device verdict (LEAP_SESS_REPLY). Returns LEAP_SESS_OK, LEAP_SESS_REPLY or -1. */
static int read_hello(struct leap_session *s, int dev, int handles, char **err)
{
	int r = read_reply_within(s, s->hello_s);
	s->hello = s->last;
	/* an owner sent its client regions before the hello, so they are there now (no wait) */
	if (r == LEAP_SESS_OK && handles >= 0 && leap_run_recv_fds(handles, s->dev_fd, 2, 1)) {
		*err = xasprintf("the baseline's runner did not send the candidate's device memory before its hello: %s",
				 strerror(errno));
		s->dev_fd[0] = s->dev_fd[1] = -1;
		leap_session_end(s, NULL, NULL, NULL, 0);
		return -1;
	}
	if (r == LEAP_SESS_OK)
		return r;
	if (r == LEAP_SESS_REPLY && dev && s->last.status == LEAP_RUN_NO_DEVICE) {
		s->dead = 1;
		return r;
	}
	int timed_out = s->sb.timed_out;
	struct leap_run_reply last = s->last;
	leap_session_end(s, NULL, NULL, NULL, 0);
	*err = leap_sandbox_start_error(&s->sb);
	if (*err)
		return -1;
	if (r == LEAP_SESS_REPLY)
		*err = xasprintf("the runner could not set up (before loading the code): %s", last.msg);
	else if (timed_out)
		*err = xstrdup("the runner did not finish its set-up in time (before loading the code)");
	else if (WIFSIGNALED(s->status))
		*err = xasprintf("the runner was killed by signal %d (%s) before loading the code", WTERMSIG(s->status),
				 strsignal(WTERMSIG(s->status)));
	else
		*err = xasprintf("the runner ended (status %d) before loading the code",
				 WIFEXITED(s->status) ? WEXITSTATUS(s->status) : -1);
	return -1;
}

/* Has the runner load the artifact (the candidate's constructors run now) and reads the load
 * reply. From here on every reply may be forged (read_reply). Returns an enum leap_sess. */
static int load(struct leap_session *s)
{
	struct leap_run_go g = {LEAP_RUN_MAGIC, LEAP_RUN_OP_LOAD, 0};
	s->loaded = 1;
	int r = leap_sandbox_write(&s->sb, &g, sizeof g);
	if (r) {
		s->dead = 1;
		return r == -2 ? LEAP_SESS_TIMEOUT : LEAP_SESS_DIED;
	}
	/* the constructors' time is bounded as the hello's, or as the caller says */
	r = read_reply_within(s, s->load_s > 0 ? s->load_s : s->hello_s);
	if (r == LEAP_SESS_OK && s->last.seq != 0) {
		s->dead = 1;
		return LEAP_SESS_DIED;
	}
	return r;
}

/* Fills the client regions an owner shares, whole allocations, with the canary before a new
 * client imports them: nothing one candidate left in device memory reaches the next, and a
 * guard one overran is whole again, so that a later candidate is not blamed for it. Returns 0,
 * or -1 with *err. */
static int clear_client(struct leap_session *owner, char **err)
{
	struct leap_run_xfer x[2];
	memset(x, 0, sizeof x);
	for (int i = 0; i < 2; i++) {
		x[i].src_space = LEAP_RUN_S_FILL;
		x[i].dst_space = i ? LEAP_RUN_S_CLIENT_OUT : LEAP_RUN_S_CLIENT_IN;
		x[i].len = owner->hello.dev_len[i];
		x[i].pattern[0] = LEAP_RUN_CANARY;
		x[i].elsize = 1;
	}
	if (leap_session_xfer(owner, x, 2, 0) != LEAP_SESS_OK) {
		*err = xasprintf("the baseline's runner could not clear the candidate's device regions: %s", owner->last.msg);
		return -1;
	}
	return 0;
}

/* The regions of a new session: the caller's (cleared of the last candidate's traces) or its
 * own. Returns 0, or -1 with *err. */
static int take_regions(struct leap_session *s, const struct leap_session_opts *o, char **err)
{
	if (o->regions) {
		s->rg = o->regions;
		leap_regions_clear(s->rg);
	} else if (leap_regions_make(&s->own, o, err)) {
		return -1;
	} else {
		s->rg = &s->own;
	}
	s->rg->laid = NULL; /* this session lays the guards and canaries out afresh */
	s->rg->used = 1;
	s->arena = s->rg->arena;
	s->sealed = s->rg->sealed;
	struct leap_run_ctl *c = s->rg->ctl;
	c->pool_len = o->pool_len;
	if (o->owner)
		memcpy(c->dev_len, o->owner->hello.dev_len, sizeof c->dev_len);
	return 0;
}

int leap_session_open(const struct leap_session_host *h, struct leap_session *s, enum leap_backend b,
		      const char *artifact, const struct leap_session_opts *o, char **err)
{
	memset(s, 0, sizeof *s);
	s->own.in_fd = s->own.out_fd = s->own.ctl_fd = -1;
	s->lock_fd = -1;
	s->dev_fd[0] = s->dev_fd[1] = -1;
	leap_child_init(&s->sb.child);
	s->sb.cmd_fd = s->sb.reply_fd = s->sb.log_fd = s->sb.ctl_fd = -1;
	const struct leap_backend_ops *be = leap_backend_of(b);
	int dev = !(be->flags & LEAP_BK_HOST); /* a device's backend (cuda): device memory, its lock */
	char *runner = xasprintf("%s/%s", h->libexec, be->runner);
	if (access(runner, X_OK)) {
		free(runner);
		if (!be->no_runner) {
			*err = xasprintf("the %s runner is missing from %s", be->name, h->libexec);
			return -1;
		}
		s->dead = 1;
		s->last.magic = LEAP_RUN_MAGIC;
		s->last.status = LEAP_RUN_NO_DEVICE;
		snprintf(s->last.msg, sizeof s->last.msg, "%s", be->no_runner);
		return LEAP_SESS_REPLY;
	}
	int art = open(artifact, O_RDONLY | O_CLOEXEC);
	if (art < 0) {
		*err = xasprintf("cannot open the artifact %s: %s", artifact, strerror(errno));
		free(runner);
		return -1;
	}
	int sock[2] = {-1, -1}, is_owner = dev && o->role && !strcmp(o->role, "owner");
	if (dev && o->owner && (o->owner->dev_fd[0] < 0 || o->owner->dev_fd[1] < 0)) {
		*err = xstrdup("the baseline's runner holds no device memory for the candidate");
		goto fail;
	}
	if ((dev && o->owner && clear_client(o->owner, err)) || take_regions(s, o, err))
		goto fail;
	if (is_owner && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock)) {
		*err = xasprintf("cannot create the socket for the baseline's device memory: %s", strerror(errno));
		goto fail;
	}
	struct leap_sandbox_opts so = o->sb ? *o->sb : *h->sb;
	leap_sandbox_fit_memory(&so, dev, s->rg->in_len + s->rg->out_len + s->rg->ctl_len);
	so.pidns_freeze = o->freeze == LEAP_FREEZE_SIGNALS;
	s->freeze = o->freeze;
	cpu_set_t mine;
	s->ncpus = so.cpus ? CPU_COUNT(so.cpus) : sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 1;
	/* The runner sees its own device alone (by UUID where known), as device 0: no other GPU
	 * gets a context from it, and no candidate can reach a neighbour's device. */
	char *visible = be->visible ? be->visible(h->gpu && h->gpu->done ? &h->gpu->g : NULL, h->device) : NULL;
	so.visible = visible;
	struct leap_runner_fds fds = {s->rg->in_fd, s->rg->out_fd, s->rg->ctl_fd, art, sock[1], {-1, -1}};
	if (dev && o->owner)
		memcpy(fds.dev, o->owner->dev_fd, sizeof fds.dev);
	int started = leap_sandbox_start(h->env, &s->sb, &so, runner, !dev ? "-" : visible ? "0" : h->device,
					 o->role ? o->role : "copy", &fds, err);
	free(visible);
	if (sock[1] >= 0)
		close(sock[1]);
	sock[1] = -1;
	if (started)
		goto fail;
	close(art);
	free(runner);
	s->hello_s = o->hello_s;
	s->load_s = o->load_s;
	int r = read_hello(s, dev, sock[0], err);
	s->hello_at = leap_now();
	if (sock[0] >= 0)
		close(sock[0]);
	if (r != LEAP_SESS_OK)
		return r;
	if (dev && o->lock_cache) { /* before the candidate's code runs: its constructors too */
		char *path = leap_device_lock_path(o->lock_cache, s->hello.uuid);
		s->lock_fd = leap_device_lock(path, LOCK_SH, NULL, NULL, err);
		free(path);
		if (s->lock_fd < 0) {
			leap_session_end(s, NULL, NULL, NULL, 0);
			return -1;
		}
	}
	r = load(s);
	if (r == LEAP_SESS_OK && s->freeze)
		r = freeze(s);
	return r;
fail:
	for (int i = 0; i < 2; i++)
		if (sock[i] >= 0)
			close(sock[i]);
	close(art);
	free(runner);
	leap_regions_free(&s->own);
	s->rg = NULL;
	s->arena = NULL;
	return -1;
}

/* 1 when the slots of parameter kind k are written by the candidate only where the referee
 * looks (OUT always; IN when the candidate could write it). */
static int guarded(const struct leap_session *s, uint32_t kind)
{
	return kind == LEAP_RUN_K_OUT || kind == LEAP_RUN_K_INOUT || (kind == LEAP_RUN_K_IN && !s->sealed);
}

void leap_session_layout(struct leap_session *s, const struct leap_case_data *d)
{
	if (s->rg->laid == d)
		return;
	size_t np = d->t->nparams;
	struct leap_regions *rg = s->rg;
	struct leap_run_range *g = (struct leap_run_range *)(rg->ctlmap + rg->guards_off);
	uint32_t n = 0;
	uint8_t canary = LEAP_RUN_CANARY;
	for (uint32_t sl = 0; sl < d->arena_sets && sl < rg->nslots && n + 2 * np <= rg->guards_cap; sl++)
		for (size_t p = 0; p < np; p++) {
			const struct leap_run_param *rp = &d->rp[p];
			if (rp->kind == LEAP_RUN_K_SCALAR)
				continue;
			size_t k = (size_t)sl * np + p;
			uint64_t off = rp->kind == LEAP_RUN_K_IN ? d->in[k] : d->out[k];
			struct leap_run_range r[4];
			leap_run_canary_ranges(off, rp->bytes, r);
			g[n++] = r[0];
			g[n++] = r[3];
			if (guarded(s, rp->kind))
				for (int i = 0; i < 4; i++)
					leap_fill(s->arena + r[i].off, r[i].len, &canary, 1);
		}
	rg->ctl->nguards = n;
	rg->ctl->guard_gen = ++rg->guard_gen;
	rg->laid = d;
}

void leap_session_stage(struct leap_session *s, const struct leap_case_data *d, uint32_t set, uint32_t slot)
{
	leap_case_upload(d, set, slot, s->arena);
	s->rg->in_written = 1;
	leap_case_poison(d, s->arena, slot);
}

void leap_session_derive(struct leap_session *s, const struct leap_case_data *d, const struct leap_case_recipe *r,
			 uint32_t n, uint32_t fresh_every, unsigned threads)
{
	leap_case_stage(d, s->arena, r, n, fresh_every, threads);
	s->rg->in_written = 1;
}

/* 1 when all n bytes at p hold the canary: the first does and each equals the next, which
 * memcmp (vectorised by libc) says a word at a time; the byte loop it replaces was a tenth of
 * leap-verify's CPU on a trivial kernel (bench/README.md section 3). */
static int all_canary(const unsigned char *p, uint64_t n)
{
	return n == 0 || (p[0] == LEAP_RUN_CANARY && !memcmp(p, p + 1, n - 1));
}

int leap_session_guards(const struct leap_session *s, const struct leap_case_data *d, uint32_t slot)
{
	size_t np = d->t->nparams;
	for (size_t p = 0; p < np; p++) {
		const struct leap_run_param *rp = &d->rp[p];
		if (rp->kind == LEAP_RUN_K_SCALAR || !guarded(s, rp->kind))
			continue;
		size_t k = (size_t)slot * np + p;
		struct leap_run_range r[4];
		leap_run_canary_ranges(rp->kind == LEAP_RUN_K_IN ? d->in[k] : d->out[k], rp->bytes, r);
		for (int i = 0; i < 4; i++)
			if (!all_canary(s->arena + r[i].off, r[i].len))
				return (int)p;
	}
	return -1;
}

/* Writes the call table of a block: row j holds the arguments of slot slots[j]. */
static void write_table(struct leap_session *s, const struct leap_case_data *d, const uint32_t *slots, uint32_t n)
{
	size_t np = d->t->nparams;
	const struct leap_regions *rg = s->rg;
	struct leap_run_arg *a = (struct leap_run_arg *)(rg->ctlmap + rg->table_off);
	for (uint32_t j = 0; j < n; j++)
		for (size_t p = 0; p < np; p++) {
			const struct leap_run_param *rp = &d->rp[p];
			size_t k = (size_t)slots[j] * np + p;
			struct leap_run_arg *x = &a[(size_t)j * rg->nparams + p];
			memset(x, 0, sizeof *x);
			x->kind = rp->kind;
			if (rp->kind == LEAP_RUN_K_SCALAR) {
				memcpy(x->value, rp->value, 8);
			} else if (rp->kind == LEAP_RUN_K_IN) {
				x->region = LEAP_RUN_R_IN;
				x->off = d->in[k];
			} else {
				x->region = LEAP_RUN_R_OUT;
				x->off = d->out[k] - LEAP_RUN_OUT_BASE;
			}
			x->bytes = rp->bytes;
		}
}

/* The go token for the block now in the control page, then the reply to it. */
static int go(struct leap_session *s, uint32_t op)
{
	struct leap_run_go g = {LEAP_RUN_MAGIC, op, s->seq};
	int r = leap_sandbox_write(&s->sb, &g, sizeof g);
	if (r) {
		s->dead = 1;
		return r == -2 ? LEAP_SESS_TIMEOUT : LEAP_SESS_DIED;
	}
	r = read_reply(s);
	if (r == LEAP_SESS_OK && s->last.seq != s->seq) {
		s->dead = 1;
		return LEAP_SESS_DIED;
	}
	return r;
}

/* leap_session_usage_lag (session.h): a tick per CPU (10 ms, the slowest kernels tick at 100
 * Hz) at most, and standing still since. */
int leap_session_usage_lag(uint64_t frozen, uint64_t now, uint64_t later, long cpus)
{
	const uint64_t tick = 10000000;
	return now >= frozen && now - frozen <= tick * (uint64_t)(cpus > 0 ? cpus : 1) && later == now;
}

/* Whether usage u, more than the group's when it was frozen, is the kernel's accounting catching
 * up (leap_session_usage_lag, over the session's cores) rather than work done while frozen.
 * Watches the usage for two ticks at 100 Hz (20 ms), only when it moved. */
static int accounting_lag(struct leap_session *s, uint64_t u)
{
	struct timespec ts = {0, 20000000};
	uint64_t v;
	nanosleep(&ts, NULL);
	return leap_sandbox_usage(&s->sb, &v) == 0 && leap_session_usage_lag(s->frozen_usage, u, v, s->ncpus);
}

/* Checks that the frozen child did not run since it was frozen; *usage is its CPU time then
 * (the late tick included, when there was one). Before a timed window, never inside it: the
 * check may watch for 20 ms. */
static int held(struct leap_session *s, uint64_t *usage)
{
	uint64_t u = 0;
	if (s->has_usage && leap_sandbox_usage(&s->sb, &u) == 0 && u > s->frozen_usage + 1000000) {
		if (!accounting_lag(s, u)) {
			snprintf(s->last.msg, sizeof s->last.msg,
				 "its processes used %.3g ms of CPU while frozen: the freezer did not hold",
				 (double)(u - s->frozen_usage) / 1e6);
			s->dead = 1;
			return LEAP_SESS_FREEZE;
		}
		s->frozen_usage = u;
	}
	*usage = s->has_usage ? s->frozen_usage : 0;
	return LEAP_SESS_OK;
}

/* Thaws the held child. */
static int thaw_held(struct leap_session *s)
{
	if (leap_sandbox_thaw(&s->sb)) {
		snprintf(s->last.msg, sizeof s->last.msg, "its processes could not be thawed");
		s->dead = 1;
		return LEAP_SESS_FREEZE;
	}
	return LEAP_SESS_OK;
}

/* Thaws the child, checking first that it did not run while frozen. */
static int thaw(struct leap_session *s, uint64_t *usage)
{
	int r = held(s, usage);
	return r == LEAP_SESS_OK ? thaw_held(s) : r;
}

int leap_session_block(struct leap_session *s, const struct leap_case_data *d, const uint32_t *slots, uint32_t n,
		       uint32_t op, struct leap_block *bt)
{
	bt->ms = 0;
	bt->cpu_ms = bt->own_ms = bt->stall_ms = -1;
	if (s->dead)
		return LEAP_SESS_DIED;
	if (n > s->rg->calls || d->t->nparams > s->rg->nparams)
		return LEAP_SESS_DIED; /* a caller's bug: never a verdict */
	leap_session_layout(s, d);
	write_table(s, d, slots, n);
	struct leap_run_ctl *c = s->rg->ctl;
	c->seq = ++s->seq;
	c->op = op;
	c->ncalls = n;
	uint64_t u0 = 0, st0 = 0, st1 = 0;
	int r = s->freeze ? held(s, &u0) : LEAP_SESS_OK; /* its watch is not the block's time */
	if (r != LEAP_SESS_OK)
		return r;
	/* frozen processes wait for nothing: the stall read on either side of the window is the
	 * window's own */
	int stalls = s->freeze && leap_sandbox_stalled(&s->sb, &st0) == 0;
	double t0 = leap_now();
	if (s->freeze)
		r = thaw_held(s);
	if (r == LEAP_SESS_OK)
		r = go(s, op);
	if (r == LEAP_SESS_OK && s->freeze)
		r = freeze(s);
	double t1 = leap_now();
	if (r != LEAP_SESS_OK)
		return r;
	bt->ms = (t1 - t0) * 1e3;
	bt->own_ms = s->last.aux[0];
	if (s->freeze && s->has_usage)
		bt->cpu_ms = (double)(s->frozen_usage - u0) / 1e6;
	if (stalls && bt->cpu_ms >= 0 && leap_sandbox_stalled(&s->sb, &st1) == 0 && st1 >= st0)
		bt->stall_ms = leap_block_stall(bt->ms, bt->cpu_ms, (double)(st1 - st0) / 1e6);
	return LEAP_SESS_OK;
}

/* leap_block_stall (session.h): the kernel's count, within what the group's own CPU time
 * leaves possible. */
double leap_block_stall(double ms, double cpu_ms, double full_ms)
{
	double off = ms - cpu_ms; /* no more than the time in which none of its threads ran */
	if (off < 0)
		off = 0;
	return full_ms < off ? full_ms : off;
}

int leap_session_probe(struct leap_session *s, double *copy_gbs, double *gflops)
{
	if (s->dead)
		return LEAP_SESS_DIED;
	s->rg->ctl->seq = ++s->seq;
	s->rg->ctl->op = LEAP_RUN_OP_PROBE;
	s->rg->ctl->ncalls = 0;
	uint64_t u0;
	int r = s->freeze ? thaw(s, &u0) : LEAP_SESS_OK;
	if (r == LEAP_SESS_OK)
		r = go(s, LEAP_RUN_OP_PROBE);
	if (r == LEAP_SESS_OK && s->freeze)
		r = freeze(s);
	if (r != LEAP_SESS_OK)
		return r;
	*copy_gbs = s->last.aux[0];
	*gflops = s->last.aux[1];
	return LEAP_SESS_OK;
}

void leap_session_end(struct leap_session *s, char **why, int *timeout, struct leap_buf *log, size_t maxlog)
{
	int status = 0, killed = 0, timed_out = s->sb.timed_out;
	int was_dead = s->dead;
	if (s->sb.child.pid > 0 || s->sb.log_fd >= 0)
		leap_sandbox_end(&s->sb, was_dead && !timed_out && !s->sb.frozen, &status, &killed, log, maxlog);
	s->status = status;
	if (why)
		*why = NULL;
	if (timeout)
		*timeout = 0;
	if (was_dead && why) {
		if (timed_out) {
			*why = xstrdup("did not finish in time (an infinite loop, a deadlock, or far too slow?)");
			if (timeout)
				*timeout = 1;
		} else if (s->sb.mem_hit) { /* whichever process the kernel chose, the sandbox's memory ended it */
			*why = xasprintf("reached the memory limit of %llu MiB (the kernel ended it)",
					 (unsigned long long)(s->sb.mem_limit >> 20));
		} else if (killed || (WIFEXITED(status) && WEXITSTATUS(status) == LEAP_RUN_EXIT_LOST)) {
			*why = xstrdup("stopped answering the harness (it closed or overwrote the harness's descriptors?)");
		} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
			*why = xstrdup("used up its CPU-time limit (an infinite loop, or far too slow?)");
			if (timeout)
				*timeout = 1;
		} else {
			struct leap_buf b = {0};
			const char *d = leap_sandbox_describe(status, &b);
			*why = xstrdup(d);
			leap_buf_free(&b);
		}
	}
	leap_regions_free(&s->own);
	s->rg = NULL;
	s->arena = NULL;
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->lock_fd = -1;
	for (int i = 0; i < 2; i++) {
		if (s->dev_fd[i] >= 0)
			close(s->dev_fd[i]);
		s->dev_fd[i] = -1;
	}
}

int leap_session_xfer(struct leap_session *s, const struct leap_run_xfer *x, uint32_t n, int flush)
{
	if (s->dead)
		return LEAP_SESS_DIED;
	struct leap_regions *rg = s->rg;
	struct leap_run_ctl *c = rg->ctl;
	if ((uint64_t)n * sizeof *x > rg->table_cap)
		return LEAP_SESS_DIED; /* a caller's bug */
	memcpy(rg->ctlmap + rg->table_off, x, (size_t)n * sizeof *x);
	c->seq = ++s->seq;
	c->op = LEAP_RUN_OP_XFER;
	c->ncalls = n;
	rg->flags = (rg->flags & ~(uint32_t)LEAP_RUN_CTL_FLUSH_L2) | (flush ? LEAP_RUN_CTL_FLUSH_L2 : 0);
	c->flags = rg->flags;
	uint64_t u0;
	int r = s->freeze ? thaw(s, &u0) : LEAP_SESS_OK;
	if (r == LEAP_SESS_OK)
		r = go(s, LEAP_RUN_OP_XFER);
	if (r == LEAP_SESS_OK && s->freeze)
		r = freeze(s);
	return r;
}
