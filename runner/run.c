/* run.c - the sandboxed runner: a servant that loads one artifact and makes the calls the
 * referee names on the buffers the referee laid out (runproto.h). */
/*
 * Why so little: everything in this process is within the candidate's reach once it is
 * loaded, so the runner does nothing the referee must rely on. It times nothing the referee
 * uses, copies nothing back (on the host the candidate's buffers are the referee's shared
 * memory), and checks nothing but the offsets it is given, so that a bug in a candidate cannot
 * make it touch memory outside the two regions. Order matters, in two steps. First the trusted
 * set-up: the device, the regions mapped and (cpu) their guard ranges made inaccessible,
 * device memory (cuda; an owner sends the client's to the referee as file descriptors, a
 * client imports the owner's), the region and device descriptors closed (the candidate needs
 * only the mappings, and a descriptor would let it resize or remap a region, or map device
 * memory anew), the system-call filter; then the hello,
 * which is the only message that can say "no device" or "no memory" (the referee believes it
 * because no candidate code has run yet). Second, on the referee's LOAD token, the artifact:
 * its constructors run there, and every message after it may be theirs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "fault.h"
#include "core/fdio.h"
#include "filter.h"
#include "sandbox/runplan.h"
#include "sandbox/runproto.h"
#include "core/banned.h"

/* The runner's state (one per process, owned by main). */
struct runner {
	struct rb *rb;
	leap_entry_fn entry;
	unsigned char *in, *out; /* host mappings of IN and OUT */
	const unsigned char *cp; /* the mapping of CTL (read-only) */
	uint64_t in_len, out_len;
	struct leap_run_ctl ctl; /* the session part of the control page, read at start */
	uint64_t guard_gen;      /* the guard list applied (0: none yet) */
	uint64_t dev_len[2];     /* an owner's client regions (bytes), said in the hello */
	uint8_t uuid[16];        /* the device's, sent in the hello */
};

/* Sends a reply (no extra data). Exits when the referee is gone. */
static void reply(const struct runner *r, int status, int code, uint32_t call, uint64_t seq, const double aux[2],
		  const char *fmt, ...)
{
	struct leap_run_reply rr;
	memset(&rr, 0, sizeof rr);
	rr.magic = LEAP_RUN_MAGIC;
	rr.status = status;
	rr.code = code;
	rr.call = call;
	rr.seq = seq;
	if (aux) {
		rr.aux[0] = aux[0];
		rr.aux[1] = aux[1];
	}
	if (r && seq == 0) {
		memcpy(rr.dev_len, r->dev_len, sizeof rr.dev_len);
		memcpy(rr.uuid, r->uuid, sizeof rr.uuid);
	}
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(rr.msg, sizeof rr.msg, fmt, ap);
		va_end(ap);
	}
	if (leap_write_full(LEAP_RUN_FD_REPLY, &rr, sizeof rr))
		_exit(LEAP_RUN_EXIT_LOST);
}

/* Makes the ranges of the guard list inaccessible where the candidate's pointers point into
 * the host regions (runplan.h: cpu only; on cuda they are the runner's staging, which its own
 * copies must reach), after giving both regions back their normal protection (the list changes
 * with the case). Best effort: a write past a buffer then faults at once, but the referee's
 * canary check does not depend on it. Returns LEAP_RUN_OK, or LEAP_RUN_PROTO for a list that
 * does not fit CTL. */
static int apply_guards(struct runner *r, const struct leap_run_ctl *c)
{
	int sealed = (r->ctl.flags & LEAP_RUN_CTL_SEALED) != 0, host = rb_host_pointers(r->rb);
	if (r->guard_gen && host) {
		if (r->in)
			mprotect(r->in, (size_t)r->in_len, PROT_READ | (sealed ? 0 : PROT_WRITE));
		if (r->out)
			mprotect(r->out, (size_t)r->out_len, PROT_READ | PROT_WRITE);
	}
	r->guard_gen = c->guard_gen ? c->guard_gen : 1;
	const struct leap_run_range *g = (const struct leap_run_range *)(r->cp + r->ctl.guards_off);
	uint32_t n = c->nguards;
	if (n > (r->ctl.ctl_len - r->ctl.guards_off) / sizeof *g)
		return LEAP_RUN_PROTO;
	for (uint32_t i = 0; i < n; i++) {
		struct leap_run_move m;
		if (leap_run_protects(g[i], r->in ? r->in_len : 0, r->out ? r->out_len : 0, host, &m))
			mprotect((m.region == LEAP_RUN_R_IN ? r->in : r->out) + m.off, (size_t)m.len, PROT_NONE);
	}
	return LEAP_RUN_OK;
}

/* Maps CTL (read-only) and reads the control page's session part from it, checking it against
 * the regions' sizes. Returns 0 or a status (reply sent). */
static int map_ctl(struct runner *r)
{
	struct stat sc, si, so;
	if (fstat(LEAP_RUN_FD_CTL, &sc) || fstat(LEAP_RUN_FD_IN, &si) || fstat(LEAP_RUN_FD_OUT, &so) ||
	    sc.st_size < LEAP_RUN_GUARD) {
		reply(r, LEAP_RUN_PROTO, 0, 0, 0, NULL, "the shared regions are missing");
		return LEAP_RUN_PROTO;
	}
	r->cp = mmap(NULL, (size_t)sc.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, LEAP_RUN_FD_CTL, 0);
	if (r->cp == MAP_FAILED) {
		reply(r, LEAP_RUN_NOMEM, 0, 0, 0, NULL, "cannot map the control region: %s", strerror(errno));
		return LEAP_RUN_NOMEM;
	}
	memcpy(&r->ctl, r->cp, sizeof r->ctl);
	const struct leap_run_ctl *c = &r->ctl;
	if (c->magic != LEAP_RUN_MAGIC || c->in_len > (uint64_t)si.st_size || c->out_len > (uint64_t)so.st_size ||
	    c->ctl_len != (uint64_t)sc.st_size || c->nparams > LEAP_RUN_MAX_PARAMS || c->table_off > c->ctl_len ||
	    c->table_cap > c->ctl_len - c->table_off || c->guards_off > c->ctl_len || c->in_len > SIZE_MAX ||
	    c->out_len > SIZE_MAX) {
		reply(r, LEAP_RUN_PROTO, 0, 0, 0, NULL, "the control page is malformed");
		return LEAP_RUN_PROTO;
	}
	return LEAP_RUN_OK;
}

/* Maps CTL, then IN (read-only when sealed) and OUT at the sizes the control page gives, and
 * makes the guard ranges inaccessible. Returns 0 or a status (reply sent). */
static int map_regions(struct runner *r)
{
	int st = map_ctl(r);
	if (st)
		return st;
	const struct leap_run_ctl *c = &r->ctl;
	int sealed = (c->flags & LEAP_RUN_CTL_SEALED) != 0;
	r->in_len = c->in_len;
	r->out_len = c->out_len;
	/* populated now, before any candidate code runs: no page fault lands in a timed block */
	int pop = c->flags & LEAP_RUN_CTL_LAZY ? 0 : MAP_POPULATE;
	r->in = r->in_len ? mmap(NULL, (size_t)r->in_len, PROT_READ | (sealed ? 0 : PROT_WRITE), MAP_SHARED | pop,
				 LEAP_RUN_FD_IN, 0)
			  : NULL;
	r->out = r->out_len ? mmap(NULL, (size_t)r->out_len, PROT_READ | PROT_WRITE, MAP_SHARED | pop, LEAP_RUN_FD_OUT, 0)
			    : NULL;
	if (r->in == MAP_FAILED || r->out == MAP_FAILED) {
		reply(r, LEAP_RUN_NOMEM, 0, 0, 0, NULL, "cannot map the shared regions: %s", strerror(errno));
		return LEAP_RUN_NOMEM;
	}
	fault_data_regions(r->in, r->in_len, r->out, r->out_len);
	if (apply_guards(r, c)) {
		reply(r, LEAP_RUN_PROTO, 0, 0, 0, NULL, "the guard list is malformed");
		return LEAP_RUN_PROTO;
	}
	return LEAP_RUN_OK;
}

/* Copies the artifact (fd LEAP_RUN_FD_ART) into a memfd this user owns and loads it, so the
 * artifact's own path and permissions never matter. Returns 0 or a status (reply sent). */
static int load(struct runner *r)
{
	int mfd = memfd_create("leap-artifact", MFD_CLOEXEC);
	if (mfd < 0) {
		reply(r, LEAP_RUN_LOAD, 0, 0, 0, NULL, "cannot create a memory file: %s", strerror(errno));
		return LEAP_RUN_LOAD;
	}
	char buf[65536];
	for (;;) {
		ssize_t n = read(LEAP_RUN_FD_ART, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			reply(r, LEAP_RUN_LOAD, 0, 0, 0, NULL, "cannot read the artifact: %s", strerror(errno));
			return LEAP_RUN_LOAD;
		}
		if (n == 0)
			break;
		if (leap_write_full(mfd, buf, (size_t)n)) {
			reply(r, LEAP_RUN_LOAD, 0, 0, 0, NULL, "cannot copy the artifact: %s", strerror(errno));
			return LEAP_RUN_LOAD;
		}
	}
	close(LEAP_RUN_FD_ART);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		/* dlerror names the /proc path; keep only the reason after the last ": ". */
		const char *why = e ? strrchr(e, ':') : NULL;
		reply(r, LEAP_RUN_LOAD, 0, 0, 0, NULL, "the shared object cannot be loaded: %s", why ? why + 2 : "unknown error");
		return LEAP_RUN_LOAD;
	}
	leap_abi_version_fn ver = (leap_abi_version_fn)(uintptr_t)dlsym(h, LEAP_ABI_VERSION_SYMBOL);
	r->entry = (leap_entry_fn)(uintptr_t)dlsym(h, LEAP_ABI_ENTRY);
	if (!ver || !r->entry) {
		reply(r, LEAP_RUN_ABI, 0, 0, 0, NULL, "the artifact does not export %s",
		      ver ? LEAP_ABI_ENTRY : LEAP_ABI_VERSION_SYMBOL);
		return LEAP_RUN_ABI;
	}
	int v = ver();
	if (v != LEAP_ABI_VERSION) {
		reply(r, LEAP_RUN_ABI, v, 0, 0, NULL, "artifact ABI version %d, expected %d", v, LEAP_ABI_VERSION);
		return LEAP_RUN_ABI;
	}
	fault_report_init(h); /* where a fault happens, for the feedback (runner/fault.c) */
	return LEAP_RUN_OK;
}

/* Builds the arguments of one call from its row (copied out of shared memory first): a
 * buffer's pointer into its region, checked to lie inside it; a scalar's value. Returns 0,
 * or -1 for a row that does not fit the regions. */
static int build_args(struct runner *r, const struct leap_run_arg *row, uint32_t np, void **args, uint8_t (*vals)[8])
{
	for (uint32_t p = 0; p < np; p++) {
		const struct leap_run_arg *a = &row[p];
		if (a->kind == LEAP_RUN_K_SCALAR) {
			memcpy(vals[p], a->value, 8);
			args[p] = vals[p];
			continue;
		}
		uint64_t len = a->region == LEAP_RUN_R_IN ? r->in_len : r->out_len;
		if (a->kind > LEAP_RUN_K_INOUT || a->region > LEAP_RUN_R_OUT || a->off > len || a->bytes > len - a->off)
			return -1;
		args[p] = rb_base(r->rb, (int)a->region) + a->off;
	}
	return 0;
}

/* One CALL or EMPTY block (ctl is the snapshot the go token matched); replies once. */
static void block(struct runner *r, const struct leap_run_ctl *c)
{
	uint32_t np = r->ctl.nparams, n = c->ncalls;
	uint64_t row_bytes = (uint64_t)np * sizeof(struct leap_run_arg);
	if (n > LEAP_RUN_MAX_CALLS || row_bytes * n > r->ctl.table_cap) {
		reply(r, LEAP_RUN_PROTO, 0, 0, c->seq, NULL, "malformed block");
		return;
	}
	char msg[LEAP_RUN_MSG] = "";
	int code = 0, st = rb_block_begin(r->rb, msg);
	if (st) {
		reply(r, st, 0, 0, c->seq, NULL, "%s", msg);
		return;
	}
	const unsigned char *tab = r->cp + r->ctl.table_off;
	for (uint32_t j = 0; j < n; j++) {
		struct leap_run_arg row[LEAP_RUN_MAX_PARAMS];
		void *args[LEAP_RUN_MAX_PARAMS];
		uint8_t vals[LEAP_RUN_MAX_PARAMS][8];
		memcpy(row, tab + row_bytes * j, (size_t)row_bytes);
		if (build_args(r, row, np, args, vals)) {
			reply(r, LEAP_RUN_PROTO, 0, j, c->seq, NULL, "an argument lies outside the shared regions");
			return;
		}
		if (c->op == LEAP_RUN_OP_EMPTY)
			continue;
		st = rb_call(r->rb, r->entry, args, row, np, &code, msg);
		if (st) {
			reply(r, st, code, j, c->seq, NULL, "%s", msg);
			return;
		}
	}
	double own[2] = {0, 0};
	st = rb_block_end(r->rb, &own[0], &code, msg);
	if (st)
		reply(r, st, code, n ? n - 1 : 0, c->seq, NULL, "%s", msg);
	else
		reply(r, LEAP_RUN_OK, 0, n, c->seq, own, NULL);
}

/* An owner's XFER block. */
static void xfer(struct runner *r, const struct leap_run_ctl *c)
{
	if (c->ncalls > r->ctl.table_cap / sizeof(struct leap_run_xfer)) {
		reply(r, LEAP_RUN_PROTO, 0, 0, c->seq, NULL, "malformed transfer list");
		return;
	}
	char msg[LEAP_RUN_MSG] = "";
	const struct leap_run_xfer *x = (const struct leap_run_xfer *)(r->cp + r->ctl.table_off);
	int st = rb_xfer(r->rb, x, c->ncalls, (c->flags & LEAP_RUN_CTL_FLUSH_L2) != 0, msg);
	reply(r, st, 0, 0, c->seq, NULL, "%s", msg);
}

/* An owner's client regions, to the referee: their descriptors over LEAP_RUN_FD_HANDLES (the
 * referee hands them to the client it starts), their sizes in the hello. Returns 0, or a
 * status with msg. */
static int send_handles(struct runner *r, int given, const struct rb_devmem *dm, char *msg)
{
	if (!given || dm->exp[1] < 0 || leap_run_send_fds(LEAP_RUN_FD_HANDLES, dm->exp, 2)) {
		snprintf(msg, LEAP_RUN_MSG, "cannot send the client's device memory to the referee: %s",
			 !given ? "no socket for it" : dm->exp[1] < 0 ? "it was not exported" : strerror(errno));
		return LEAP_RUN_PROTO;
	}
	memcpy(r->dev_len, dm->exp_len, sizeof r->dev_len);
	return LEAP_RUN_OK;
}

/* The trusted set-up (the device, the regions, device memory, the filter), ended by the hello.
 * Returns 0, or 1 after a failed hello. */
static int setup(struct runner *r, int argc, char **argv)
{
	char msg[LEAP_RUN_MSG] = "", device[LEAP_RUN_MSG];
	/* Which of the device descriptors the referee gave, asked before the driver starts: it
	 * opens descriptors of its own, and may be given the numbers of those it did not give. */
	int given[3];
	for (int i = 0; i < 3; i++)
		given[i] = fcntl(LEAP_RUN_FD_HANDLES + i, F_GETFD) >= 0;
	int st = rb_init(&r->rb, argc > 1 ? argv[1] : "-", argc > 2 ? argv[2] : "copy", msg, r->uuid);
	if (st) {
		reply(r, st, 0, 0, 0, NULL, "%s", msg);
		return 1;
	}
	snprintf(device, sizeof device, "%s", msg);
	if (map_regions(r))
		return 1;
	struct rb_devmem dm = {{given[1] ? LEAP_RUN_FD_DEV_IN : -1, given[2] ? LEAP_RUN_FD_DEV_OUT : -1},
			       {r->ctl.dev_len[0], r->ctl.dev_len[1]}, {-1, -1}, {0, 0}};
	st = rb_regions(r->rb, r->in, r->in_len, r->out, r->out_len, &r->ctl, &dm, msg);
	if (!st && dm.exp[0] >= 0)
		st = send_handles(r, given[0], &dm, msg);
	for (int i = 0; i < 2; i++)
		if (dm.exp[i] >= 0)
			close(dm.exp[i]);
	if (st) {
		reply(r, st, 0, 0, 0, NULL, "%s", msg);
		return 1;
	}
	/* The mappings are all the candidate's calls need: with a region's descriptor it could
	 * map it anew or try to resize it, with a device memory descriptor import it again. */
	close(LEAP_RUN_FD_IN);
	close(LEAP_RUN_FD_OUT);
	close(LEAP_RUN_FD_CTL);
	for (int i = 0; i < 3; i++)
		if (given[i]) /* only those: the others' numbers may be the driver's now */
			close(LEAP_RUN_FD_HANDLES + i);
	/* The system-call filter comes after the device is set up (the driver's start-up is
	 * not the candidate's) and before the artifact's first instruction (its constructors). */
	if (filter_install(msg, sizeof msg)) {
		reply(r, LEAP_RUN_PROTO, 0, 0, 0, NULL, "%s", msg);
		return 1;
	}
	reply(r, LEAP_RUN_OK, 0, 0, 0, NULL, "%s", device); /* the hello names the device */
	return 0;
}

int main(int argc, char **argv)
{
	struct runner r;
	memset(&r, 0, sizeof r);
	if (setup(&r, argc, argv))
		return 1;
	struct leap_run_go g;
	if (leap_read_full(LEAP_RUN_FD_CMD, &g, sizeof g))
		return LEAP_RUN_EXIT_LOST;
	if (g.magic != LEAP_RUN_MAGIC || g.op != LEAP_RUN_OP_LOAD)
		return 0; /* the referee wants no candidate code run */
	if (load(&r))
		return 1;
	reply(&r, LEAP_RUN_OK, 0, 0, 0, NULL, NULL);
	for (;;) {
		if (leap_read_full(LEAP_RUN_FD_CMD, &g, sizeof g))
			return LEAP_RUN_EXIT_LOST;
		if (g.magic != LEAP_RUN_MAGIC || g.op == LEAP_RUN_OP_QUIT || g.seq == 0)
			return 0;
		struct leap_run_ctl c;
		memcpy(&c, r.cp, sizeof c); /* one snapshot */
		if (c.seq != g.seq || c.op != g.op) {
			reply(&r, LEAP_RUN_PROTO, 0, 0, g.seq, NULL, "the control page does not match the go token");
			continue;
		}
		if (c.guard_gen != r.guard_gen && apply_guards(&r, &c)) {
			reply(&r, LEAP_RUN_PROTO, 0, 0, g.seq, NULL, "the guard list is malformed");
			continue;
		}
		if (g.op == LEAP_RUN_OP_CALL || g.op == LEAP_RUN_OP_EMPTY) {
			block(&r, &c);
		} else if (g.op == LEAP_RUN_OP_XFER) {
			xfer(&r, &c);
		} else if (g.op == LEAP_RUN_OP_PROBE) {
			double aux[2] = {0, 0};
			char pm[LEAP_RUN_MSG] = "";
			int ps = rb_probe(r.rb, &aux[0], &aux[1], pm);
			reply(&r, ps, 0, 0, g.seq, aux, "%s", pm);
		} else {
			reply(&r, LEAP_RUN_PROTO, 0, 0, g.seq, NULL, "unknown operation %u", g.op);
		}
	}
}
