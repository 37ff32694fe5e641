/* session.c - the referee's side of one runner child: shared regions, blocks of calls timed on
 * the referee's clock, freezing between blocks (see session.h and runproto.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "session.h"
#include "sig.h"
#include "util.h"
#include "verify.h"
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
	/* the case's own offsets (leap_case_prepare) leave room for a table of arena_sets rows */
	if (calls < d->arena_sets)
		calls = d->arena_sets;
	leap_run_layout2(d->rp, np, d->arena_sets, calls, NULL, NULL, NULL, &in_len, &out_len);
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
	s->last.msg[sizeof s->last.msg - 1] = 0;
	if (s->last.status == LEAP_RUN_CRASH) { /* its last word before dying (runner/crash.c) */
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

int leap_regions_make(struct leap_regions *g, const struct leap_session_opts *o, char **err)
{
	memset(g, 0, sizeof *g);
	g->in_len = o->in_cap;
	g->out_len = o->out_cap ? o->out_cap : LEAP_RUN_GUARD;
	g->in_fd = memfd_create("leap-in", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	g->out_fd = memfd_create("leap-out", MFD_CLOEXEC);
	if (g->in_fd < 0 || g->out_fd < 0 || g->in_len > SIZE_MAX || g->out_len > SIZE_MAX ||
	    ftruncate(g->in_fd, (off_t)g->in_len) || ftruncate(g->out_fd, (off_t)g->out_len)) {
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
	int pop = o->lazy ? 0 : MAP_POPULATE;
	if (mmap(g->arena, (size_t)g->in_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | pop, g->in_fd, 0) ==
		    MAP_FAILED ||
	    mmap(g->arena + LEAP_RUN_OUT_BASE, (size_t)g->out_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | pop,
		 g->out_fd, 0) == MAP_FAILED) {
		*err = xasprintf("cannot map the shared regions: %s", strerror(errno));
		goto fail;
	}
	struct leap_run_ctl *c = g->ctl = (struct leap_run_ctl *)g->arena;
	c->magic = LEAP_RUN_MAGIC;
	c->in_len = g->in_len;
	c->out_len = g->out_len;
	c->nparams = o->nparams;
	c->table_off = leap_run_table_off();
	c->table_cap = leap_run_table_bytes(o->nparams, o->calls);
	c->guards_off = leap_run_guards_off(o->nparams, o->calls);
	c->guard_gen = 1;
	if (o->lazy)
		c->flags |= LEAP_RUN_CTL_LAZY;
	if (c->guards_off + leap_run_guards_cap(o->nparams, o->nslots) * sizeof(struct leap_run_range) > g->in_len) {
		*err = xstrdup("internal error: the input region has no room for the guard list");
		goto fail;
	}
	g->calls = o->calls;
	g->nslots = o->nslots;
	/* From now on no new writable mapping of IN can be made and write() fails: only ours,
	 * made above, writes the inputs and the call table. */
	if (o->seal && fcntl(g->in_fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) == 0) {
		c->flags |= LEAP_RUN_CTL_SEALED;
		g->sealed = 1;
	}
	return 0;
fail:
	leap_regions_free(g);
	return -1;
}

void leap_regions_free(struct leap_regions *g)
{
	if (g->arena)
		munmap(g->arena, (size_t)g->span);
	g->arena = NULL;
	g->ctl = NULL;
	if (g->in_fd >= 0)
		close(g->in_fd);
	if (g->out_fd >= 0)
		close(g->out_fd);
	g->in_fd = g->out_fd = -1;
	g->laid = NULL;
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

int leap_session_start(struct leap_verifier *v, struct leap_session *s, enum leap_backend b, const char *artifact,
		       const struct leap_session_opts *o, char **err)
{
	memset(s, 0, sizeof *s);
	s->own.in_fd = s->own.out_fd = -1;
	s->lock_fd = -1;
	leap_child_init(&s->sb.child);
	s->sb.cmd_fd = s->sb.reply_fd = s->sb.log_fd = s->sb.ctl_fd = -1;
	int cuda = b == LEAP_BACKEND_CUDA;
	char *runner = xasprintf("%s/leap-run-%s", v->o.libexec, cuda ? "cuda" : "cpu");
	if (access(runner, X_OK)) {
		free(runner);
		if (!cuda) {
			*err = xasprintf("the cpu runner is missing from %s", v->o.libexec);
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
	s->own.in_fd = s->own.out_fd = -1;
	if (o->regions) {
		s->rg = o->regions;
	} else if (leap_regions_make(&s->own, o, err)) {
		goto fail;
	} else {
		s->rg = &s->own;
	}
	s->rg->laid = NULL; /* this session lays the guards and canaries out afresh */
	s->arena = s->rg->arena;
	s->sealed = s->rg->sealed;
	struct leap_run_ctl *c = s->rg->ctl;
	c->pool_len = o->pool_len;
	if (o->ipc)
		memcpy(c->ipc, o->ipc, sizeof c->ipc);
	struct leap_sandbox_opts so = o->sb ? *o->sb : v->o.sb;
	if (cuda)
		so.mem_bytes = 0; /* the CUDA driver reserves more address space than any sane limit */
	else if (so.mem_bytes)
		so.mem_bytes += s->rg->in_len + s->rg->out_len; /* room for the mapped regions */
	if (!cuda && so.cg_mem_cuda_only) {
		so.cg_ctrl &= ~(1u << LEAP_CG_MEMORY);
		so.cg_mem_bytes = 0;
	}
	so.pidns_freeze = o->freeze == LEAP_FREEZE_SIGNALS;
	s->freeze = o->freeze;
	/* The runner sees its own device alone (by UUID where known), as device 0: no other GPU
	 * gets a context from it, and no candidate can reach a neighbour's device. */
	char *visible = cuda ? leap_gpu_visible(v->gpu.done ? &v->gpu.g : NULL, v->o.device) : NULL;
	so.visible = visible;
	int started = leap_sandbox_start(&v->env, &s->sb, &so, runner, !cuda ? "-" : visible ? "0" : v->o.device,
					 o->role ? o->role : "copy", s->rg->in_fd, art, s->rg->out_fd, err);
	free(visible);
	if (started)
		goto fail;
	close(art);
	free(runner);
	int r = read_reply(s);
	s->hello = s->last;
	if (r == LEAP_SESS_OK && cuda && o->lock_cache) {
		char *path = leap_device_lock_path(o->lock_cache, s->hello.uuid);
		s->lock_fd = leap_device_lock(path, LOCK_SH, NULL, NULL, err);
		free(path);
		if (s->lock_fd < 0) {
			leap_session_end(s, NULL, NULL, NULL, 0);
			return -1;
		}
	}
	if (r == LEAP_SESS_OK && s->freeze)
		r = freeze(s);
	return r;
fail:
	close(art);
	free(runner);
	leap_regions_free(&s->own);
	s->rg = NULL;
	s->arena = NULL;
	return -1;
}

/* Fills n bytes at p with the elsize-byte pattern (doubling copies: O(n) memcpy work). */
static void fill(unsigned char *p, uint64_t n, const uint8_t *pattern, uint32_t elsize)
{
	if (!elsize || n < elsize)
		return;
	memcpy(p, pattern, elsize);
	uint64_t done = elsize;
	while (done < n) {
		uint64_t k = done < n - done ? done : n - done;
		memcpy(p + done, p, (size_t)k);
		done += k;
	}
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
	struct leap_run_ctl *c = s->rg->ctl;
	struct leap_run_range *g = (struct leap_run_range *)(s->arena + c->guards_off);
	uint32_t n = 0;
	uint8_t canary = LEAP_RUN_CANARY;
	for (uint32_t sl = 0; sl < d->arena_sets && sl < s->rg->nslots; sl++)
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
					fill(s->arena + r[i].off, r[i].len, &canary, 1);
		}
	c->nguards = n;
	c->guard_gen++;
	s->rg->laid = d;
}

void leap_session_stage(struct leap_session *s, const struct leap_case_data *d, uint32_t set, uint32_t slot)
{
	leap_case_upload(d, set, slot, s->arena);
	size_t np = d->t->nparams;
	for (size_t p = 0; p < np; p++) {
		const struct leap_run_param *rp = &d->rp[p];
		if (rp->kind == LEAP_RUN_K_OUT)
			fill(s->arena + d->out[(size_t)slot * np + p], rp->bytes, rp->poison, rp->elsize);
	}
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
	const struct leap_run_ctl *c = s->rg->ctl;
	struct leap_run_arg *a = (struct leap_run_arg *)(s->arena + c->table_off);
	for (uint32_t j = 0; j < n; j++)
		for (size_t p = 0; p < np; p++) {
			const struct leap_run_param *rp = &d->rp[p];
			size_t k = (size_t)slots[j] * np + p;
			struct leap_run_arg *x = &a[(size_t)j * c->nparams + p];
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

/* Thaws the child, checking first that it did not run while frozen. */
static int thaw(struct leap_session *s, uint64_t *usage)
{
	uint64_t u = 0;
	if (s->has_usage && leap_sandbox_usage(&s->sb, &u) == 0 && u > s->frozen_usage + 1000000) {
		snprintf(s->last.msg, sizeof s->last.msg,
			 "its processes used %.3g ms of CPU while frozen: the freezer did not hold",
			 (double)(u - s->frozen_usage) / 1e6);
		s->dead = 1;
		return LEAP_SESS_FREEZE;
	}
	*usage = s->has_usage ? s->frozen_usage : 0;
	if (leap_sandbox_thaw(&s->sb)) {
		snprintf(s->last.msg, sizeof s->last.msg, "its processes could not be thawed");
		s->dead = 1;
		return LEAP_SESS_FREEZE;
	}
	return LEAP_SESS_OK;
}

int leap_session_block(struct leap_session *s, const struct leap_case_data *d, const uint32_t *slots, uint32_t n,
		       uint32_t op, struct leap_block *bt)
{
	bt->ms = 0;
	bt->cpu_ms = bt->own_ms = -1;
	if (s->dead)
		return LEAP_SESS_DIED;
	if (n > s->rg->calls || d->t->nparams > s->rg->ctl->nparams)
		return LEAP_SESS_DIED; /* a caller's bug: never a verdict */
	leap_session_layout(s, d);
	write_table(s, d, slots, n);
	struct leap_run_ctl *c = s->rg->ctl;
	c->seq = ++s->seq;
	c->op = op;
	c->ncalls = n;
	uint64_t u0 = 0;
	double t0 = leap_now();
	int r = s->freeze ? thaw(s, &u0) : LEAP_SESS_OK;
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
}

int leap_session_xfer(struct leap_session *s, const struct leap_run_xfer *x, uint32_t n, int flush)
{
	if (s->dead)
		return LEAP_SESS_DIED;
	struct leap_run_ctl *c = s->rg->ctl;
	if ((uint64_t)n * sizeof *x > c->table_cap)
		return LEAP_SESS_DIED; /* a caller's bug */
	memcpy(s->arena + c->table_off, x, (size_t)n * sizeof *x);
	c->seq = ++s->seq;
	c->op = LEAP_RUN_OP_XFER;
	c->ncalls = n;
	c->flags = (c->flags & ~(uint32_t)LEAP_RUN_CTL_FLUSH_L2) | (flush ? LEAP_RUN_CTL_FLUSH_L2 : 0);
	uint64_t u0;
	int r = s->freeze ? thaw(s, &u0) : LEAP_SESS_OK;
	if (r == LEAP_SESS_OK)
		r = go(s, LEAP_RUN_OP_XFER);
	if (r == LEAP_SESS_OK && s->freeze)
		r = freeze(s);
	return r;
}

char *leap_device_lock_path(const char *cache, const uint8_t uuid[16])
{
	int any = 0;
	for (int i = 0; i < 16; i++)
		any |= uuid[i];
	if (!any)
		return xasprintf("%s/locks/cpu.lock", cache);
	char hex[33];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
	return xasprintf("%s/locks/gpu-%s.lock", cache, hex);
}

int leap_device_lock(const char *path, int how, const char *what, int *said, char **err)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	int fd = -1;
	if (leap_mkdirs(dir) || (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		*err = xasprintf("cannot open the device lock %s: %s", path, strerror(errno));
	} else if (flock(fd, how | LOCK_NB)) {
		if (said && !(*said)++)
			leap_warn("waiting for the lock on device %s (another leap-bench is timing on it)", what);
		while (flock(fd, how))
			if (errno != EINTR || leap_signal_caught()) {
				*err = xasprintf("cannot lock %s: %s", path, strerror(errno));
				close(fd);
				fd = -1;
				break;
			}
	}
	free(dir);
	return fd;
}
