/* regions.c - the shared regions of a runner child: three memfds leap makes, maps and seals. */
/*
 * A candidate's buffers are leap's shared memory (session.h, struct leap_regions): IN (input
 * slots), OUT (output slots) and CTL (the control page, the call table, the guard list). This
 * process makes them, maps them at the runner's layout (the arena), seals them and writes the
 * control page from its own copy of the layout; the runner maps them and closes their
 * descriptors before the candidate loads. They are reusable from record to record, cleared in
 * between (leap_regions_clear), so that a record maps memory that is already there.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The shared regions: sealed, leap's layout, cleared between records:
 *
 * A candidate's buffers are leap's shared memory: three memfds, IN (input slots), OUT (output
 * slots) and CTL (the control page, the call table, the guard list), mapped by leap and by the
 * runner whose process holds the candidate (`lib/sandbox/regions.c`: `leap_regions_make`,
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
 *   writing; a clear leaves nothing" (regions.c, against lib/sandbox/regions.c: the seals, `ftruncate`
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
 *   whole allocations, with the canary (`clear_client` in `lib/sandbox/session.c`), so nothing of one
 *   candidate reaches the next and a guard one overran is whole again for the next --
 *   tests/cuda.bats "device memory by descriptor: an owner's two descriptors reach leap and,
 *   inherited, every client, cleared first" (without a GPU: the owner is fake_runner.c, which
 *   refuses any other move), check-gpu "a guard damaged while timed is blamed once, then
 *   cleared" (on a GPU).
 *
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "session.h"
#include "core/util.h"
#include "core/banned.h"

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
