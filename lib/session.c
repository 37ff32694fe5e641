/* session.c - the referee's side of one runner child: shared regions, blocks of calls timed on
 * the referee's clock, freezing between blocks (see session.h and runproto.h). */
/*
 * What a session is, is session.h's comment; the trust rules are runproto.h's. Here they become
 * code: the regions are memfds this process makes and seals, sized for the largest case and
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
 * The runner starts in two steps (`runner/run.c`: `setup`, then `load`; `lib/session.c`:
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
 * The shared regions: sealed, leap's layout, cleared between records:
 *
 * A candidate's buffers are leap's shared memory: three memfds, IN (input slots), OUT (output
 * slots) and CTL (the control page, the call table, the guard list), mapped by leap and by the
 * runner whose process holds the candidate (`lib/session.c`: `leap_regions_make`,
 * `leap_regions_clear`). Issue 26 found that a candidate could turn them against leap itself.
 *
 * Stops:
 * - Resizing a region under leap's mapping. Every memfd is sealed against shrinking and
 *   growing, and its seals are sealed (`F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`), in
 *   leap-verify as in leap-bench; leap runs no candidate on regions it could not seal. The
 *   runner maps the three regions and closes their descriptors before the candidate's code
 *   loads. A truncation, which made leap-bench die of SIGBUS and leap-verify's worker (or
 *   leap-verify itself, `-j 1`) die, is refused, so no access of leap's mappings can fault --
 *   security.bats "verify and bench: a candidate that shrinks the shared regions is judged, and
 *   leap lives (no SIGBUS)" (truncate.c, then a correct kernel: it passes), "the shared regions
 *   are sealed against resizing, seals sealed; the control region and sealed inputs against
 *   writing; a clear leaves nothing" (regions.c, against lib/session.c: the seals, `ftruncate`
 *   failing with EPERM).
 * - A control page rewritten to steer leap. The layout (where the call table and the guard list
 *   are, their capacities, the parameter count, the guard list's generation, the flags) lives
 *   in leap's own memory, and leap writes the control page and never reads it back; the control
 *   region is sealed against writing (`F_SEAL_FUTURE_WRITE`) and mapped read-only by the
 *   runner. What leap reads from the regions is outputs, inputs and canaries at its own
 *   offsets, to check them -- "verify: a candidate that scribbles over the control page changes
 *   nothing leap reads" (scribble_ctl.c; it used to make leap-verify write where it chose:
 *   SIGSEGV).
 * - Inputs: leap-bench's input region is sealed against writing, as before. leap-verify's stays
 *   writable on purpose, sealed against resizing: a kernel that writes its input gets a
 *   `mismatch` of kind `input_modified` naming the input, more use to a model than a crash, and
 *   nothing leap relies on lives there any more.
 * - One record leaking into the next. leap-bench reuses the candidate's regions from record to
 *   record; before a new runner maps them (and so before the next artifact's constructors run)
 *   leap zeroes all a previous session could have left: inputs, outputs, call table, guard
 *   list, the control page's block fields -- "bench: nothing of one record reaches the next:
 *   the regions are cleared before a new runner maps them" (leftover.c turns wrong when its
 *   constructor finds any byte there). The clearing costs a `memset` of the regions per record
 *   (bench/README.md).
 * - All of it at once. tests/storm.bats "storm: 300 records through leap-verify and 100 through
 *   leap-bench: each a verdict, leap lives, nothing left" runs tests/fixtures/storm/storm.c,
 *   whose behaviour is drawn call by call from a seed (it prints it: `verify.output`):
 *   shrinking and scribbling the regions, random bytes and forged replies on the reply
 *   descriptor, a stolen go token, signals, exits, hangs, forks, a thread writing late,
 *   `kill(-1)`, a denied call, descriptors closed or replaced. Every record comes out, in
 *   order, with a verdict; leap exits 0; no process (under a subreaper), sandbox temp dir or
 *   control group is left; leap never holds more than 64 memfds at once (8 to 16 in practice).
 *   `make bench-storm` runs 3000 + 1000 (bench/README.md section 8).
 *
 * Does not stop:
 * - Kernels without `F_SEAL_FUTURE_WRITE` (before Linux 5.1): the control region, and
 *   leap-bench's inputs as before, stay writable by the runner's process, which can then change
 *   what its own runner calls, never what leap reads (leap-bench then checks its inputs after
 *   every block, as leap-verify does). Untested (needs an old kernel).
 * - cuda device memory: the owner's device regions for the client are reused from record to
 *   record, and cleared before each client imports them: leap has the owner fill both, the
 *   whole allocations, with the canary (`clear_client` in `lib/session.c`), so nothing of one
 *   candidate reaches the next and a guard one overran is whole again for the next --
 *   tests/cuda.bats "device memory by descriptor: an owner's two descriptors reach leap and,
 *   inherited, every client, cleared first" (without a GPU: the owner is fake_runner.c, which
 *   refuses any other move), check-gpu "a guard damaged while timed is blamed once, then
 *   cleared" (on a GPU).
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
 * exported memory; the passing is lib/runproto.c's, which the runner uses), check-gpu "owner
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

#include "gpu.h"
#include "session.h"
#include "sig.h"
#include "tlock.h"
#include "util.h"
#include "banned.h"

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

/* Seals memfd fd against shrinking and growing and seals its seals, after sealing it against
 * writing when `nowrite` (F_SEAL_FUTURE_WRITE, Linux 5.1: no new writable mapping, no write();
 * leap's own mapping, made before, still writes). Returns 1 when it is sealed against writing,
 * 0 when not, -1 when the size seals do not hold (then no candidate may map it: a shrunk
 * region would fault in leap's own mapping). */
static int seal(int fd, int nowrite)
{
	const int size = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	int w = nowrite && fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) == 0;
	int have = fcntl(fd, F_ADD_SEALS, size) == 0 ? fcntl(fd, F_GET_SEALS) : -1;
	if (have < 0 || (have & size) != size)
		return -1;
	return w && (have & F_SEAL_FUTURE_WRITE) ? 1 : 0;
}

/* Writes the fixed part of the control page from the layout in g (leap's own copy). */
static void write_ctl(struct leap_regions *g)
{
	struct leap_run_ctl *c = g->ctl;
	memset(c, 0, sizeof *c);
	c->magic = LEAP_RUN_MAGIC;
	c->flags = g->flags;
	c->in_len = g->in_len;
	c->out_len = g->out_len;
	c->ctl_len = g->ctl_len;
	c->nparams = g->nparams;
	c->table_off = g->table_off;
	c->table_cap = g->table_cap;
	c->guards_off = g->guards_off;
	c->guard_gen = g->guard_gen;
}

/* Maps memfd fd (len bytes) at `at` (MAP_FIXED) or anywhere (at NULL). Returns the address or
 * MAP_FAILED. */
static void *map_shared(void *at, uint64_t len, int fd, int lazy)
{
	return mmap(at, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED : 0) | (lazy ? 0 : MAP_POPULATE),
		    fd, 0);
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

int leap_regions_make(struct leap_regions *g, const struct leap_session_opts *o, char **err)
{
	memset(g, 0, sizeof *g);
	g->in_len = o->in_cap ? o->in_cap : LEAP_RUN_GUARD;
	g->out_len = o->out_cap ? o->out_cap : LEAP_RUN_GUARD;
	g->nparams = o->nparams;
	g->calls = o->calls;
	g->nslots = o->nslots;
	g->table_off = leap_run_table_off();
	g->table_cap = leap_run_table_bytes(o->nparams, o->calls);
	g->guards_off = leap_run_guards_off(o->nparams, o->calls);
	g->guards_cap = leap_run_guards_cap(o->nparams, o->nslots);
	g->ctl_len = leap_run_ctl_len(o->nparams, o->calls, o->nslots);
	g->guard_gen = 1;
	g->lazy = o->lazy;
	g->in_fd = memfd_create("leap-in", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	g->out_fd = memfd_create("leap-out", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	g->ctl_fd = memfd_create("leap-ctl", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (g->in_fd < 0 || g->out_fd < 0 || g->ctl_fd < 0 || !g->ctl_len || g->in_len > SIZE_MAX ||
	    g->out_len > SIZE_MAX || ftruncate(g->in_fd, (off_t)g->in_len) || ftruncate(g->out_fd, (off_t)g->out_len) ||
	    ftruncate(g->ctl_fd, (off_t)g->ctl_len)) {
		*err = xasprintf("cannot create the shared regions (%llu and %llu bytes): %s",
				 (unsigned long long)g->in_len, (unsigned long long)g->out_len, strerror(errno));
		goto fail;
	}
	g->span = LEAP_RUN_OUT_BASE + g->out_len;
	void *base = mmap(NULL, (size_t)g->span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		*err = xasprintf("cannot reserve the address range of the shared regions: %s", strerror(errno));
		goto fail;
	}
	g->arena = base;
	void *ctl = map_shared(NULL, g->ctl_len, g->ctl_fd, 0);
	if (ctl == MAP_FAILED || map_shared(g->arena, g->in_len, g->in_fd, o->lazy) == MAP_FAILED ||
	    map_shared(g->arena + LEAP_RUN_OUT_BASE, g->out_len, g->out_fd, o->lazy) == MAP_FAILED) {
		if (ctl != MAP_FAILED)
			munmap(ctl, (size_t)g->ctl_len);
		*err = xasprintf("cannot map the shared regions: %s", strerror(errno));
		goto fail;
	}
	g->ctl = ctl;
	g->ctlmap = ctl;
	/* From now on no new writable mapping of CTL (and of IN when sealed) can be made and
	 * write() fails: only ours, made above, writes the control page, the table and the inputs.
	 * And no region can change size: leap's mappings can never fault. */
	int in_w = seal(g->in_fd, o->seal), out_w = seal(g->out_fd, 0), ctl_w = seal(g->ctl_fd, 1);
	if (in_w < 0 || out_w < 0 || ctl_w < 0) {
		*err = xasprintf("cannot seal the shared regions against resizing: %s", strerror(errno));
		goto fail;
	}
	g->sealed = in_w == 1;
	g->flags = (g->sealed ? LEAP_RUN_CTL_SEALED : 0) | (o->lazy ? LEAP_RUN_CTL_LAZY : 0);
	write_ctl(g);
	return 0;
fail:
	leap_regions_free(g);
	return -1;
}

void leap_regions_free(struct leap_regions *g)
{
	if (g->arena)
		munmap(g->arena, (size_t)g->span);
	if (g->ctlmap)
		munmap(g->ctlmap, (size_t)g->ctl_len);
	g->arena = g->ctlmap = NULL;
	g->ctl = NULL;
	int *fds[] = {&g->in_fd, &g->out_fd, &g->ctl_fd};
	for (size_t i = 0; i < 3; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	g->laid = NULL;
}

/* Zeroes len bytes of memfd fd, mapped at p: for a lazy region by punching a hole (its pages
 * are given back, and read as zeros; CTL and sealed IN refuse it), else by writing zeros into
 * the pages that are already there. */
static void wipe(unsigned char *p, uint64_t len, int fd, int lazy)
{
	if (lazy && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)len) == 0)
		return;
	memset(p, 0, (size_t)len);
}

void leap_regions_clear(struct leap_regions *g)
{
	if (!g->used)
		return;
	if (g->in_written || !g->sealed)
		wipe(g->arena, g->in_len, g->in_fd, g->lazy);
	wipe(g->arena + LEAP_RUN_OUT_BASE, g->out_len, g->out_fd, g->lazy);
	memset(g->ctlmap + g->table_off, 0, (size_t)(g->ctl_len - g->table_off));
	g->guard_gen++;
	write_ctl(g);
	g->laid = NULL;
	g->used = g->in_written = 0;
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
 * the candidate's: -1 with *err (the session ended), except no device on cuda, which is the
 * no_device verdict (LEAP_SESS_REPLY). Returns LEAP_SESS_OK, LEAP_SESS_REPLY or -1. */
static int read_hello(struct leap_session *s, int cuda, int handles, char **err)
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
	if (r == LEAP_SESS_REPLY && cuda && s->last.status == LEAP_RUN_NO_DEVICE) {
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
	r = read_reply_within(s, s->hello_s); /* the constructors' time is bounded as the hello's */
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
	int cuda = b == LEAP_BACKEND_CUDA;
	char *runner = xasprintf("%s/leap-run-%s", h->libexec, cuda ? "cuda" : "cpu");
	if (access(runner, X_OK)) {
		free(runner);
		if (!cuda) {
			*err = xasprintf("the cpu runner is missing from %s", h->libexec);
			return -1;
		}
		s->dead = 1;
		s->last.magic = LEAP_RUN_MAGIC;
		s->last.status = LEAP_RUN_NO_DEVICE;
		snprintf(s->last.msg, sizeof s->last.msg, "this leap was built without CUDA (no nvcc at build time)");
		return LEAP_SESS_REPLY;
	}
	int art = open(artifact, O_RDONLY | O_CLOEXEC);
	if (art < 0) {
		*err = xasprintf("cannot open the artifact %s: %s", artifact, strerror(errno));
		free(runner);
		return -1;
	}
	int sock[2] = {-1, -1}, is_owner = cuda && o->role && !strcmp(o->role, "owner");
	if (cuda && o->owner && (o->owner->dev_fd[0] < 0 || o->owner->dev_fd[1] < 0)) {
		*err = xstrdup("the baseline's runner holds no device memory for the candidate");
		goto fail;
	}
	if ((cuda && o->owner && clear_client(o->owner, err)) || take_regions(s, o, err))
		goto fail;
	if (is_owner && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock)) {
		*err = xasprintf("cannot create the socket for the baseline's device memory: %s", strerror(errno));
		goto fail;
	}
	struct leap_sandbox_opts so = o->sb ? *o->sb : *h->sb;
	if (cuda)
		so.mem_bytes = 0; /* the CUDA driver reserves more address space than any sane limit */
	else if (so.mem_bytes)
		so.mem_bytes += s->rg->in_len + s->rg->out_len + s->rg->ctl_len; /* room for the mapped regions */
	if (!cuda && so.cg_mem_cuda_only) {
		so.cg_ctrl &= ~(1u << LEAP_CG_MEMORY);
		so.cg_mem_bytes = 0;
	}
	so.pidns_freeze = o->freeze == LEAP_FREEZE_SIGNALS;
	s->freeze = o->freeze;
	cpu_set_t mine;
	s->ncpus = so.cpus ? CPU_COUNT(so.cpus) : sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 1;
	/* The runner sees its own device alone (by UUID where known), as device 0: no other GPU
	 * gets a context from it, and no candidate can reach a neighbour's device. */
	char *visible = cuda ? leap_gpu_visible(h->gpu && h->gpu->done ? &h->gpu->g : NULL, h->device) : NULL;
	so.visible = visible;
	struct leap_runner_fds fds = {s->rg->in_fd, s->rg->out_fd, s->rg->ctl_fd, art, sock[1], {-1, -1}};
	if (cuda && o->owner)
		memcpy(fds.dev, o->owner->dev_fd, sizeof fds.dev);
	int started = leap_sandbox_start(h->env, &s->sb, &so, runner, !cuda ? "-" : visible ? "0" : h->device,
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
	int r = read_hello(s, cuda, sock[0], err);
	if (sock[0] >= 0)
		close(sock[0]);
	if (r != LEAP_SESS_OK)
		return r;
	if (cuda && o->lock_cache) { /* before the candidate's code runs: its constructors too */
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
	if (stalls && leap_sandbox_stalled(&s->sb, &st1) == 0 && st1 >= st0)
		bt->stall_ms = (double)(st1 - st0) / 1e6;
	return LEAP_SESS_OK;
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
