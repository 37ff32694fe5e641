/* run.c - the sandboxed runner: loads one artifact and calls it on the parent's inputs (runproto.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "crash.h"
#include "runproto.h"
#include "banned.h"

/* The runner's state (one per process, owned by main). */
struct runner {
	struct rb *rb;         /* the backend's state */
	leap_entry_fn entry;
	unsigned char *arena;
	uint64_t arena_len;
	void **bufs;          /* the candidate's buffers, one per parameter (NULL for scalars) */
	uint64_t *buf_bytes;
	uint32_t nbufs;
	struct leap_run_param *params;
	uint64_t *in, *out, *after;
	struct leap_run_time *times;
	size_t ntimes;
};

/* Sends a reply with no timings. Exits when the parent is gone. */
static void reply(int status, int code, uint32_t call, uint32_t param, const char *fmt, ...)
{
	struct leap_run_reply r;
	memset(&r, 0, sizeof r);
	r.magic = LEAP_RUN_MAGIC;
	r.status = status;
	r.code = code;
	r.call = call;
	r.param = param;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r.msg, sizeof r.msg, fmt, ap);
		va_end(ap);
	}
	if (leap_write_full(LEAP_RUN_FD_REPLY, &r, sizeof r))
		_exit(LEAP_RUN_EXIT_LOST);
}

/* Copies the artifact (fd LEAP_RUN_FD_ART) into a memfd this user owns and loads it, so the
 * artifact's own path and permissions never matter. Returns 0 or a status (reply sent). */
static int load(struct runner *r)
{
	int mfd = memfd_create("leap-artifact", MFD_CLOEXEC);
	if (mfd < 0) {
		reply(LEAP_RUN_LOAD, 0, 0, 0, "cannot create a memory file: %s", strerror(errno));
		return LEAP_RUN_LOAD;
	}
	char buf[65536];
	for (;;) {
		ssize_t n = read(LEAP_RUN_FD_ART, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			reply(LEAP_RUN_LOAD, 0, 0, 0, "cannot read the artifact: %s", strerror(errno));
			return LEAP_RUN_LOAD;
		}
		if (n == 0)
			break;
		if (leap_write_full(mfd, buf, (size_t)n)) {
			reply(LEAP_RUN_LOAD, 0, 0, 0, "cannot copy the artifact: %s", strerror(errno));
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
		reply(LEAP_RUN_LOAD, 0, 0, 0, "the shared object cannot be loaded: %s", why ? why + 2 : "unknown error");
		return LEAP_RUN_LOAD;
	}
	leap_abi_version_fn ver = (leap_abi_version_fn)(uintptr_t)dlsym(h, LEAP_ABI_VERSION_SYMBOL);
	r->entry = (leap_entry_fn)(uintptr_t)dlsym(h, LEAP_ABI_ENTRY);
	if (!ver || !r->entry) {
		reply(LEAP_RUN_ABI, 0, 0, 0, "the artifact does not export %s", ver ? LEAP_ABI_ENTRY : LEAP_ABI_VERSION_SYMBOL);
		return LEAP_RUN_ABI;
	}
	int v = ver();
	if (v != LEAP_ABI_VERSION) {
		reply(LEAP_RUN_ABI, v, 0, 0, "artifact ABI version %d, expected %d", v, LEAP_ABI_VERSION);
		return LEAP_RUN_ABI;
	}
	crash_report_init(h); /* where a fault happens, for the feedback (runner/crash.c) */
	return LEAP_RUN_OK;
}

/* Maps the arena (fd LEAP_RUN_FD_SHM) with at least `len` bytes. Returns 0 or -1. */
static int map_arena(struct runner *r, uint64_t len)
{
	if (r->arena && r->arena_len == len)
		return 0;
	struct stat st;
	if (fstat(LEAP_RUN_FD_SHM, &st) || st.st_size < 0 || (uint64_t)st.st_size < len || len > SIZE_MAX)
		return -1;
	if (r->arena)
		munmap(r->arena, r->arena_len);
	r->arena = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, LEAP_RUN_FD_SHM, 0);
	if (r->arena == MAP_FAILED) {
		r->arena = NULL;
		return -1;
	}
	r->arena_len = len;
	return 0;
}

/* Makes r->bufs hold buffers of the sizes of `p`, reusing those of the same size. */
static int buffers(struct runner *r, const struct leap_run_param *p, uint32_t n)
{
	if (n > r->nbufs) {
		void **nb = realloc(r->bufs, n * sizeof *nb);
		uint64_t *nbytes = realloc(r->buf_bytes, n * sizeof *nbytes);
		if (nb)
			r->bufs = nb;
		if (nbytes)
			r->buf_bytes = nbytes;
		if (!nb || !nbytes)
			return -1;
		for (uint32_t i = r->nbufs; i < n; i++) {
			r->bufs[i] = NULL;
			r->buf_bytes[i] = 0;
		}
		r->nbufs = n;
	}
	for (uint32_t i = 0; i < r->nbufs; i++) {
		uint64_t want = i < n && p[i].kind != LEAP_RUN_K_SCALAR ? p[i].bytes : 0;
		if (r->bufs[i] && r->buf_bytes[i] == want)
			continue;
		if (r->bufs[i])
			rb_free(r->rb, r->bufs[i], r->buf_bytes[i]);
		r->bufs[i] = NULL;
		r->buf_bytes[i] = 0;
		if (want) {
			r->bufs[i] = rb_alloc(r->rb, want);
			if (!r->bufs[i])
				return -1;
			r->buf_bytes[i] = want;
		}
	}
	return 0;
}

static void unstage(struct rb *b, void **staged, size_t nslots, const struct leap_run_param *p, uint32_t np);
static int run_calls(struct runner *r, const struct leap_run_cmd *c, const struct leap_run_param *p, void **args,
		     void **staged, char *msg);

/* Runs one command (header already read). Returns 0 to go on, -1 to stop. */
static int command(struct runner *r, const struct leap_run_cmd *c)
{
	if (c->nparams > LEAP_RUN_MAX_PARAMS || c->nsets == 0 || c->nsets > 1024 || c->ncalls > 1000000 ||
	    c->warmup > 1000000) {
		reply(LEAP_RUN_PROTO, 0, 0, 0, "malformed command");
		return -1;
	}
	struct leap_run_param *p = realloc(r->params, (c->nparams ? c->nparams : 1) * sizeof *p);
	if (!p) {
		reply(LEAP_RUN_NOMEM, 0, 0, 0, "out of memory");
		return -1;
	}
	r->params = p;
	if (leap_read_full(LEAP_RUN_FD_CMD, p, c->nparams * sizeof *p))
		return -1;
	size_t nslots = (size_t)c->nsets * c->nparams + 1;
	uint64_t *in = realloc(r->in, nslots * sizeof *in);
	if (in)
		r->in = in;
	uint64_t *out = realloc(r->out, nslots * sizeof *out);
	if (out)
		r->out = out;
	uint64_t *after = realloc(r->after, nslots * sizeof *after);
	if (after)
		r->after = after;
	struct leap_run_time *times = realloc(r->times, ((size_t)c->ncalls + 1) * sizeof *times);
	if (times)
		r->times = times;
	if (!in || !out || !after || !times) {
		reply(LEAP_RUN_NOMEM, 0, 0, 0, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < c->nparams; i++)
		if (p[i].kind > LEAP_RUN_K_INOUT || (p[i].kind != LEAP_RUN_K_SCALAR && (p[i].elsize == 0 || p[i].elsize > 8))) {
			reply(LEAP_RUN_PROTO, 0, 0, i, "malformed parameter");
			return -1;
		}
	uint64_t need = leap_run_layout(p, c->nparams, c->nsets, in, out, after);
	if (!need || need > c->arena || map_arena(r, c->arena)) {
		reply(LEAP_RUN_PROTO, 0, 0, 0, "the arena does not match the command");
		return -1;
	}
	if (buffers(r, p, c->nparams)) {
		reply(LEAP_RUN_NOMEM, 0, 0, 0, "cannot allocate the buffers of this case");
		return 0;
	}
	void *args[LEAP_RUN_MAX_PARAMS];
	for (uint32_t i = 0; i < c->nparams; i++)
		args[i] = p[i].kind == LEAP_RUN_K_SCALAR ? (void *)p[i].value : r->bufs[i];
	char msg[LEAP_RUN_MSG] = "";
	uint32_t total = c->warmup + c->ncalls;
	/* On a device, repeated calls restore their inputs from device-side copies of the sets
	 * (uploaded once per command) instead of uploading them again. */
	void **staged = NULL;
	if (rb_is_device(r->rb) && total > 1 && c->nparams > 0) {
		staged = calloc(nslots, sizeof *staged);
		for (size_t k = 0; staged && k + 1 < nslots; k++) {
			uint32_t i = (uint32_t)(k % c->nparams);
			if (p[i].kind != LEAP_RUN_K_IN && p[i].kind != LEAP_RUN_K_INOUT)
				continue;
			staged[k] = rb_alloc(r->rb, p[i].bytes);
			if (!staged[k] || rb_upload(r->rb, staged[k], r->arena + in[k], p[i].bytes, msg)) {
				unstage(r->rb, staged, nslots, p, c->nparams);
				staged = NULL; /* fall back to uploads */
			}
		}
	}
	int rc = run_calls(r, c, p, args, staged, msg);
	unstage(r->rb, staged, nslots, p, c->nparams);
	return rc;
}

/* Frees the staged input copies. */
static void unstage(struct rb *b, void **staged, size_t nslots, const struct leap_run_param *p, uint32_t np)
{
	if (!staged)
		return;
	for (size_t k = 0; k + 1 < nslots; k++)
		if (staged[k])
			rb_free(b, staged[k], p[k % np].bytes);
	free(staged);
}

/* The calls of one command (see command()); replies once. Returns 0 to go on, -1 to stop. */
static int run_calls(struct runner *r, const struct leap_run_cmd *c, const struct leap_run_param *p, void **args,
		     void **staged, char *msg)
{
	uint32_t total = c->warmup + c->ncalls;
	uint64_t *in = r->in, *out = r->out, *after = r->after;
	for (uint32_t call = 0; call < total; call++) {
		size_t base = (size_t)((call + c->first) % c->nsets) * c->nparams;
		int st = LEAP_RUN_OK;
		int copy_back = !(c->flags & LEAP_RUN_F_LAST_OUT) || call + c->nsets >= total;
		for (uint32_t i = 0; i < c->nparams && st == LEAP_RUN_OK; i++) {
			if ((p[i].kind == LEAP_RUN_K_IN || p[i].kind == LEAP_RUN_K_INOUT) && staged && staged[base + i])
				st = rb_copy(r->rb, r->bufs[i], staged[base + i], p[i].bytes, msg);
			else if (p[i].kind == LEAP_RUN_K_IN || p[i].kind == LEAP_RUN_K_INOUT)
				st = rb_upload(r->rb, r->bufs[i], r->arena + in[base + i], p[i].bytes, msg);
			else if (p[i].kind == LEAP_RUN_K_OUT)
				st = rb_poison(r->rb, r->bufs[i], p[i].bytes, p[i].poison, p[i].elsize, msg);
		}
		if (st) {
			reply(st, 0, call, 0, "%s", msg);
			return 0;
		}
		struct leap_run_time t = {0, 0};
		int code = 0;
		st = rb_call(r->rb, r->entry, args, c->flags, &t, &code, msg);
		if (st) {
			reply(st, code, call, 0, "%s", msg);
			return 0;
		}
		if (call >= c->warmup)
			r->times[call - c->warmup] = t;
		for (uint32_t i = 0; i < c->nparams && st == LEAP_RUN_OK; i++) {
			if (p[i].kind == LEAP_RUN_K_SCALAR)
				continue;
			if (!copy_back)
				;
			else if (p[i].kind != LEAP_RUN_K_IN)
				st = rb_download(r->rb, r->arena + out[base + i], r->bufs[i], p[i].bytes, msg);
			else if (c->flags & LEAP_RUN_F_AFTER)
				st = rb_download(r->rb, r->arena + after[base + i], r->bufs[i], p[i].bytes, msg);
			if (st == LEAP_RUN_OK && !rb_guard_ok(r->rb, r->bufs[i], p[i].bytes)) {
				reply(LEAP_RUN_OVERRUN, 0, call, i, "wrote outside the bounds of a buffer");
				return 0;
			}
		}
		if (st) {
			reply(st, 0, call, 0, "%s", msg);
			return 0;
		}
	}
	struct leap_run_reply rr;
	memset(&rr, 0, sizeof rr);
	rr.magic = LEAP_RUN_MAGIC;
	rr.status = LEAP_RUN_OK;
	rr.ncalls = c->ncalls;
	if (leap_write_full(LEAP_RUN_FD_REPLY, &rr, sizeof rr) ||
	    leap_write_full(LEAP_RUN_FD_REPLY, r->times, c->ncalls * sizeof *r->times))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct runner r;
	memset(&r, 0, sizeof r);
	char msg[LEAP_RUN_MSG] = "";
	int st = rb_init(&r.rb, argc > 1 ? argv[1] : "-", msg);
	if (st) {
		reply(st, 0, 0, 0, "%s", msg);
		return 1;
	}
	if (load(&r))
		return 1;
	reply(LEAP_RUN_OK, 0, 0, 0, "%s", msg); /* the hello names the device */
	for (;;) {
		struct leap_run_cmd c;
		if (leap_read_full(LEAP_RUN_FD_CMD, &c, sizeof c))
			return LEAP_RUN_EXIT_LOST;
		if (c.magic != LEAP_RUN_MAGIC || c.op == LEAP_RUN_OP_QUIT)
			return 0;
		if (c.op == LEAP_RUN_OP_PROBE) {
			struct leap_run_time t = {0, 0};
			char pm[LEAP_RUN_MSG] = "";
			int ps = rb_probe(r.rb, &t.ms, &t.host_ms, pm);
			if (ps) {
				reply(ps, 0, 0, 0, "%s", pm);
				continue;
			}
			struct leap_run_reply rr;
			memset(&rr, 0, sizeof rr);
			rr.magic = LEAP_RUN_MAGIC;
			rr.ncalls = 1;
			if (leap_write_full(LEAP_RUN_FD_REPLY, &rr, sizeof rr) || leap_write_full(LEAP_RUN_FD_REPLY, &t, sizeof t))
				return LEAP_RUN_EXIT_LOST;
			continue;
		}
		if (command(&r, &c))
			return LEAP_RUN_EXIT_LOST;
	}
}
