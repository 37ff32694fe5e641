/* backend_cpu.c - the cpu backend: C built by cc, run on the host's cores. */
/*
 * Everything leap does differently for cpu, as the row of backend.h: the candidate's C
 * interface (host pointers, half and bf16 as their bit patterns), the C compiler (--cc, $CC,
 * cc; its fixed flags), the reference's and baselines' build, and the prompt's machine and
 * speed sections, and what the referee times against (the task's reference, in regions this
 * process maps; the target and the floor's margin). It is always usable, needs no device, and
 * is the backend the task's plain C reference runs with. The runner is runner/cpu.c (with
 * runner/heap.c). Like every row, it calls only down (tests/house.bats).
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compile/compiler.h"
#include "prompt/prompt.h"
#include "sandbox/sandbox.h"
#include "core/util.h"
#include "referee/verdict.h"
#include "core/banned.h"

/* ---- the candidate's C interface ---- */

static const char *const ptr_types[][2] = {
	[LEAP_T_FLOAT] = {"float *", "const float *"},
	[LEAP_T_DOUBLE] = {"double *", "const double *"},
	[LEAP_T_INT] = {"int *", "const int *"},
	[LEAP_T_INT64] = {"int64_t *", "const int64_t *"},
	[LEAP_T_HALF] = {"uint16_t *", "const uint16_t *"},
	[LEAP_T_BF16] = {"uint16_t *", "const uint16_t *"},
	[LEAP_T_UINT8] = {"uint8_t *", "const uint8_t *"},
};

/* ---- cc ---- */

/* --cc, else $CC, else cc. */
static char *want(const struct leap_compile_opts *o)
{
	const char *env = getenv("CC");
	return xstrdup(o->cc ? o->cc : env && *env ? env : "cc");
}

static char *missing(const struct leap_compile_opts *o, const char *name)
{
	(void)o;
	return xasprintf("the cpu backend needs a C compiler, and '%s' was not found (use --cc)", name);
}

static char **user_flags(const struct leap_compile_opts *o, size_t *n)
{
	*n = o->n_cc_flags;
	return o->cc_flags;
}

static void flags_of(const struct leap_compiler *c, const struct leap_tool *t, int shared, struct leap_argv *a)
{
	(void)t;
	/* -g1: line tables, so that a crash names the candidate's line (crash.h); the code is the
	 * same as without it */
	static const char *const fixed[] = {"-std=gnu11", "-O2", "-g1", "-fPIC", "-fopenmp", "-fmax-errors=20", "-Werror=implicit-function-declaration",
					    "-fdiagnostics-color=never", "-fdiagnostics-column-unit=byte"};
	leap_argv_push(a, shared ? "-shared" : "-c");
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		leap_argv_push(a, fixed[i]);
	for (size_t i = 0; i < c->o.n_cc_flags; i++)
		leap_argv_push(a, c->o.cc_flags[i]);
}

static const char *const link_opts[] = {"-Wl,-z,defs", "-lm", NULL};

/* ---- the reference's and baselines' build (build.c) ---- */

static char *trusted_cc(void)
{
	const char *cc = getenv("CC");
	return xstrdup(cc && *cc ? cc : "cc");
}

static const char *const trusted_flags[] = {"-O2", "-shared", "-fPIC", NULL};
static const char *const trusted_libs[] = {"-lm", NULL};

/* ---- the prompt's facts ---- */

/* "## Machine and build" (after its heading). */
static void prompt_machine(struct leap_buf *s, const struct leap_task *t, const struct leap_prompt_machine *m)
{
	if (m && (m->cpu_model || m->cores)) {
		leap_buf_adds(s, "Your code runs on the CPU");
		if (m->cpu_model)
			leap_buf_addf(s, " (%s)", m->cpu_model);
		if (m->cores)
			leap_buf_addf(s, ": %d core%s while it is checked", m->cores, m->cores == 1 ? "" : "s");
		if (m->cores && m->timed_cores)
			leap_buf_addf(s, ", %d while it is timed (its processes are confined to them before your code "
					 "loads, so OpenMP's default thread count is %d)", m->timed_cores, m->timed_cores);
		leap_buf_adds(s, ". ");
		/* leap-bench(1), the running clock: only the time none of the runner's threads ran is
		 * left out, so on a loaded machine a barrier waiting for a descheduled thread is charged,
		 * and a scalar loop can rank above a good parallel kernel; the model decides here. */
		if (m->timed_cores > 1)
			leap_buf_adds(s, "Other work may share those cores while your code is timed: the time in which one of "
					 "your threads runs while another waits for a core is charged to you (only the time "
					 "in which none of them runs is left out), so a parallel kernel pays for every "
					 "barrier at which its threads wait for a descheduled one, where a single-threaded "
					 "loop pays nothing of it. Few barriers lose least (one parallel region; "
					 "schedule(dynamic) lets the running threads take a waiting one's share). ");
	}
	leap_prompt_build(s, m, &leap_backend_cpu, NULL);
	if (m && m->have_tc)
		leap_buf_adds(s, "and <stdint.h> included before your code. ");
	if (m && m->ncpu_flags) {
		leap_buf_adds(s, "The CPU supports ");
		for (size_t i = 0; i < m->ncpu_flags; i++)
			leap_buf_addf(s, "%s%s", i ? ", " : "", m->cpu_flags[i]);
		leap_buf_adds(s, "; the build sets no -march, so code that uses them needs "
				 "`__attribute__((target(\"...\")))`. ");
	}
	if (m && m->cpu_caches)
		leap_buf_addf(s, "Caches: %s. ", m->cpu_caches);
	leap_buf_adds(s, "Linked: the C library, libm and OpenMP; nothing else.\n\n");
	leap_buf_adds(s, "The function is called from C. Every pointer argument is host memory, already allocated "
			 "and filled by the harness; do not allocate or free the arguments. Buffers are contiguous "
			 "and row-major, aligned to 64 bytes.");
	if (leap_prompt_has_half(t))
		leap_buf_adds(s, " `half` and `bf16` values are passed as their IEEE bit patterns in `uint16_t`.");
	leap_buf_addf(s, "\n\nScratch memory of your own is allowed: malloc and free within a call (timed with it), or "
			  "a buffer kept across calls in a static pointer and grown when a call needs more. The "
			  "process may map %llu GiB beyond the arguments (by default). The stack is %llu MiB, each "
			  "OpenMP thread's too: put large arrays on the heap. Every block you allocate is checked: a "
			  "write past its end fails the case it happens in.\n",
		      (unsigned long long)(LEAP_SANDBOX_MEM_DEFAULT >> 30),
		      (unsigned long long)(LEAP_SANDBOX_STACK_BYTES >> 20));
}


static void prompt_speed(struct leap_buf *s, const struct leap_task *t, const struct leap_prompt_machine *m)
{
	if (m && m->timed_cores)
		leap_buf_addf(s, " on %d CPU core%s", m->timed_cores, m->timed_cores == 1 ? "" : "s");
	if (t->module) { /* its baseline, torch's own forward, is not timed yet: no claim */
		leap_buf_adds(s, ".\n");
		return;
	}
	leap_buf_adds(s, ", against the task's reference: the plain C described above, single-threaded, compiled "
			 "with `cc -O2` (no OpenMP, no -march) and run on the same cores.\n");
}

const struct leap_backend_ops leap_backend_cpu = {
	.name = "cpu",
	.ext = "c",
	.source = "kernel.c",
	.shim = "leap_shim.c",
	.runner = "leap-run-cpu",
	.fence = "c",
	.compiler = "cc",
	.flags = LEAP_BK_HOST,
	.ptr_types = ptr_types,
	.linkage = "",
	.entry_return = "\treturn 0;\n",
	.want = want,
	.missing = missing,
	.flags_of = flags_of,
	.user_flags = user_flags,
	.link = link_opts,
	.trusted_cc = trusted_cc,
	.trusted_flags = trusted_flags,
	.trusted_libs = trusted_libs,
	.target_ci = LEAP_BENCH_TARGET_CPU,
	.floor_margin = LEAP_BENCH_FLOOR_MARGIN_CPU,
	.system_prompt = "You are an expert in high-performance C. You write correct, fast C kernels for a CPU. "
			 "Reply with one fenced code block holding the complete source file and nothing after it.",
	.prompt_machine = prompt_machine,
	.prompt_speed = prompt_speed,
};
