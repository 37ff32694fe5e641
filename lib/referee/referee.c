/* referee.c - leap-bench's referee: one record timed against its task's baseline by a process
 * the candidate cannot reach. This file is the referee's map and its loop: the design, the
 * bounds, then leap_bench_artifact and the loop it runs (calibration, pairs of blocks), then
 * the pieces the loop uses, in the order it meets them: the blocks and their checks, the
 * sessions. The other jobs are files of their own, sharing struct rec (referee_int.h):
 * - verdict.c: the verdicts (ok, noisy, suspicious; a failure while timed) and the stopping
 *   rule, with verdict.h, the one table of every default of the timing (the target, the runs,
 *   the budget, the bounds below, the floor's margin): what decides when a timing is `ok`;
 * - inpool.c: the input pool (the base sets, the ring of derived sets, the baseline's measures
 *   remembered, the pools kept from task to task);
 * - devmove.c: the device's side: the cuda data moves through the owner (the baseline's
 *   runner) and the probes of the floor (the device's bandwidth, the cpu's memory floor);
 * - refsession.c: what they all open a runner with (the session's options, the opening on the
 *   verifier's device) and the block length they size blocks by.
 * The parts call down only: the loop calls the others, the verdicts the device's probes, those
 * the pool, and all of them refsession.c (tests/house.bats).
 * What outlives a record (the bencher's set-up, the statistics) is bench.c's.
 *
 * This process owns the clock, the inputs and the checks; the candidate's runner is a servant
 * (runproto.h, session.c). What that buys, attack by attack:
 * - time: taken in this process around each block (leap_session_block: thaw, go, done,
 *   freeze), less the cost of an empty block measured the same way on the trusted baseline's
 *   runner; nothing the runner reports is used, so patching its clock or forging its replies
 *   changes no number. On cpu the clock is the running one: less the time every runnable
 *   process of the runner's group waited for a CPU others held (the kernel's count, never the
 *   runner's), but never more than the block's time less the group's CPU time
 *   (leap_block_stall), and the referee itself times at a real-time priority its runners do
 *   not inherit (prio.h), so that a shared machine's waits land in neither side's time;
 * - the speedup: judged as a ratio, not as two medians. Blocks come in pairs, the candidate's
 *   and the baseline's on the same sets, one after the other in alternating order, and each
 *   pair gives the ratio of their times per call; the speedup is the median of those ratios,
 *   with a distribution-free 95% interval. A load that changes slowly slows both blocks of a
 *   pair and cancels in their ratio, instead of widening two intervals;
 * - inputs: every pair runs on sets made for it from the pool's base sets and the secret
 *   stream (ref_pool_fresh: every element mixed with a donor's, fresh values at secret places, so
 *   that no set lines up with one a candidate saw at any offset), made in slots chosen at
 *   random just before each block, past the caches (stream.h), while the candidate is frozen;
 *   the input region is sealed, so inputs cannot be changed; no set comes back within a
 *   record, so remembering results gains nothing. Every call of a block has a set and a slot
 *   of its own, however large the set (large sets make blocks of few calls, never shared
 *   sets): within a block nothing changes the inputs and the call table is the candidate's to
 *   read, so a call on a set an earlier call had could copy that call's output, right to the
 *   bit (bench/blocks.md weighs the ways around it; the fixture is memo_addr.c);
 * - checks: every call of every block is checked, against the baseline's outputs on the same
 *   set, in this process's own mapping of the outputs, after the freeze: work deferred past
 *   "done" (a thread, a fault handler, a child) is either counted in the time or missing from
 *   the outputs; a wrong output makes the record a `mismatch`;
 * - the baseline: trusted code, in a runner of its own, timed with the candidate frozen; its
 *   block size comes from its own time, never from the candidate's;
 * - noise: a speedup interval wider than --target-ci is `noisy`, with no speedup.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The referee (leap-bench):
 *
 * leap-bench's timing is a reward. Its threat model is that of the sandbox plus this: the
 * candidate wants a speedup it did not earn, and its process, once loaded, can patch anything
 * in itself (the runner's clock, the runner's code), speak the runner's protocol with forged
 * numbers, keep threads and children running after a call returns, and remember every input it
 * has seen. leap-bench therefore never uses a number from the candidate's process: its own
 * process is the referee (`lib/referee/referee.c`, `lib/referee/bench.c`, `lib/sandbox/session.c`; the design at the
 * top of each), the runner (`runner/run.c`) only makes the calls of a block when told and says
 * when it is done.
 *
 * Stops (each with its test in leap-bench.bats):
 *
 * - Forged times and a patched clock. The referee times each block on its own clock, from
 *   before the candidate is thawed and told to go to after its answer is read and it is frozen
 *   again, less an empty block's cost measured on the trusted baseline's runner. A kernel that
 *   takes over the protocol and answers at once is found by its unwritten outputs; one that
 *   does the work and forges the times and clock_gettime is measured at its real speed -- "a
 *   kernel that takes over the protocol and forges 'done' is a mismatch" (forge_lazy.c),
 *   "forged times and a frozen clock_gettime change nothing: 4x the work measures about 0.25"
 *   (forge_times.c).
 * - Predictable and repeated inputs. Every call of a record runs on a set made for it by a
 *   secret random stream: a base set rotated, with one element in 16 replaced by an element of
 *   a donor set the candidate never sees, so no set comes back and no derived set is a
 *   permutation of one seen before (its histogram and column maxima change); it is made in a
 *   random slot just before the block while the candidate is frozen (from a seed of the stream,
 *   the same bytes for both blocks of a pair: "sets staged straight into slots, past the
 *   caches, on threads, are the sets derived from their seeds", stream.c); only the block's
 *   sets are in its memory, and the input region is sealed (`F_SEAL_FUTURE_WRITE`: the
 *   candidate maps it read-only) -- "no set comes back in a record: a kernel that remembers
 *   outputs by a hash of its inputs gains nothing" (memo_hash.c), "derived sets carry fresh
 *   values: every histogram and column maximum changes" (derive.c), "a kernel that replays the
 *   output of two calls ago is a mismatch" (replay.c), "inputs are sealed: a kernel that writes
 *   its input while timed crashes; a crash fails the record" (write_input.c).
 * - Unchecked calls. Every call of every block is checked, warm-ups included, against the
 *   baseline's outputs on the same set -- "a kernel that skips the calls it guesses are
 *   unchecked is a mismatch" (skip.c).
 * - Work outside the timed window. There is no copy-back in the candidate's process (its
 *   buffers are the referee's shared memory) and its whole process tree is frozen as soon as a
 *   block answers; the referee reads the outputs then, in its own mapping -- "a fault handler
 *   on protected outputs and a thread that finishes late are mismatches" (fault.c, late.c).
 * - Slowing the baseline. The candidate's tree -- every process and thread, in any session --
 *   is frozen whenever the baseline runs (the cgroup v2 or v1 freezer, else SIGSTOP to every
 *   process of its PID namespace from the namespace's init), and the group's CPU time must not
 *   move while it is frozen (else the timing is refused); the baseline is timed in every pair,
 *   never cached -- "children spinning in sessions of their own are frozen while the baseline
 *   runs" (spin_children.c, hog.c), "the baseline timed beside a spinner is not inflated",
 *   "every freezer works: cgroup v2, cgroup v1 and SIGSTOP from the PID namespace's init".
 * - Denial of service. Block sizes come from the baseline's own time; a candidate's call that
 *   takes more than a hundred times the baseline's call in the same record (so load trips
 *   neither), a hello not given within 2 s plus ten times the trusted runner's start-up, or a
 *   record past `--timeout` ends as the candidate's timeout -- "an instant warm-up is a
 *   mismatch within the budget, and a kernel that turns slow a quick timeout"
 *   (instant_warmup.c, turn_slow.c), "a record has bounds honest work never reaches: a withheld
 *   hello, calls that grow 4x" (withhold_hello.c, grow4x.c).
 * - Wrong only where leap-bench looks. A wrong output while timed makes the record's status
 *   `mismatch` (a crash: `runtime_error`), so no filter downstream rewards it -- "wrong only at
 *   the benchmark size or after N calls: the record's status becomes mismatch" (wrong_after.c,
 *   timing_wrong.c). A timing that ends before its verdict (a hang, a failed freeze, a claimed
 *   lack of device, a withheld message) fails the record too -- "a timing that ends before its
 *   verdict fails the record: a hang, a claimed lack of device" (hang_large.c, nodev_large.c),
 *   "every way a timing can end early fails the record (the rule, for each session outcome)".
 * - Faster than the machine. A median below half the time the candidate's cores need to move
 *   the task's bytes from the fastest place they fit (L1, L2, L3 or memory, sizes from sysfs,
 *   speeds measured by the referee) is `suspicious` -- "the memory floor knows the caches:
 *   bytes that fit one are floored at its speed" (floor.c).
 * - Forged device names. `bench.device`, which keys the floor probe, comes from the baseline's
 *   runner -- "bench.device comes from the baseline's runner, never from the candidate's
 *   messages" (forge_device.c).
 * - Noise. The speedup is the median ratio of pairs of blocks timed one after the other; an
 *   interval of it wider than `--target-ci` is `noisy`; no verdict but `ok` carries a speedup
 *   -- "an interval wider than --target-ci is noisy: no speedup, the measured one named as
 *   unusable", "the interval of the median ratio covers the true ratio on simulated noise
 *   (seeded)"; `bench/referee.sh` times a reference against itself under load.
 * - Stalls left out, and the referee's priority. On cpu a block's time leaves out the time in
 *   which every runnable process of the runner's group waited for a CPU others held (the
 *   group's `cpu.pressure` "full" total), but never more than the block's time less the group's
 *   CPU time: the kernel weighs each CPU's stall by its busy time, so a thread left waiting on a
 *   core another job holds would count as a stall of work running at full speed elsewhere --
 *   "the stall left out never exceeds the block's time less its group's CPU time" (psi_prio.c),
 *   "a thread left waiting on a busy core while the calls run earns nothing on the running
 *   clock" (stall_decoy.c). None of the candidate's work happens in what is left out, and a
 *   candidate can only make that time longer, not its work shorter (no task of its own can be
 *   what holds it off: they are all in the group, and the baseline is frozen). The referee's
 *   own waits are not left out but avoided: its timing thread runs `SCHED_FIFO` (else nice -10)
 *   while it times, with `SCHED_RESET_ON_FORK`, so no runner starts at that priority -- "a
 *   candidate never runs at the referee's priority" (inherit_prio.c), "the running clock leaves
 *   out the time a competitor held the candidate's only core".
 * - Without any way to freeze a candidate, leap-bench does not time -- "without any way to
 *   freeze a candidate leap-bench refuses to time (exit 2, saying why)".
 *
 * Does not stop:
 *
 * - A candidate that knows the derivation. Derived sets are rotations of the seed's base sets
 *   with one element in 16 taken from a secret donor set. A kernel that recognises the rotation
 *   from a few elements could reuse what it computed for the base set where nothing was
 *   replaced, which takes reading every element and comparing it with its remembered input
 *   (about the memory traffic of an elementwise kernel's work) and computing the replaced ones.
 *   Untested.
 * - cuda: work outside the candidate's runner. Work another process of the candidate queues on
 *   the GPU keeps running while its processes are frozen and may finish before the owner reads
 *   the outputs. Untested (needs a GPU).
 * - cuda: a context of the candidate's own. Before "done" the runner waits for its own context
 *   (`cudaDeviceSynchronize`: the primary, with its green contexts) and for every context the
 *   candidate left current on the thread, which it then pops (`own_context` in runner/cuda.cu).
 *   A context the candidate made with `cuCtxCreate` and popped again is out of any runner's
 *   reach: the CUDA API has no call that waits for every context of a process but
 *   `cuCheckpointProcessLock`, from another process. Its work keeps running after "done"; it
 *   counts only if it ends before the owner reads the outputs, and a kernel there meets
 *   leap-verify first (whether it can reach the runner's memory at all is for the first GPU to
 *   say: check-gpu "own context, popped: no pass, no unearned speedup", own_context.cu). Timing
 *   through the owner's read (the referee's loop) would close it.
 * - Without cgroups. With the PID-namespace freezer there is no CPU accounting (no check that
 *   the freezer held) and without a cgroup cpuset the candidate's cores are only the affinity
 *   it inherits, which it may widen. Tested only in part ("every freezer works").
 * - With `--no-namespaces`, `/tmp` is shared between candidates: a kernel may keep what it
 *   learned in a file for the next record of the run (the base sets are the same for every
 *   record of a task and seed), and then meets the limit above. Untested. (Without root, the
 *   user namespace gives each candidate its own `/tmp` as root does: security.bats.)
 * - The machine's load. A burst that hits one block of a pair and not the other moves that
 *   pair's ratio where the running clock cannot see it (a competitor's memory traffic and cache
 *   use, the hypervisor's steal, another thread of a parallel kernel waiting); many make the
 *   interval wide (noisy). Processes other than leap-compile and leap-verify of the same cache
 *   do not take the timing lock. bench/README.md has the self-test's figures.
 * - Idle time beside a waiting thread. A block holds time in which the runner is idle, not
 *   stalled: the hand-over with the referee around its calls (thaw, go, done, freeze), about
 *   what overhead_ms takes out of every block. A thread the candidate leaves waiting on a busy
 *   core makes that time a stall, which is left out (none of its threads ran): a block can come
 *   out shorter than its twin's by at most that hand-over. Untested.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "prio.h"
#include "referee_int.h"
#include "core/rng.h"
#include "core/sig.h"
#include "tlock.h"
#include "core/util.h"
#include "core/banned.h"

/* Blocks the calibration times (the least taken). */
#define CALIBRATE_BLOCKS 7

/* The bounds on a record's time, which honest work never reaches and a stall always does, are
 * verdict.h's (LEAP_BENCH_SLOW and the graces: a block of the candidate within SLOW times the
 * baseline's calls, its runner's hello within HELLO_SLOW times the trusted runner's start-up);
 * cand_block and open_sessions apply them. The whole record, from the runner's start to the
 * verdict, has --timeout (the absolute cap: a stall the scaled bounds let through cannot hold a
 * rollout step longer). */

/* The pieces, in the order they are defined below. */
static json_t *time_record(struct rec *R, const char *artifact, const char *base_art, enum leap_status *st);
static int rec_loop(struct rec *R);
static int calibrate(struct rec *R);
static int pair(struct rec *R, uint32_t k, int cand_first, int sample);
static uint32_t next_k(const struct rec *R, int from_warmup);
static int cand_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n, int first);
static int base_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n);
static double per_call(const struct rec *R, const struct leap_block *bt, uint32_t n);
static double block_ms(const struct rec *R, const struct leap_block *bt);
static double base_call_ms(const struct rec *R);
static void pick_slots(struct rec *R, uint32_t *perm, uint32_t n);
static void stage(struct rec *R, struct leap_session *s, const uint32_t *sets, const uint32_t *slots, uint32_t n);
static int check_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, const uint32_t *bslots,
		uint32_t n);
static json_t *check_call(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot, int inputs, char **msg);
static int identical(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot);
static struct leap_session *view(struct rec *R);
static int in_place(const struct rec *R);
static int open_sessions(struct rec *R, const char *artifact, const char *base_art);
static void close_sessions(struct rec *R, char **why, int *timeout, struct leap_buf *output);
static void rec_free(struct rec *R);
static int lock_pool_device(struct leap_bencher *B, const struct leap_bpool *P, enum leap_backend b, char **err);

/* ---- one record ---- */

/* leap_bench_artifact (bench.h): the locks, the pool, then time_record. */
json_t *leap_bench_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
			    const char *artifact, uint64_t seed, enum leap_status *st, char **err)
{
	double t0 = leap_now();
	*err = NULL;
	*st = LEAP_ST_NONE;
	int skip = 0;
	char *base_art = ref_baseline_artifact(B, t, b, &skip, err);
	if (!base_art && skip) { /* the task's fault, not the candidate's: not timed, saying why */
		json_t *out = json_pack("{s:s,s:s++}", "status", "skipped", "message", "not timed: ", *err, "");
		free(*err);
		*err = NULL;
		return out;
	}
	if (!base_art)
		return NULL;
	struct rec R;
	memset(&R, 0, sizeof R);
	R.B = B;
	R.t = t;
	R.b = b;
	json_t *out = NULL;
	struct leap_prio prio;
	R.prio = leap_prio_raise(&prio); /* the referee takes the CPU first (prio.h) */
	/* cpu: the pool is made under the timing lock (its baseline runs on the timed cores), which
	 * also holds back leap-compile and leap-verify of this cache; cuda: the lock is the GPU's,
	 * named by the UUID the pool's baseline found */
	int cpu = leap_backend_has(b, LEAP_BK_HOST), lock[2] = {-1, -1}, nodev = 0;
	int locked = cpu && leap_timing_lock(B->v->o.cache, &B->lock_said, lock, &R.err) == 0;
	if ((!cpu || locked) && (R.P = ref_pool_get(B, t, b, seed, base_art, &nodev, &R.err)) && !cpu)
		locked = (lock[0] = lock_pool_device(B, R.P, b, &R.err)) >= 0;
	if (locked && R.P) {
		R.d = &R.P->d;
		out = time_record(&R, artifact, base_art, st);
	} else if (nodev) {
		out = json_pack("{s:s,s:s++}", "status", "no_device", "message", "Not timed: ", R.err, ".");
		free(R.err);
		R.err = NULL;
	}
	leap_timing_unlock(lock);
	leap_prio_restore(&prio);
	if (out) {
		json_object_set_new(out, "seed", json_integer((json_int_t)seed));
		json_object_set_new(out, "ms", json_real((leap_now() - t0) * 1e3));
	} else {
		*err = R.err ? R.err : xstrdup("internal error: no verdict");
		R.err = NULL;
		*st = LEAP_ST_NONE;
	}
	free(R.err);
	rec_free(&R);
	free(base_art);
	return out;
}

/* Times one record on the pool (the device lock held). Returns the bench object, or NULL with
 * R->err. */
static json_t *time_record(struct rec *R, const char *artifact, const char *base_art, enum leap_status *st)
{
	R->overrun = -1;
	R->perm = xcalloc(2 * (size_t)R->P->slots, sizeof *R->perm);
	R->target = R->B->o.target_ci[R->b];
	json_t *out = NULL;
	if (open_sessions(R, artifact, base_art) == 0 && R->r == LEAP_SESS_OK)
		rec_loop(R);
	char *why = NULL;
	int timeout = 0;
	struct leap_buf output = {0};
	close_sessions(R, &why, &timeout, &output);
	if (!R->err) {
		if (R->r != LEAP_SESS_OK)
			out = ref_verdict_failed(R, why, timeout, st);
		else if (R->mismatch || R->overrun >= 0)
			out = ref_verdict_wrong(R, st);
		else
			out = ref_verdict_timed(R, base_art);
		json_object_set_new(out, "device", json_string(R->P->device)); /* trusted: the baseline's runner said it */
		json_object_set_new(out, "case", leap_case_json(R->t, leap_task_bench_case(R->t, R->b)));
		if (output.len)
			json_object_set_new(out, "output", json_string(output.s));
	}
	free(why);
	leap_buf_free(&output);
	return out;
}

/* The timing loop: calibration, a warm-up pair (one call each, the baseline's first), then pairs
 * in alternating order until ref_rec_done. Returns 0, or -1 with R->err. The candidate's failures
 * end it with R->r / R->mismatch / R->overrun. */
static int rec_loop(struct rec *R)
{
	double t0 = leap_now();
	uint64_t ns;
	/* the running clock only where both runners' stalls are reported, with the CPU time that
	 * bounds them (leap_block_stall): a ratio of two clocks would be no ratio; never on cuda,
	 * where the device works while its host thread waits */
	R->running = leap_backend_has(R->b, LEAP_BK_HOST) && !R->B->o.wall_clock && leap_sandbox_stalled(&R->cs.sb, &ns) == 0 &&
		     leap_sandbox_stalled(&R->bs->sb, &ns) == 0 && leap_sandbox_usage(&R->cs.sb, &ns) == 0 &&
		     leap_sandbox_usage(&R->bs->sb, &ns) == 0;
	if (calibrate(R))
		return -1;
	R->base_ms = R->P->call_ms;
	int r = pair(R, 1, 0, 0);
	if (r)
		return r < 0 ? -1 : 0;
	R->k = next_k(R, 1);
	for (long i = 0;; i++) {
		if ((r = pair(R, R->k, i % 2 == 0, 1)))
			return r < 0 ? -1 : 0;
		R->k = next_k(R, 0);
		if (ref_rec_done(R, leap_now() - t0) || leap_signal_caught())
			return 0;
	}
}

/* ---- the loop's steps ---- */

/* The cost of a block beyond its calls: empty blocks (the same thaw, go, done and freeze, no
 * call, the same table walk) on the baseline's runner, which the candidate cannot slow down.
 * Returns 0 or -1. */
static int calibrate(struct rec *R)
{
	double x[CALIBRATE_BLOCKS];
	uint32_t k = R->P->kb;
	for (int i = 0; i < CALIBRATE_BLOCKS; i++) {
		struct leap_block bt;
		pick_slots(R, R->perm, k);
		if (leap_session_block(R->bs, R->d, R->perm, k, LEAP_RUN_OP_EMPTY, &bt) != LEAP_SESS_OK) {
			R->err = xasprintf("the baseline of task '%s' failed to calibrate: %s", R->t->id, R->bs->last.msg);
			return -1;
		}
		x[i] = block_ms(R, &bt);
	}
	/* the least: the block's fixed cost, which noise (a preemption) can only lengthen */
	struct leap_stats st;
	leap_stats(x, CALIBRATE_BLOCKS, &st);
	R->ovh = st.min;
	return 0;
}

/* One pair: k fresh sets, the candidate's block and the baseline's on them (in slots of their
 * own, in the order `cand_first`), then every call of the candidate checked against the
 * baseline's outputs. `sample`: the pair's times and ratio count (not the warm-up). Returns 0,
 * 1 when the candidate ended the record, or -1 (the harness: R->err).
 * On cpu the candidate's outputs are compared with the baseline's in the baseline's own slot,
 * where its block left them: they are never copied out. */
static int pair(struct rec *R, uint32_t k, int cand_first, int sample)
{
	double t0 = leap_now();
	uint32_t sets[LEAP_RUN_MAX_CALLS];
	int own = leap_backend_has(R->b, LEAP_BK_OWNER);
	for (uint32_t j = 0; j < k; j++) /* cpu: made in each block's slots by stage */
		sets[j] = ref_pool_fresh(R->P, own);
	uint32_t *cslots = R->perm, *bslots = R->perm + (own ? k : R->P->slots);
	if (own) {
		pick_slots(R, cslots, 2 * k); /* of the owner's one host region */
	} else {
		pick_slots(R, cslots, k);
		pick_slots(R, bslots, k);
	}
	if (!cand_first && base_block(R, sets, bslots, k))
		return -1;
	if (cand_block(R, sets, cslots, k, !sample))
		return 1;
	if (cand_first && base_block(R, sets, bslots, k))
		return -1;
	if ((own && ref_fetch_dev(R, 1, cslots, k)) || check_block(R, sets, cslots, bslots, k))
		return R->err ? -1 : 1;
	/* the referee's own clock, less both blocks as timed: what the sets cost the host */
	double host = (leap_now() - t0) * 1e3 - (double)k * (R->cand_ms + R->base_ms) - 2.0 * R->ovh;
	R->host_ms = host > 0 ? host / (double)k : 0;
	R->calls += k;
	if (sample) {
		ref_series_add(&R->cand, R->cand_ms, k);
		ref_series_add(&R->base, R->base_ms, k);
		ref_series_add(&R->ratio, R->base_ms / R->cand_ms, k);
	}
	return 0;
}

/* The next pair's calls: both blocks aim at the block target (the slower one reaches it),
 * changing by at most a factor of two, within the pool's slots; and never more than fit, with
 * the host's part of each (making its set, moving it and checking its outputs), in a pair's
 * share of --max-time, so that --min-runs pairs still fit the budget. A set costs the host its
 * bytes whatever the call reads: on large sets the pool's slots (on cuda sized from the device)
 * would otherwise make each pair take seconds. Within the budget, more calls a block is the
 * narrower interval (bench/blocks.md). From the warm-up's one call the host's part is mostly
 * what a pair costs whatever its calls: not a measure per call. */
static uint32_t next_k(const struct rec *R, int from_warmup)
{
	double slower = R->cand_ms > R->base_ms ? R->cand_ms : R->base_ms;
	double k = ref_block_target(&R->B->o) / (slower > 1e-6 ? slower : 1e-6);
	if (!from_warmup) {
		double lo = R->k / 2.0, hi = 2.0 * R->k;
		k = k < lo ? lo : k > hi ? hi : k;
	}
	double share = R->B->o.max_time * 1e3 / (double)(R->B->o.min_runs > 0 ? R->B->o.min_runs : 1);
	double per_call = R->cand_ms + R->base_ms + R->host_ms;
	if (!from_warmup && R->host_ms > 0 && k * per_call > share)
		k = share / per_call;
	return k < 1 ? 1 : k > R->P->kb ? R->P->kb : (uint32_t)k;
}

/* ---- the blocks of a pair ---- */

/* The candidate's block: sets[j] in slots[j], n calls, timed, within the record's bounds
 * (LEAP_BENCH_SLOW). `first`: its first call in the record. Returns 0, or 1 when the record
 * ends (R->r). */
static int cand_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n, int first)
{
	int own = leap_backend_has(R->b, LEAP_BK_OWNER);
	if (own ? ref_stage_dev(R, 1, sets, slots, n) : (stage(R, &R->cs, sets, slots, n), 0))
		return 1;
	struct leap_block bt;
	double saved = R->cs.sb.deadline;
	double grace = first ? LEAP_BENCH_FIRST_GRACE : LEAP_BENCH_BLOCK_GRACE;
	double limit = grace + n * LEAP_BENCH_SLOW * base_call_ms(R) / 1e3;
	if (leap_now() + limit < saved)
		R->cs.sb.deadline = leap_now() + limit;
	R->r = leap_session_block(&R->cs, R->d, slots, n, LEAP_RUN_OP_CALL, &bt);
	if (R->r == LEAP_SESS_TIMEOUT && R->cs.sb.deadline < saved)
		R->block_limit = limit;
	R->cs.sb.deadline = saved;
	if (R->r != LEAP_SESS_OK)
		return 1;
	R->cand_ms = per_call(R, &bt, n);
	if (bt.stall_ms > 0)
		R->stall_ms += bt.stall_ms;
	if (R->cpu_ms >= 0)
		R->cpu_ms = bt.cpu_ms >= 0 ? R->cpu_ms + bt.cpu_ms : -1;
	return 0;
}

/* The baseline's block on the same sets (in slots of its own): timed, its outputs kept as the
 * sets' expected outputs. Returns 0, or -1 (the baseline failed: R->err). */
static int base_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	int own = leap_backend_has(R->b, LEAP_BK_OWNER);
	if (own ? ref_stage_dev(R, 0, sets, slots, n) : (stage(R, R->bs, sets, slots, n), 0))
		return -1;
	struct leap_block bt;
	int r = leap_session_block(R->bs, R->d, slots, n, LEAP_RUN_OP_CALL, &bt);
	if (r == LEAP_SESS_OK && own && ref_fetch_dev(R, 0, slots, n))
		return -1;
	if (r != LEAP_SESS_OK) {
		R->err = xasprintf("the baseline of task '%s' failed while timed: %s", R->t->id,
				   R->bs->last.msg[0] ? R->bs->last.msg : "its runner died");
		return -1;
	}
	for (uint32_t j = 0; !in_place(R) && j < n; j++) /* else check_block reads them in place */
		leap_case_expect(R->d, sets[j], slots[j], R->bs->arena);
	R->base_ms = per_call(R, &bt, n);
	return 0;
}

/* A block's time on the record's clock: on the running clock less the time the runner's
 * processes all waited for a CPU that others held (time in which none of them ran cannot be
 * their work, and on a shared machine it is most of the noise: bench/README.md section 6). */
static double block_ms(const struct rec *R, const struct leap_block *bt)
{
	return bt->ms - (R->running && bt->stall_ms > 0 ? bt->stall_ms : 0);
}

/* The time per call of a block of n calls less the empty block's cost (never below 1 ns). */
static double per_call(const struct rec *R, const struct leap_block *bt, uint32_t n)
{
	double per = (block_ms(R, bt) - R->ovh) / n;
	return per > 1e-6 ? per : 1e-6;
}

/* The baseline's time per call in this record: the median of its timed blocks, or its warm-up
 * (or, before that, what it took when the pool was made). */
static double base_call_ms(const struct rec *R)
{
	if (R->base.n) {
		struct leap_stats st;
		ref_series_stats(&R->base, &st);
		return st.median;
	}
	return R->base_ms > 0 ? R->base_ms : R->P->call_ms;
}

/* Picks n distinct slots of a region in random order into perm[0..n) (perm holds a region's
 * slots). */
static void pick_slots(struct rec *R, uint32_t *perm, uint32_t n)
{
	uint32_t m = R->P->slots;
	for (uint32_t i = 0; i < m; i++)
		perm[i] = i;
	for (uint32_t i = 0; i < n && i < m; i++) {
		uint32_t j = i + (uint32_t)(leap_rng_next(&R->P->rng) % (m - i));
		uint32_t x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
}

/* Stages sets[0..n) into slots[0..n) of session s (cpu), right before its block: each set
 * derived straight into its slot with streaming stores, so that the block finds none of its
 * inputs in a cache whatever ran before (stream.h), and its outputs poisoned. Both blocks of a
 * pair start alike that way. Taken back, with what showed it (bench/README.md section 6):
 * copying the inputs from a set derived once (the first block found them in the cache more than
 * the second: a column maximum 40% faster when first); poisoning the outputs past the caches
 * too (the self-test's interval then covered 1 in 75% to 97.5% of runs); staging the second
 * block from the first's slots (vector_add's pairs spread twice as wide); leaving the
 * baseline's outputs unpoisoned (an identical candidate measured 1.6% faster). */
static void stage(struct rec *R, struct leap_session *s, const uint32_t *sets, const uint32_t *slots, uint32_t n)
{
	const struct leap_bpool *P = R->P;
	struct leap_case_recipe r[LEAP_RUN_MAX_CALLS];
	for (uint32_t j = 0; j < n; j++) {
		uint32_t base = P->ring_base[sets[j]];
		r[j] = (struct leap_case_recipe){.slot = slots[j], .src = base, .donor = P->cap + base,
						 .seed = P->ring_seed[sets[j]]};
	}
	leap_session_derive(s, R->d, r, n, FRESH_EVERY, R->B->stage_threads);
}

/* Checks every call of a candidate block (sets[j] in slots[j]; the baseline's block of the pair
 * ran set j in bslots[j]); records the first failure. Returns 0 or 1 (failed). */
static int check_block(struct rec *R, const uint32_t *sets, const uint32_t *slots, const uint32_t *bslots,
		       uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		int bad = leap_session_guards(view(R), R->d, slots[j]);
		if (bad < 0 && identical(R, sets[j], slots[j], bslots[j]))
			continue;
		/* inputs are checked where the candidate could write them: an unsealed host region,
		 * against the set made in its own buffers (only then: a candidate whose outputs are
		 * right but not the baseline's to the bit comes here on every call); on cuda they are
		 * staged afresh from the pool for every block, so a changed input can only make that
		 * call's own outputs wrong */
		int inputs = !leap_backend_has(R->b, LEAP_BK_OWNER) && !R->cs.sealed;
		if (inputs)
			ref_pool_make(R->P, sets[j]);
		json_t *mm = NULL;
		char *m = NULL;
		if (bad < 0 && !(mm = check_call(R, sets[j], slots[j], bslots[j], inputs, &m)))
			continue;
		if (mm && !R->P->made[sets[j]] && leap_case_quotes_inputs(R->d)) {
			/* the message quotes the set's inputs: made now, and the call checked again */
			char *m2 = NULL;
			ref_pool_make(R->P, sets[j]);
			json_t *mm2 = check_call(R, sets[j], slots[j], bslots[j], 0, &m2);
			if (mm2) {
				json_decref(mm);
				free(m);
				mm = mm2;
				m = m2;
			}
		}
		R->overrun = bad;
		R->mismatch = mm;
		R->mmsg = m;
		R->bad_call = R->calls + j;
		R->bad_set = sets[j];
		return 1;
	}
	return 0;
}

/* The element-wise check of one call (set `set` in the candidate's slot `slot`): on cpu against
 * the baseline's outputs in its own slot `bslot`, where its block left them (no copy), on cuda
 * against the set's expected outputs. Returns NULL or the mismatch (*msg its message). */
static json_t *check_call(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot, int inputs, char **msg)
{
	struct leap_errstats es = {0, 0};
	return leap_case_check_against(R->d, set, slot, view(R)->arena, in_place(R) ? R->bs->arena : NULL, bslot, inputs,
				       &es, msg);
}

/* 1 when every output of slot `slot` is, byte for byte, the expected output of set `set`, or
 * in place the baseline's output in its slot `bslot` (the common case on cpu, where the candidate
 * often sums in the baseline's order): no element-wise comparison needed. */
static int identical(struct rec *R, uint32_t set, uint32_t slot, uint32_t bslot)
{
	const struct leap_case_data *d = R->d;
	size_t np = R->t->nparams;
	if (!R->cs.sealed)
		return 0; /* inputs must be compared too */
	for (size_t p = 0; p < np; p++) {
		const unsigned char *want = !d->want[(size_t)set * np + p] ? NULL
					    : in_place(R) ? R->bs->arena + d->out[(size_t)bslot * np + p]
							: d->want[(size_t)set * np + p];
		if (want && memcmp(view(R)->arena + d->out[(size_t)slot * np + p], want, (size_t)d->rp[p].bytes))
			return 0;
	}
	return 1;
}

/* 1 where the candidate's outputs are checked against the baseline's in the baseline's own
 * slot (cpu: this process maps both); on cuda the baseline's are kept as the set's expected
 * outputs right after its block. */
static int in_place(const struct rec *R)
{
	return !leap_backend_has(R->b, LEAP_BK_OWNER);
}

/* Where this process reads the outputs of a block: the candidate's own shared memory (cpu), or
 * the owner's host region the outputs were fetched into (cuda). */
static struct leap_session *view(struct rec *R)
{
	return leap_backend_has(R->b, LEAP_BK_OWNER) ? R->bs : &R->cs;
}

/* ---- the sessions ---- */

/* Starts the candidate's session and, unless the pool keeps a live one, the baseline's (the
 * baseline first: on cuda it owns the device memory); both are frozen between blocks.
 * Returns 0 (R->r says whether the candidate's started), or -1 with R->err. */
static int open_sessions(struct rec *R, const char *artifact, const char *base_art)
{
	struct leap_bpool *P = R->P;
	int own = leap_backend_has(R->b, LEAP_BK_OWNER); /* the baseline's runner owns the memory */
	struct leap_session_opts so = ref_session_opts(R->B, R->d, R->b, P->slots, 1);
	if (P->have_bs && P->bs.dead) {
		leap_session_end(&P->bs, NULL, NULL, NULL, 0);
		P->have_bs = 0;
	}
	if (!P->have_bs) {
		struct leap_session_opts os = so;
		ref_base_session(R->B, R->t, R->b, &os); /* a module task's torch: torchbase.h */
		if (own) { /* the owner of the device memory, its pool of input sets included */
			os.role = "owner";
			os.pool_len = (uint64_t)P->cap * P->in_set;
			memset(P->on_dev, 0, P->cap);
		}
		int r = ref_session_open(R->B->v, &P->bs, R->b, base_art, &os, &R->err);
		if (r < 0)
			return -1;
		P->have_bs = 1;
		if (r != LEAP_SESS_OK) {
			R->err = xasprintf("the baseline of task '%s' failed to start: %s", R->t->id, P->bs.last.msg);
			return -1;
		}
	}
	if (own) { /* the owner's client regions, cleared for it, by descriptor */
		so.role = "client";
		so.owner = &P->bs;
	}
	R->bs = &P->bs;
	R->bs->sb.deadline = leap_now() + R->B->sb.timeout; /* a new record, a new deadline */
	if (!P->have_creg) {
		if (leap_regions_make(&P->creg, &so, &R->err))
			return -1;
		P->have_creg = 1;
	}
	so.regions = &P->creg;
	so.hello_s = LEAP_BENCH_HELLO_GRACE + LEAP_BENCH_HELLO_SLOW * P->start_ms / 1e3;
	R->r = ref_session_open(R->B->v, &R->cs, R->b, artifact, &so, &R->err);
	if (R->r < 0)
		return -1;
	R->have_cs = 1;
	return 0;
}

/* Ends both sessions; how the candidate's runner died, if it did, goes to *why and *timeout,
 * its output to `output`. A sandbox that never ran the runner is a harness error (R->err). */
static void close_sessions(struct rec *R, char **why, int *timeout, struct leap_buf *output)
{
	if (R->have_cs)
		leap_session_end(&R->cs, why, timeout, output, 2048);
	struct leap_bpool *P = R->P;
	if (P->have_bs && (P->bs.dead || P->bs.sb.child.pid <= 0)) {
		leap_session_end(&P->bs, NULL, NULL, NULL, 0);
		P->have_bs = 0;
		if (!R->err)
			R->err = leap_sandbox_start_error(&P->bs.sb);
	}
	if (!R->err && R->have_cs)
		R->err = leap_sandbox_start_error(&R->cs.sb);
}

/* Frees what a record holds (the sessions are ended). */
static void rec_free(struct rec *R)
{
	free(R->cand.x);
	free(R->base.x);
	free(R->ratio.x);
	free(R->perm);
	json_decref(R->mismatch);
	free(R->mmsg);
}

/* Takes the exclusive lock of the device the pool's baseline ran on (cpu, or the GPU by its
 * UUID). Returns the descriptor, or -1 with *err. */
static int lock_pool_device(struct leap_bencher *B, const struct leap_bpool *P, enum leap_backend b, char **err)
{
	char *path = leap_device_lock_path(B->v->o.cache, P->uuid);
	const char *name = leap_backend_name(b);
	char *what = leap_backend_has(b, LEAP_BK_HOST) ? xstrdup(name) : xasprintf("%s%s", name, B->v->o.device);
	int fd = leap_device_lock(path, LOCK_EX, what, &B->lock_said, err);
	free(path);
	free(what);
	return fd;
}
