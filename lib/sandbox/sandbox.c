/* sandbox.c - run an untrusted runner child: namespaces, rlimits, dropped privileges, deadline. */
/*
 * The runner holds candidate code, so everything around it is decided here, before it starts:
 * it is started through child.c in new PID, network, IPC and mount namespaces (and a user
 * namespace when the program is not root; without namespaces it runs, with a warning, less
 * isolated), pivots into a minimal root that shows only what unseen.c allows, runs under
 * rlimits (as root: as a sandbox user of its worker slot), and is placed in its cgroups before
 * any of its code runs (it waits on a pipe until then). PID 1 of the namespace is a reaper of
 * ours, not the runner: it reaps what the candidate leaves, reports how the runner ended, and
 * can stop the whole namespace for leap-bench where no cgroup freezer exists. Every read and
 * write with the runner waits against the sandbox's deadline.
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The run sandbox (leap-verify, leap-bench):
 *
 * The candidate's shared object is loaded by a separate runner program (`libexec/leap-run-cpu`,
 * `leap-run-cuda`), started by `leap_sandbox_start()` (`lib/sandbox/sandbox.c`) for each candidate. The
 * parent (leap-verify / leap-bench) never loads candidate code. The hostile-stream tests run
 * each hostile fixture followed by a correct candidate, which must still pass: leap-verify.bats
 * "the hostile stream: one output record per input, in order, exit status 0" and "the correct
 * candidate after every hostile one still passes".
 *
 * Namespaces: PID, network, IPC, mount (`--no-namespaces` turns them off):
 *
 * Created with one `clone(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS)`, plus
 * `CLONE_NEWUSER` when not root. If the kernel refuses, leap warns once ("namespaces are
 * unavailable, candidates run without network and PID isolation") and runs the child with a
 * plain fork -- every item below marked (ns) is then missing.
 *
 * Stops:
 * - (ns) Seeing or signalling the host's processes: the child is PID 1's child in a new PID
 *   namespace with its own /proc -- leap-verify.bats "the child runs unprivileged, in its own
 *   PID namespace, without network interfaces" (escape.c) and "the child cannot see the
 *   reference source, the build cache or the host's processes" (peek.c.in counts /proc
 *   entries). Killing its parent and PID 1 leaves the filter running -- "killing the parent
 *   does not stop the filter" (kill_parent.c).
 * - (ns) Reading leap-verify's command line, environment or memory through /proc: the
 *   namespace's PID 1 is a fork of leap-verify (it reaps and freezes), so before it starts the
 *   runner it overwrites its copy of the command line and environment with zeros, renames
 *   itself `leap-sandbox` and makes itself non-dumpable (no `/proc/1/environ`, `maps` or `mem`,
 *   also without root, where the sandbox shares your user) -- security.bats "verify: /proc
 *   shows nothing of leap-verify (its --seed, its name, its memory)"; with `--no-namespaces`
 *   the same candidate finds it in the host's /proc, so the test can fail.
 * - (ns) Network: no interface but an unconfigured loopback -- escape.c, same test.
 * - (ns) The task suite and the build cache (the reference sources and builds) are covered by
 *   empty read-only tmpfs mounts -- "the child cannot see the reference source, the build cache
 *   or the host's processes"; the same candidate sees them with `--no-namespaces`, so the test
 *   can fail. The list is the compilers' list (`leap_unseen()` in `lib/task/unseen.c`, the one place
 *   that decides what a candidate must not see; a runner loses the whole of each cache, the
 *   compilers only its reference builds, since they write into the rest): every other place a
 *   suite is looked for (`$LEAP_TASKS`, the bundled suite beside the programs,
 *   `$PREFIX/share/leap/tasks`) and the default cache too -- security.bats "verify: a candidate
 *   cannot read another copy of the suite (one policy: lib/task/unseen.c)".
 * - (ns) System V IPC and POSIX message queues of the host (untested).
 * - (ns) Leftover processes: when the runner ends, the namespace's PID 1 exits and the kernel
 *   kills everything left in it -- "the fork bomb leaves no process behind", faults.bats
 *   "verify: SIGTERM mid-run: status 143, whole lines, no sandbox process and no temp dir
 *   behind" (and the SIGINT, `--jobs 2` and `--devices` variants beside it).
 * - (ns) The host's world-writable directories: `/tmp`, `/var/tmp` and `/dev/shm` are empty
 *   tmpfs of the sandbox's own (each bounded by the file-size limit), so nothing a candidate
 *   writes there outlives it or reaches another run, and POSIX shared memory (`/dev/shm`) is
 *   private, as root and without -- security.bats "verify: files a candidate writes in /tmp,
 *   /var/tmp or /dev/shm do not reach the host (root or not)" (`.ci/run` runs security.bats and
 *   leap-verify.bats a second time as nobody). The runner is opened before these mounts and
 *   executed through its descriptor (`fexecve`), so a build under `/tmp` or in a directory the
 *   sandbox user cannot enter still runs -- leap-verify.bats "a runner under /tmp (a build in
 *   /tmp) still starts: the sandbox covers /tmp only after opening it".
 *
 * Does not stop:
 * - Without namespaces and without root, the candidate runs as you: it can kill leap-verify
 *   itself (checked by hand: `setpriv --reuid=65534 ... leap-verify --no-namespaces` on
 *   kill_parent.c is killed by SIGKILL), read and write all your files, and leave daemons
 *   behind (a `setsid()` grandchild escapes the process-group kill). Do not run hostile
 *   candidates that way.
 *
 * Unprivileged user: a block of uids per leap process, one uid per parallel slot (root only):
 *
 * When leap-verify or leap-bench runs as root, each process takes its own block of 1024 sandbox
 * users, 0x40000000 + (pid mod 2^20) x 1024 (`leap_sandbox_env_init()` in `lib/sandbox/sandbox.c`), and
 * slot k of `-j`/`--devices` uses uid and gid block + (k mod 1024) (`leap_sandbox_slot()`). The
 * child drops supplementary groups, gid and uid to it, checks that `setuid(0)` fails, and sets
 * `PR_SET_NO_NEW_PRIVS` (setuid programs cannot raise privileges). These uids have no passwd
 * entry and own no files.
 *
 * Stops: root's files and processes; a fork bomb in one slot, or in another leap process's
 * sandbox, exhausting the process limit of other candidates (RLIMIT_NPROC counts per uid, and
 * no two slots of two running leap processes share a uid, except as below). Tests: escape.c
 * fails when euid is 0 ("the child runs unprivileged, in its own PID namespace, without network
 * interfaces"). The uid arithmetic has no test of its own (the -j test checks verdicts and
 * order only: "with -j 3 the verdicts and their order are those of the serial run"; a test
 * across processes would fork-bomb on a shared machine). NO_NEW_PRIVS is untested.
 *
 * Does not stop:
 * - Two leap processes whose pids are equal modulo 2^20 share a block (possible where
 *   `kernel.pid_max` is above 2^20); more than 1024 slots in one process wrap around. Untested.
 * - Other software that uses uids from 0x40000000 up shares them (untested).
 *
 * Without root: the child is in an unprivileged user namespace that maps your user and group to
 * themselves (`map_self()`: mapped to itself and not to 0, the runner loses every capability at
 * execve), with the same private mounts, minimal root, /proc, PID 1 and system-call filter as
 * under root. What still differs: there is no uid change, so the candidate touches the files of
 * its minimal root with your credentials (only the read-only library directories and its own
 * tmpfs are there), a signal to one of your processes outside its PID namespace is impossible
 * only because it cannot see or name them (pidfds and /proc are its own), and RLIMIT_NPROC
 * counts all your processes, so a fork bomb in one pipeline's sandbox can make another's set-up
 * fail (an error record, not a wrong verdict); two parallel slots share one user. Tests:
 * `.ci/run` runs security.bats and leap-verify.bats as nobody (where the kernel lends
 * unprivileged user namespaces: it skips with the reason otherwise).
 *
 * Resource limits:
 *
 * Set with setrlimit in the child before exec: CPU time = timeout x online CPUs (+1 s), address
 * space = `--memory` (4 GiB) + the shared regions (cpu runner only), file size = `--file-size`
 * (16 MiB), processes = `--nproc` (256), no core files, 256 descriptors. `--memory` also bounds
 * the whole sandbox, every process together, through a memory cgroup (lib/cgroup.c's header);
 * `leap_sandbox_fit_memory()` is the one place that turns it into both limits.
 *
 * Stops, with tests: a 100 GB allocation -- "a 100 GB allocation fails under the address-space
 * limit and becomes a runtime error" (alloc.c); an endless file -- "an endless file hits the
 * file-size limit, and the private temp dirs are removed" (hugefile.c); a fork bomb -- "an
 * endless loop, a long sleep and a fork bomb are timeouts" (forkbomb.c). The descriptor and
 * core limits are untested.
 *
 * Does not stop:
 * - The cuda runner has no address-space limit (the CUDA driver reserves far more address space
 *   than any sane limit); its host memory is bounded only by the memory cgroup, where one can
 *   be made.
 * - The address-space limit is per process: without a memory cgroup, a candidate's processes
 *   (up to `--nproc`) together may hold it many times over (leap says so once: lib/verify.c's
 *   leap_verifier_memory).
 * - Without root the process limit applies to your own uid, shared with your other processes,
 *   so it may be reached early (untested).
 * - Memory on the GPU is not limited beyond the device's size.
 *
 * Deadline that kills the process tree:
 *
 * Every read and write of the parent-runner conversation polls against a wall-clock deadline
 * (`--timeout`, 30 s); when it passes, the parent sends SIGKILL to the child's process group
 * (the child called setsid()) and its PID namespace ends with it. The child has
 * PR_SET_PDEATHSIG = SIGKILL, set again after the uid change, so it dies if leap-verify dies.
 *
 * Tests: "an endless loop, a long sleep and a fork bomb are timeouts" (spin.c, sleep.c,
 * forkbomb.c), "the fork bomb leaves no process behind", faults.bats "verify: SIGTERM mid-run:
 * status 143, whole lines, no sandbox process and no temp dir behind", "verify: SIGINT to the
 * whole process group (a terminal's ^C) with --jobs 2: status 130, nothing left" and "bench:
 * SIGINT mid-run: status 130, whole lines, no sandbox process and no temp dir behind". On
 * SIGINT, SIGTERM or SIGHUP leap-verify and leap-bench stop starting candidates, kill the
 * running sandboxes, remove their temp dirs, finish the last output line and die of the signal
 * (`lib/core/sig.c`); a signal ignored on entry stays ignored (faults.bats "verify: SIGINT ignored
 * on entry (nohup, a script's background job) stays ignored").
 *
 * Does not stop (without PID namespace): a grandchild that calls setsid() leaves the process
 * group and outlives the kill (untested).
 *
 * Private temp dir (tmpfs with namespaces):
 *
 * The child's working directory, HOME and TMPDIR are a fresh `$TMPDIR/leap-sandbox.XXXXXX`.
 * With namespaces (root or not) it is a tmpfs of 4 x the file-size limit (64 MiB) mounted only
 * in the child's namespace; otherwise a plain directory on the host's file system. It is
 * removed after each candidate.
 *
 * Tests: "the private temp dir is a small file system of its own (with namespaces, root or
 * not)" (fill_disk.c passes only if it hits the end of its own small file system), "an endless
 * file hits the file-size limit, and the private temp dirs are removed".
 *
 * Does not stop: with `--no-namespaces`, writes anywhere the sandbox user may write.
 *
 * Minimal environment:
 *
 * The child gets PATH, HOME, TMPDIR, LANG=C and, when set, CUDA_VISIBLE_DEVICES,
 * CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES and LD_LIBRARY_PATH. Nothing else (API keys in your
 * environment stay out). Test: "the child does not see the environment (a secret in it would
 * change the result)" (env_secret.c).
 *
 * Bounded, separated output:
 *
 * The child's stdin is /dev/null; stdout and stderr go to a memfd (bounded by the file-size
 * limit), never to leap-verify's stdout; the first 2048 bytes, UTF-8 sanitised, are kept in
 * `verify.output`. The verdict travels on a separate pipe with a fixed binary protocol the
 * parent validates (every reply's message is cut to printable ASCII first: the storm below
 * found random bytes there turning a record's message into null). Tests: "printing to stdout
 * never reaches the JSON stream; the output is kept in verify.output" (stdout.c prints a forged
 * record), "garbage and a forged reply written to the harness's descriptors never pass"
 * (scribble.c), "closing the harness's descriptors is a runtime error" (close_fds.c), "an
 * object without the artifact ABI is a runtime error".
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/child.h"
#include "core/fdio.h"
#include "runproto.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "core/sig.h"
#include "core/banned.h"

/* This file is the parent's side; what runs in the child between the fork and the runner's
 * execve (the minimal root, the dropped privileges, the reaper) is in sandbox_child.c. */

/* Sandbox users when root: ids without a passwd entry, SLOT_UIDS per leap process. */
#define UID_BASE 0x40000000u
#define SLOT_UIDS 1024u

void leap_sandbox_env_init(struct leap_sandbox_env *env)
{
	memset(env, 0, sizeof *env);
	env->ns_ok = -1;
	env->root_ok = -1;
	env->root = geteuid() == 0;
	/* RLIMIT_NPROC counts the processes of a user: two leap runs sharing one sandbox user
	 * would share one limit, and one run's fork bomb would make the other's sandboxes fail
	 * at execve. So each process takes its own block of users, chosen by its pid. */
	env->uid_base = (uid_t)(UID_BASE + ((unsigned)getpid() % (1u << 20)) * SLOT_UIDS);
	env->uid = env->root ? env->uid_base : geteuid();
	env->gid = env->root ? (gid_t)env->uid_base : getegid();
	const char *t = getenv("TMPDIR");
	env->tmp = t && *t == '/' ? t : "/tmp";
	/* A child that dies must not take the filter with it through a broken pipe. */
	signal(SIGPIPE, SIG_IGN);
}

/* Starts ch (lib/core/child.c) in new PID, network, IPC and mount namespaces (and a user
 * namespace when not root) following env->ns_ok, else with a plain fork; warns once when
 * namespaces are unavailable. Returns 0 or -1 (errno set). */
static int spawn(struct leap_sandbox_env *env, const struct leap_sandbox_opts *o, struct leap_child *ch)
{
	ch->map_user = !env->root;
	ch->map_uid = env->uid;
	ch->map_gid = env->gid;
	if (o->namespaces && env->ns_ok != 0) {
		ch->clone_flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS;
		if (!env->root)
			ch->clone_flags |= CLONE_NEWUSER;
		if (!leap_child_start(ch)) {
			env->ns_ok = 1;
			return 0;
		}
		if (errno != EPERM && errno != EINVAL && errno != ENOSPC && errno != EUSERS && errno != EACCES)
			return -1;
		leap_warn_errno("namespaces are unavailable, candidates run without network and PID isolation");
		env->ns_ok = 0;
	}
	ch->clone_flags = 0; /* nothing is hidden then either: lib/core/child.c hides in a new mount namespace */
	return leap_child_start(ch);
}

/* Finds out once whether this system lets the sandbox make its minimal root (a container may
 * allow the namespaces and refuse a new /proc or pivot_root). When not, warns once and the
 * sandboxes run in the machine's root with the harness's directories hidden, as before the
 * minimal root existed; failing every candidate instead would stop all work. */
static void probe_root(struct leap_sandbox_env *env, const struct leap_sandbox_opts *o)
{
	if (!o->root || !o->namespaces || env->root_ok != -1 || env->ns_ok == 0)
		return;
	struct root_probe rp = {o->root, xasprintf("%s/leap-root-probe.XXXXXX", env->tmp)};
	if (!mkdtemp(rp.top)) {
		free(rp.top);
		return; /* decided by the first sandbox's set-up, which reports it */
	}
	struct leap_child ch;
	leap_child_init(&ch);
	ch.late = sb_try_root;
	ch.arg = &rp;
	int started = spawn(env, o, &ch) == 0;
	if (started)
		leap_child_finish(&ch, -1);
	rmdir(rp.top);
	free(rp.top);
	if (env->ns_ok != 1)
		return; /* no namespaces: no root to make either */
	env->root_ok = started && ch.exit_code == 0;
	if (!env->root_ok)
		leap_warn("the sandbox cannot make its minimal root here (a new /proc or pivot_root is "
			  "refused): candidates see the machine's files but the hidden ones (SECURITY.md)");
}

void leap_sandbox_slot(struct leap_sandbox_env *env, int slot)
{
	if (!env->root)
		return;
	env->uid = env->uid_base + (uid_t)((unsigned)slot % SLOT_UIDS);
	env->gid = (gid_t)env->uid;
}

void leap_sandbox_probe(struct leap_sandbox_env *env, const struct leap_sandbox_opts *o)
{
	if (!o->namespaces || env->ns_ok != -1) {
		probe_root(env, o);
		return;
	}
	struct leap_child ch;
	leap_child_init(&ch);
	if (spawn(env, o, &ch) == 0)
		leap_child_finish(&ch, -1);
	probe_root(env, o);
}

/* The descriptors of a new sandbox, parent and child ends (-1: not made). */
struct sb_fds {
	int cmd[2], rep[2], hold[2], ctl[2], devnull;
};

/* Closes every descriptor of f that is still open. */
static void close_fds(struct sb_fds *f)
{
	int *all[] = {f->cmd, f->rep, f->hold, f->ctl};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		for (int j = 0; j < 2; j++)
			if (all[i][j] >= 0) {
				close(all[i][j]);
				all[i][j] = -1;
			}
	if (f->devnull >= 0)
		close(f->devnull);
	f->devnull = -1;
}

/* Makes the pipes of a new sandbox (the hold pipe and the control socket only when asked).
 * Returns 0 or -1 (errno set). */
static int make_fds(struct sb_fds *f, int hold, int ctl)
{
	memset(f, -1, sizeof *f);
	f->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (f->devnull < 0 || pipe2(f->cmd, O_CLOEXEC) || pipe2(f->rep, O_CLOEXEC) ||
	    (hold && pipe2(f->hold, O_CLOEXEC)) || (ctl && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->ctl)))
		return -1;
	return 0;
}

/* Puts the new child in its groups and lets it go on (it waits on the hold pipe before it runs
 * anything of the runner's). Returns 0, or -1 with a new message in *err. */
static int place(struct leap_sandbox *sb, struct sb_fds *f, char **err)
{
	if (f->hold[1] < 0)
		return 0;
	if (leap_cgroup_enter(&sb->cg, sb->child.pid, err))
		return -1;
	char go = 1;
	if (write(f->hold[1], &go, 1) != 1) {
		*err = xasprintf("cannot release the sandbox: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The environment of a runner: minimal, plus what selects and finds the GPU (no secrets
 * there). Newly allocated. */
static char **runner_env(const struct leap_sandbox_opts *o, const char *tmpdir)
{
	static const char *const keep[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
					   "LD_LIBRARY_PATH"};
	char **envp = xcalloc(4 + 4 + 1, sizeof *envp);
	size_t ne = 0;
	envp[ne++] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	envp[ne++] = xasprintf("HOME=%s", tmpdir);
	envp[ne++] = xasprintf("TMPDIR=%s", tmpdir);
	envp[ne++] = xstrdup("LANG=C");
	for (size_t i = 0; i < 4; i++) {
		const char *val = i == 0 && o->visible ? o->visible : getenv(keep[i]);
		if (val)
			envp[ne++] = xasprintf("%s=%s", keep[i], val);
	}
	envp[ne] = NULL;
	return envp;
}

/* Describes the runner's child in *ch (lib/core/child.h): descriptors 0..7 and 10..13 as runproto.h
 * says, the set-up report on 8, the freezing control socket on 9; a session of its own; the limits;
 * the hidden directories; the runner opened before the mounts (they may cover it: a build
 * under /tmp); the hooks with `plan`. */
static void describe(const struct leap_sandbox_opts *o, struct leap_sandbox *sb, const struct sb_fds *f,
		     char *const *argv, char *const *envp, const struct leap_runner_fds *rf,
		     struct child_plan *plan, struct leap_child *ch)
{
	leap_child_init(ch);
	ch->argv = argv;
	ch->env = envp;
	ch->dir = sb->tmpdir;
	ch->open_early = 1;
	ch->exec_what = "cannot start the runner";
	int fds[] = {f->devnull, sb->log_fd, sb->log_fd, f->cmd[0], f->rep[1], rf->in, rf->art, rf->out, -1, f->ctl[1],
		     rf->ctl, rf->handles, rf->dev[0], rf->dev[1]};
	_Static_assert(sizeof fds / sizeof fds[0] <= LEAP_CHILD_FDS, "lib/core/child.h: LEAP_CHILD_FDS");
	memcpy(ch->fd, fds, sizeof fds);
	ch->nfd = (int)(sizeof fds / sizeof fds[0]);
	ch->cloexec = 1u << 9;
	ch->report_slot = 8;
	ch->fail_slot = 2;
	ch->fail_prefix = "leap sandbox: ";
	ch->session = 1;
	ch->cpus = o->cpus;
	/* CPU time counts every thread: a parallel kernel may use all CPUs for the whole time. */
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
	uint64_t cpu = (uint64_t)(o->timeout * (double)ncpus) + 1;
	leap_child_limit(ch, RLIMIT_CPU, cpu, cpu + 1);
	if (o->mem_bytes)
		leap_child_limit(ch, RLIMIT_AS, o->mem_bytes, o->mem_bytes);
	leap_child_limit(ch, RLIMIT_FSIZE, o->fsize_bytes, o->fsize_bytes);
	leap_child_limit(ch, RLIMIT_NPROC, (uint64_t)o->nproc, (uint64_t)o->nproc);
	leap_child_limit(ch, RLIMIT_STACK, LEAP_SANDBOX_STACK_BYTES, LEAP_SANDBOX_STACK_BYTES);
	leap_child_limit(ch, RLIMIT_CORE, 0, 0);
	leap_child_limit(ch, RLIMIT_NOFILE, 256, 256);
	/* Our own mount namespace: the harness's directories (the cache holding the reference
	 * builds, the task suite) disappear under empty read-only tmpfs. */
	ch->hide = o->hide;
	ch->nhide = o->nhide;
	ch->early = sb_hold;
	ch->late = sb_finish_child;
	ch->arg = plan;
	plan->holdfd = f->hold[0];
}

/* Makes the private temp dir of a new sandbox (owned by the sandbox user) and its log.
 * Returns 0, or -1 with a new message in *err (sb->tmpdir is set either way when made). */
static int make_tmp(struct leap_sandbox_env *env, struct leap_sandbox *sb, char **err)
{
	char *tmpdir = xasprintf("%s/leap-sandbox.XXXXXX", env->tmp);
	if (!mkdtemp(tmpdir)) {
		*err = xasprintf("cannot create a temporary directory in %s: %s", env->tmp, strerror(errno));
		free(tmpdir);
		return -1;
	}
	sb->tmpdir = tmpdir;
	if (env->root && chown(tmpdir, env->uid, env->gid)) {
		*err = xasprintf("cannot hand the temporary directory to uid %d: %s", (int)env->uid, strerror(errno));
		return -1;
	}
	return 0;
}

void leap_sandbox_fit_memory(struct leap_sandbox_opts *o, int device, uint64_t regions)
{
	/* The regions count where the runner touches them first (leap maps cpu regions populated,
	 * so there its own group pays; a lazy cuda staging region faults in inside the sandbox):
	 * room for them either way, so that an honest task with big regions runs under --memory. */
	uint64_t whole = o->mem_bytes ? o->mem_bytes + regions : 0;
	if (o->cg_mem_none)
		o->cg_mem_bytes = 0;
	else if (!o->cg_mem_bytes)
		o->cg_mem_bytes = whole;
	if (!o->cg_mem_bytes)
		o->cg_ctrl &= ~(1u << LEAP_CG_MEMORY);
	o->mem_bytes = device ? 0 : whole; /* a device's driver reserves far more address space */
}

int leap_sandbox_start(struct leap_sandbox_env *env, struct leap_sandbox *sb, const struct leap_sandbox_opts *o,
		       const char *runner, const char *arg, const char *role, const struct leap_runner_fds *fds,
		       char **err)
{
	memset(sb, 0, sizeof *sb);
	leap_child_init(&sb->child);
	sb->cmd_fd = sb->reply_fd = sb->log_fd = sb->ctl_fd = -1;
	sb->cg.freeze_fd = sb->cg.events_fd = sb->cg.usage_fd = sb->cg.pressure_fd = -1;
	struct sb_fds f;
	memset(&f, -1, sizeof f);
	int grouped = o->cgroups && o->cg_ctrl;
	if (make_tmp(env, sb, err))
		goto fail;
	sb->log_fd = memfd_create("leap-log", MFD_CLOEXEC);
	if (sb->log_fd < 0 || make_fds(&f, grouped, o->pidns_freeze)) {
		*err = xasprintf("cannot create the sandbox's descriptors: %s", strerror(errno));
		goto fail;
	}
	if (grouped && leap_cgroup_make(o->cgroups, &sb->cg, o->cg_ctrl, o->cpus, err))
		goto fail;
	if (grouped && sb->cg.mode[LEAP_CG_MEMORY] && o->cg_mem_bytes) {
		if (leap_cgroup_memory_max(&sb->cg, o->cg_mem_bytes, err))
			goto fail;
		sb->mem_limit = o->cg_mem_bytes;
	}
	probe_root(env, o); /* once per process: whether o->root can be used */
	struct leap_sandbox_opts with_root = *o;
	if (env->root_ok != 1)
		with_root.root = NULL;
	o = &with_root;
	char *argv[] = {(char *)runner, (char *)arg, (char *)role, NULL};
	char **envp = runner_env(o, sb->tmpdir);
	struct child_plan plan = {.o = o, .env = env, .tmpdir = sb->tmpdir};
	describe(o, sb, &f, argv, envp, fds, &plan, &sb->child);
	int started = spawn(env, o, &sb->child);
	int e = errno;
	leap_strv_free(envp);
	if (started) {
		*err = xasprintf("cannot start a sandboxed process: %s", strerror(e));
		goto fail;
	}
	sb->isolated = sb->child.clone_flags != 0;
	if (o->pidns_freeze && !sb->isolated) {
		*err = xstrdup("cannot freeze the candidate: no PID namespace to stop and no cgroup freezer");
		goto kill;
	}
	if (place(sb, &f, err))
		goto kill;
	sb->cmd_fd = f.cmd[1];
	sb->reply_fd = f.rep[0];
	sb->ctl_fd = f.ctl[0];
	f.cmd[1] = f.rep[0] = f.ctl[0] = -1;
	close_fds(&f);
	sb->deadline = leap_now() + o->timeout;
	return 0;
kill:
	leap_child_finish(&sb->child, 0);
fail:
	close_fds(&f);
	leap_cgroup_remove(&sb->cg);
	if (sb->log_fd >= 0)
		close(sb->log_fd);
	sb->log_fd = -1;
	if (sb->tmpdir)
		rmdir(sb->tmpdir);
	free(sb->tmpdir);
	sb->tmpdir = NULL;
	return -1;
}

int leap_sandbox_freeze(struct leap_sandbox *sb, double timeout)
{
	int r = -1;
	if (sb->cg.mode[LEAP_CG_FREEZER]) {
		r = leap_cgroup_freeze(&sb->cg, timeout);
	} else if (sb->ctl_fd >= 0) {
		char c = 'S', a = 0;
		struct pollfd pf = {sb->ctl_fd, POLLIN, 0};
		if (write(sb->ctl_fd, &c, 1) == 1)
			r = poll(&pf, 1, (int)(timeout * 1000) + 1) == 1 && read(sb->ctl_fd, &a, 1) == 1 ? (a == 's' ? 0 : -1) : -2;
	}
	sb->frozen = r == 0 || sb->frozen;
	return r;
}

int leap_sandbox_thaw(struct leap_sandbox *sb)
{
	int r = -1;
	if (sb->cg.mode[LEAP_CG_FREEZER]) {
		r = leap_cgroup_thaw(&sb->cg);
	} else if (sb->ctl_fd >= 0) {
		char c = 'C', a = 0;
		struct pollfd pf = {sb->ctl_fd, POLLIN, 0};
		if (write(sb->ctl_fd, &c, 1) == 1 && poll(&pf, 1, 1000) == 1 && read(sb->ctl_fd, &a, 1) == 1 && a == 'c')
			r = 0;
	}
	if (r == 0)
		sb->frozen = 0;
	return r;
}

int leap_sandbox_usage(const struct leap_sandbox *sb, uint64_t *ns)
{
	return leap_cgroup_usage(&sb->cg, ns);
}

int leap_sandbox_stalled(const struct leap_sandbox *sb, uint64_t *ns)
{
	return leap_cgroup_stalled(&sb->cg, ns);
}

/* leap_fd_move's wait (fdio.h) for sandbox `arg`: until fd is ready for `events` or the
 * deadline passes. Returns 0, -2 (deadline), or -1 when an ending signal was caught (sig.h:
 * the caller is to stop). */
static int wait_fd(void *arg, int fd, short events)
{
	struct leap_sandbox *sb = arg;
	for (;;) {
		if (leap_signal_caught())
			return -1;
		double left = sb->deadline - leap_now();
		if (left <= 0) {
			sb->timed_out = 1;
			return -2;
		}
		struct pollfd pfd = {fd, events, 0};
		int ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
		int r = poll(&pfd, 1, ms);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return 0; /* let the read or write report it */
	}
}

int leap_sandbox_read(struct leap_sandbox *sb, void *buf, size_t n)
{
	return leap_fd_move(sb->reply_fd, 0, buf, n, wait_fd, sb);
}

int leap_sandbox_write(struct leap_sandbox *sb, const void *buf, size_t n)
{
	return leap_fd_move(sb->cmd_fd, 1, (void *)buf, n, wait_fd, sb);
}

/* nftw callback removing one entry of a sandbox temp dir (depth first); never stops the walk. */
static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

char *leap_sandbox_start_error(const struct leap_sandbox *sb)
{
	return sb->child.setup_error[0] ? xasprintf("the sandbox could not start the runner: %s", sb->child.setup_error)
					: NULL;
}

void leap_sandbox_end(struct leap_sandbox *sb, int wait_exit, int *status, int *killed, struct leap_buf *log,
		      size_t maxlog)
{
	int st = 0, k = 0;
	if (sb->frozen && sb->cg.mode[LEAP_CG_FREEZER] == LEAP_CG_V1)
		leap_cgroup_thaw(&sb->cg); /* a process frozen by the v1 freezer cannot die */
	if (sb->cmd_fd >= 0)
		close(sb->cmd_fd);
	if (sb->reply_fd >= 0)
		close(sb->reply_fd);
	sb->cmd_fd = sb->reply_fd = -1;
	/* a big address space takes a while to tear down */
	if (leap_child_finish(&sb->child, wait_exit ? 0.5 : 0) == 0) {
		st = sb->child.status;
		k = !wait_exit || sb->child.killed;
		/* The reaper of an isolated child reports the runner's signal as 128 + signal. */
		if (sb->isolated && WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) <= 128 + 64)
			st = WEXITSTATUS(st) - 128;
	}
	sb->mem_hit = sb->mem_limit && leap_cgroup_memory_hit(&sb->cg);
	leap_cgroup_remove(&sb->cg);
	if (sb->ctl_fd >= 0)
		close(sb->ctl_fd);
	sb->ctl_fd = -1;
	sb->frozen = 0;
	if (log && sb->log_fd >= 0 && maxlog) {
		char *tmp = xmalloc(maxlog);
		ssize_t n = pread(sb->log_fd, tmp, maxlog, 0);
		if (n > 0)
			leap_text_escape(log, tmp, (size_t)n);
		free(tmp);
	}
	if (sb->log_fd >= 0)
		close(sb->log_fd);
	sb->log_fd = -1;
	if (sb->tmpdir) {
		nftw(sb->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		free(sb->tmpdir);
		sb->tmpdir = NULL;
	}
	if (status)
		*status = st;
	if (killed)
		*killed = k;
}

const char *leap_sandbox_describe(int status, struct leap_buf *buf)
{
	if (WIFEXITED(status)) {
		leap_buf_addf(buf, "exited with status %d during the call (exit() or a fatal error inside the code?)",
			      WEXITSTATUS(status));
		return buf->s;
	}
	if (!WIFSIGNALED(status))
		return "stopped unexpectedly";
	switch (WTERMSIG(status)) {
	case SIGSEGV:
		return "crashed with SIGSEGV (invalid memory access: an index outside a buffer, or a null pointer?)";
	case SIGBUS:
		return "crashed with SIGBUS (misaligned or invalid memory access)";
	case SIGFPE:
		return "crashed with SIGFPE (arithmetic exception: integer division by zero?)";
	case SIGABRT:
		return "aborted (SIGABRT: abort(), a failed assert or a corrupted heap)";
	case SIGILL:
		return "crashed with SIGILL (illegal instruction)";
	case SIGXFSZ:
		return "exceeded the file-size limit (SIGXFSZ: writing a huge file or too much output)";
	case SIGXCPU:
		return "exceeded the CPU-time limit (SIGXCPU)";
	case SIGKILL:
		return "was killed (SIGKILL: it killed itself or its process group?)";
	case SIGSYS:
		return "made a system call the sandbox denies (SIGSYS)";
	default:
		leap_buf_addf(buf, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return buf->s;
	}
}
