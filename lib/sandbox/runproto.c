/* runproto.c - the layout of the shared regions and the descriptor passing of the runner
 * protocol (runproto.h). Both the referee and the runner compute offsets with these functions;
 * its messages are read and written whole with fdio.h. */
/*
 * The referee and the runner must agree on every offset, and the runner holds candidate code
 * that may lie: so there is one layout function, which both call on their own copy of the
 * parameters, and the referee never reads an offset back from the shared regions. Each slot's
 * data sits at the end of its guard-aligned span, 64-byte aligned, with a guard range after
 * it, so that a write past a buffer lands in a guard at once; every size sum is checked and an
 * overflow gives 0, never a wrapped offset. Messages on the pipes are read and written exact
 * (fdio.h: whole messages or an error), since half a message is a protocol error, not a
 * shorter one.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * Guard pages and canaries:
 *
 * Every buffer is a slot of the shared regions the parent laid out (`leap_run_layout2()` in
 * `lib/sandbox/runproto.c`), between two guard pages, ending 64-byte aligned just before the upper one.
 * The parent fills the guards and the slack with 0xFF (a NaN in every floating-point type, so a
 * read past a buffer yields NaN) and checks them, in its own mapping, after every call; the cpu
 * runner makes the guard pages inaccessible (PROT_NONE) before it loads the candidate, so a
 * write past a buffer usually faults at once. cuda: the same layout in device memory (the
 * runner's own copy in leap-verify, the owner's regions in leap-bench), filled with 0xFF when
 * allocated (and, for the owner's client regions, before every client); the host regions are
 * then staging that only the runner's own copies touch, so their guards stay accessible (a
 * pageable copy is made by the CPU), and the slots the candidate may write come back with their
 * guards and are checked on the host (`lib/sandbox/runplan.c`). Tests: "writing past the end of an
 * output buffer is caught by the guard" (overflow.c, cpu); tests/cuda.bats "copy role: host
 * guards stay accessible, copies both ways touch no protected page, nothing goes back into a
 * sealed input" (runplan.c's decisions on a made-up layout); on a GPU, check-gpu "copy role: a
 * write past an output comes back and is caught".
 *
 * Does not stop: reads out of bounds that stay inside mapped memory (no fault, no canary
 * change); writes that skip over a whole guard page into another slot (they land in another
 * call's buffer, which that call overwrites, or in unused memory).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runproto.h"
#include "core/banned.h"

/* x rounded up to a multiple of a (a power of two); 0 on overflow. */
static uint64_t up(uint64_t x, uint64_t a)
{
	uint64_t r = (x + a - 1) & ~(a - 1);
	return r < x ? 0 : r;
}

uint64_t leap_run_table_off(void)
{
	return LEAP_RUN_GUARD; /* the control page comes first */
}

uint64_t leap_run_table_bytes(uint32_t nparams, uint32_t calls)
{
	uint64_t row = (uint64_t)(nparams ? nparams : 1) * sizeof(struct leap_run_arg);
	if (row < sizeof(struct leap_run_xfer))
		row = sizeof(struct leap_run_xfer);
	return up(row * (calls ? calls : 1), LEAP_RUN_GUARD);
}

uint64_t leap_run_guards_cap(uint32_t nparams, uint32_t nslots)
{
	return 2 * (uint64_t)nslots * nparams + 2;
}

/* Places a guarded slot of `bytes` at *off (which is just after a guard): returns the
 * buffer's offset and moves *off past the slot and the guard after it; 0 on overflow. */
static uint64_t slot(uint64_t *off, uint64_t bytes)
{
	uint64_t data = up(bytes, LEAP_RUN_GUARD);
	if (bytes && !data)
		return 0;
	uint64_t at = *off + ((data - bytes) & ~(uint64_t)63);
	uint64_t next = *off + data + LEAP_RUN_GUARD;
	if (next < *off)
		return 0;
	*off = next;
	return at;
}

uint64_t leap_run_guards_off(uint32_t nparams, uint32_t calls)
{
	return leap_run_table_off() + leap_run_table_bytes(nparams, calls);
}

uint64_t leap_run_ctl_len(uint32_t nparams, uint32_t calls, uint32_t nslots)
{
	uint64_t g = leap_run_guards_cap(nparams, nslots) * sizeof(struct leap_run_range);
	return up(leap_run_guards_off(nparams, calls) + g, LEAP_RUN_GUARD);
}

uint64_t leap_run_layout2(const struct leap_run_param *p, uint32_t nparams, uint32_t nslots, uint64_t *in,
			  uint64_t *out, uint64_t *after, uint64_t *in_len, uint64_t *out_len)
{
	uint64_t off = LEAP_RUN_GUARD; /* IN starts with a guard, as OUT does */
	for (uint32_t s = 0; s < nslots; s++)
		for (uint32_t i = 0; i < nparams; i++)
			if (p[i].kind == LEAP_RUN_K_IN) {
				uint64_t at = slot(&off, p[i].bytes);
				if (!at)
					return 0;
				if (in)
					in[(size_t)s * nparams + i] = at;
				if (after)
					after[(size_t)s * nparams + i] = at;
			}
	if (off >= LEAP_RUN_OUT_BASE)
		return 0;
	if (in_len)
		*in_len = off;
	off = LEAP_RUN_GUARD; /* OUT starts with a guard */
	for (uint32_t s = 0; s < nslots; s++)
		for (uint32_t i = 0; i < nparams; i++) {
			size_t k = (size_t)s * nparams + i;
			uint64_t at = 0;
			if (p[i].kind == LEAP_RUN_K_OUT || p[i].kind == LEAP_RUN_K_INOUT) {
				at = slot(&off, p[i].bytes);
				if (!at || off > UINT64_MAX - LEAP_RUN_OUT_BASE)
					return 0;
				at += LEAP_RUN_OUT_BASE;
				if (in && p[i].kind == LEAP_RUN_K_INOUT)
					in[k] = at; /* its input is written where the call finds it */
				if (after)
					after[k] = at;
			} else if (p[i].kind == LEAP_RUN_K_SCALAR) {
				if (in)
					in[k] = 0;
				if (after)
					after[k] = 0;
			}
			if (out && p[i].kind != LEAP_RUN_K_IN)
				out[k] = at;
			else if (out)
				out[k] = 0;
		}
	if (out_len)
		*out_len = off;
	return LEAP_RUN_OUT_BASE + off;
}

uint64_t leap_run_layout(const struct leap_run_param *p, uint32_t nparams, uint32_t nslots, uint64_t *in,
			 uint64_t *out, uint64_t *after)
{
	return leap_run_layout2(p, nparams, nslots, in, out, after, NULL, NULL);
}

void leap_run_canary_ranges(uint64_t off, uint64_t bytes, struct leap_run_range r[4])
{
	uint64_t start = off & ~(uint64_t)(LEAP_RUN_GUARD - 1), end = start + up(bytes, LEAP_RUN_GUARD);
	r[0] = (struct leap_run_range){start - LEAP_RUN_GUARD, LEAP_RUN_GUARD};
	r[1] = (struct leap_run_range){start, off - start};
	r[2] = (struct leap_run_range){off + bytes, end - off - bytes};
	r[3] = (struct leap_run_range){end, LEAP_RUN_GUARD};
}

/* Room for the control message of LEAP_RUN_MAX_FDS descriptors and one more (to see a sender
 * that sent more), aligned as a cmsghdr. */
union fd_cmsg {
	char buf[CMSG_SPACE(sizeof(int) * (LEAP_RUN_MAX_FDS + 1))];
	struct cmsghdr align;
};

int leap_run_send_fds(int sock, const int *fds, int n)
{
	if (n < 1 || n > LEAP_RUN_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	char byte = 'H';
	struct iovec iov = {&byte, 1};
	union fd_cmsg u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			   .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	ssize_t r;
	while ((r = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return r == 1 ? 0 : -1;
}

int leap_run_recv_fds(int sock, int *fds, int n, int nowait)
{
	if (n < 1 || n > LEAP_RUN_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	char byte;
	struct iovec iov = {&byte, 1};
	union fd_cmsg u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t r;
	while ((r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | (nowait ? MSG_DONTWAIT : 0))) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -1;
	/* every descriptor that came is ours to close, whatever else is wrong */
	int got[LEAP_RUN_MAX_FDS + 1], k = 0, bad = r != 1 || (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC));
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		size_t cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < cnt; i++) {
			int d;
			memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof d);
			if (k < LEAP_RUN_MAX_FDS + 1)
				got[k++] = d;
			else
				close(d);
		}
	}
	if (bad || k != n) {
		for (int i = 0; i < k; i++)
			close(got[i]);
		errno = r == 0 ? ECONNRESET : EPROTO;
		return -1;
	}
	memcpy(fds, got, sizeof(int) * (size_t)n);
	return 0;
}
