/* backend_cuda.c - the cuda backend: CUDA C++ built by nvcc, run on an NVIDIA GPU. */
/*
 * Everything leap does differently for cuda, as the row of backend.h: the candidate's C
 * interface (device pointers, __half and __nv_bfloat16, extern "C"), nvcc (how it is found,
 * its identity with the host gcc it compiles with, its flags, the toolkit's headers for the
 * include guard), the baselines' build, the device (usable here? its facts, from gpu.c and
 * devices.c, which stay this backend's modules), the prompt's machine and speed sections, and
 * what the referee times against and how (baseline.cu; the sets moved through the baseline's
 * runner, which owns the device memory; the target and the floor's margin). The runner is
 * runner/cuda.cu (mk/runners.mk builds it only where nvcc is found). Like every row, it calls
 * only down, never into a file that asks the table (tests/house.bats).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "compile/compiler.h"
#include "devices.h"
#include "core/files.h"
#include "gpu.h"
#include "core/jsonl.h"
#include "prompt/prompt.h"
#include "core/util.h"
#include "referee/verdict.h"
#include "core/banned.h"

/* ---- the candidate's C interface ---- */

static const char *const ptr_types[][2] = {
	[LEAP_T_FLOAT] = {"float *", "const float *"},
	[LEAP_T_DOUBLE] = {"double *", "const double *"},
	[LEAP_T_INT] = {"int *", "const int *"},
	[LEAP_T_INT64] = {"int64_t *", "const int64_t *"},
	[LEAP_T_HALF] = {"__half *", "const __half *"},
	[LEAP_T_BF16] = {"__nv_bfloat16 *", "const __nv_bfloat16 *"},
	[LEAP_T_UINT8] = {"uint8_t *", "const uint8_t *"},
};

/* cuda_fp16.h and cuda_bf16.h only when a parameter has that type: together they cost about a
 * third of nvcc's time on a small kernel (measured with bench/compile.sh), and a candidate
 * that uses them for its own purposes includes them. */
static void includes(struct leap_buf *s, const struct leap_task *t)
{
	int half = 0, bf16 = 0;
	for (size_t i = 0; i < t->nparams; i++) {
		half |= t->params[i].type == LEAP_T_HALF;
		bf16 |= t->params[i].type == LEAP_T_BF16;
	}
	leap_buf_adds(s, "#include <cuda_runtime.h>\n");
	if (half)
		leap_buf_adds(s, "#include <cuda_fp16.h>\n");
	if (bf16)
		leap_buf_adds(s, "#include <cuda_bf16.h>\n");
}

/* ---- nvcc ---- */

/* The CUDA compiler to run, as named (one policy for candidates and baselines, the Makefile's
 * HAVE_NVCC follows the same order): `given` (--nvcc) when not NULL, else $NVCC, else
 * $CUDA_HOME/bin/nvcc (CUDA_HOME defaults to /usr/local/cuda) when it can be executed, else
 * the nvcc found on PATH (an absolute path), else $CUDA_HOME/bin/nvcc, which does not run and
 * names what was looked for. Newly allocated. */
static char *nvcc_name(const char *given)
{
	if (given)
		return xstrdup(given);
	const char *env = getenv("NVCC");
	if (env && *env)
		return xstrdup(env);
	const char *home = getenv("CUDA_HOME");
	char *at_home = xasprintf("%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
	if (access(at_home, X_OK) == 0)
		return at_home;
	char *on_path = leap_find_program("nvcc");
	if (!on_path)
		return at_home;
	free(at_home);
	return on_path;
}

static char *want(const struct leap_compile_opts *o)
{
	return nvcc_name(o->nvcc);
}

static char *missing(const struct leap_compile_opts *o, const char *name)
{
	if (o->nvcc)
		return xasprintf("the cuda backend needs nvcc, and '%s' was not found (use --nvcc or set "
				 "CUDA_HOME)", name);
	if (getenv("NVCC") && *getenv("NVCC"))
		return xasprintf("the cuda backend needs nvcc, and '%s' (from NVCC) was not found (set NVCC "
				 "to nvcc's path, or unset it)", name);
	return xasprintf("the cuda backend needs nvcc, and '%s' was not found, nor nvcc on PATH "
			 "(use --nvcc, or set NVCC or CUDA_HOME)", name);
}

/* --arch, else the first visible GPU's exact architecture (sm_90a on Hopper: see gpu.h). */
static char *arch(const struct leap_compile_opts *o)
{
	if (o->arch)
		return xstrdup(o->arch);
	struct leap_gpu g;
	leap_gpu_query(&g);
	const struct leap_gpu_dev *d = leap_gpu_device(&g, 0);
	char a[32];
	if (d && d->cc_major)
		leap_gpu_arch(d->cc_major, d->cc_minor, a, sizeof a);
	else
		snprintf(a, sizeof a, "%s", LEAP_DEFAULT_ARCH);
	leap_gpu_free(&g);
	return xstrdup(a);
}

static char **user_flags(const struct leap_compile_opts *o, size_t *n)
{
	*n = o->n_nvcc_flags;
	return o->nvcc_flags;
}

static void flags_of(const struct leap_compiler *c, const struct leap_tool *t, int shared, struct leap_argv *a)
{
	leap_argv_push(a, shared ? "-shared" : "-c");
	leap_argv_push(a, "-Xcompiler");
	leap_argv_push(a, "-fPIC");
	leap_argv_push(a, "-O3");
	char *f = leap_gpu_arch_flag(t->arch);
	leap_argv_push(a, f);
	free(f);
	for (size_t i = 0; i < c->o.n_nvcc_flags; i++)
		leap_argv_push(a, c->o.nvcc_flags[i]);
}

/* <toolkit>/bin/nvcc: the toolkit's headers (<toolkit>/include and <toolkit>/targets), not
 * the whole prefix (nvcc in /usr/bin must not make all of /usr readable). */
static void roots(struct leap_tool *t, void (*add)(struct leap_tool *t, const char *dir))
{
	char *real = realpath(t->path, NULL);
	char *bin = real ? strrchr(real, '/') : NULL;
	if (bin) {
		*bin = '\0';
		char *top = strrchr(real, '/');
		if (top) {
			*top = '\0';
			char *inc = xasprintf("%s/include", *real ? real : "");
			char *tg = xasprintf("%s/targets", *real ? real : "");
			add(t, inc);
			add(t, tg);
			free(inc);
			free(tg);
		}
	}
	free(real);
}

static const char *const link_opts[] = {"-Xlinker", "-z,defs", NULL};

/* ---- the baselines' build (build.c) ---- */

static char *trusted_cc(void)
{
	/* the compiler as named enters the key: a cache built elsewhere with the same nvcc
	 * named the same way is reused without running it */
	return nvcc_name(NULL);
}

/* -O3 with code for sm_80 and sm_90 and PTX for later GPUs */
static const char *const trusted_flags[] = {"-O3", "-shared", "-Xcompiler", "-fPIC",
					     "-gencode", "arch=compute_80,code=sm_80",
					     "-gencode", "arch=compute_90,code=sm_90",
					     "-gencode", "arch=compute_90,code=compute_90", NULL};
static const char *const trusted_libs[] = {NULL};

/* ---- the device ---- */

static int usable(char *why, size_t n)
{
	char no[160];
	if (!leap_cuda_usable(no, sizeof no)) {
		snprintf(why, n, "no usable CUDA device: %s", no);
		return 0;
	}
	int checked = 0;
	leap_gpu_require_driver(&checked); /* usable, but not by leap's runtime: said, exit 2 */
	snprintf(why, n, "a CUDA device is usable");
	return 1;
}

/* ---- the prompt's facts ---- */

/* The device facts of the first visible GPU (nvidia-smi), or NULL: name, compute capability,
 * the arch leap-compile builds for, memory. */
static json_t *device_facts(void)
{
	struct leap_gpu g;
	leap_gpu_query(&g);
	const struct leap_gpu_dev *d = leap_gpu_device(&g, 0);
	json_t *j = NULL;
	if (d) {
		j = json_pack("{s:s}", "name", d->name);
		if (d->cc_major) {
			char arch[32];
			leap_gpu_arch(d->cc_major, d->cc_minor, arch, sizeof arch);
			json_object_set_new(j, "compute_capability", json_sprintf("%d.%d", d->cc_major, d->cc_minor));
			json_object_set_new(j, "arch", json_string(arch));
		}
		if (d->memory_mib)
			json_object_set_new(j, "memory_bytes", json_integer((json_int_t)d->memory_mib << 20));
	}
	leap_gpu_free(&g);
	return j;
}

/* The GPU as the device facts describe it: "an NVIDIA H200: 132 SMs, compute capability 9.0,
 * 139 GiB of memory, 60 MiB of L2 cache". Nothing when the name is unknown. */
static void add_gpu(struct leap_buf *s, const json_t *gpu)
{
	const char *name = leap_get_str(gpu, "name", NULL);
	if (!name)
		return;
	leap_buf_addf(s, "Your code runs on one %s", name);
	const char *sep = ": ";
	json_int_t sms = leap_get_int(gpu, "sm_count", 0);
	if (sms > 0) {
		leap_buf_addf(s, "%s%lld SMs", sep, (long long)sms);
		sep = ", ";
	}
	const char *cc = leap_get_str(gpu, "compute_capability", NULL);
	if (cc) {
		leap_buf_addf(s, "%scompute capability %s", sep, cc);
		sep = ", ";
	}
	double mem = leap_get_num(gpu, "memory_bytes", 0), l2 = leap_get_num(gpu, "l2_bytes", 0);
	if (mem > 0) {
		leap_buf_addf(s, "%s%.0f GiB of memory", sep, mem / (1024.0 * 1024 * 1024));
		sep = ", ";
	}
	if (l2 > 0)
		leap_buf_addf(s, "%s%.0f MiB of L2 cache", sep, l2 / (1024.0 * 1024));
	leap_buf_adds(s, ". ");
}

/* The arch the device facts give: "arch", else the one leap-compile picks for their
 * "compute_capability" (lib/backend/gpu.c), into buf; NULL when they give neither. */
static const char *facts_arch(const json_t *gpu, char *buf, size_t n)
{
	const char *arch = leap_get_str(gpu, "arch", NULL);
	const char *cc = leap_get_str(gpu, "compute_capability", NULL);
	int major, minor;
	if (arch)
		return arch;
	if (cc && sscanf(cc, "%d.%d", &major, &minor) == 2) {
		leap_gpu_arch(major, minor, buf, n);
		return buf;
	}
	return NULL;
}

/* The arch flags leap-compile uses where the GPU is not known here: the GPU's own, each
 * spelled by lib/backend/gpu.c. */
static void prompt_arch_rule(struct leap_buf *s)
{
	char a90[16], a100[16];
	leap_gpu_arch(9, 0, a90, sizeof a90);
	leap_gpu_arch(10, 0, a100, sizeof a100);
	char *f90 = leap_gpu_arch_flag(a90), *f100 = leap_gpu_arch_flag(a100), *fdef = leap_gpu_arch_flag(LEAP_DEFAULT_ARCH);
	leap_buf_addf(s, "where ARCH is the flag for the GPU leap-compile finds: `%s` on compute capability 9.0 (H100, "
			 "H200), `%s` on 10.0 (B200), `-arch=sm_XY` on compute capability X.Y otherwise, and `%s` "
			 "where it finds none",
		      f90, f100, fdef);
	free(f90);
	free(f100);
	free(fdef);
}

/* The libraries a cuda candidate may use: task.json's "libraries" (default none). */
static void add_libraries(struct leap_buf *s, const struct leap_task *t)
{
	const json_t *libs = json_object_get(t->json, "libraries");
	if (!json_is_array(libs) || !json_array_size(libs)) {
		leap_buf_adds(s, "Libraries: the CUDA runtime only; no other library (cuBLAS, cuDNN...) is available "
				 "for this task. ");
		return;
	}
	leap_buf_adds(s, "Libraries: the CUDA runtime and ");
	size_t i;
	const json_t *l;
	json_array_foreach(libs, i, l)
		leap_buf_addf(s, "%s%s", i ? (i + 1 == json_array_size(libs) ? " and " : ", ") : "",
			      json_is_string(l) ? json_string_value(l) : "?");
	leap_buf_adds(s, "; no other. ");
}

/* "## Machine and build" (after its heading). */
static void prompt_machine(struct leap_buf *s, const struct leap_task *t, const struct leap_prompt_machine *m)
{
	char buf[32];
	const char *arch = m ? facts_arch(m->gpu, buf, sizeof buf) : NULL;
	if (m && leap_get_str(m->gpu, "name", NULL))
		add_gpu(s, m->gpu);
	else
		leap_buf_addf(s, "The GPU that will run your code is not known to this prompt%s: do not assume its model, "
				 "SM count or memory; ask cudaGetDeviceProperties at run time where your code needs them. ",
			      m && m->gpu ? "" : " (no GPU was visible where it was written)");
	leap_prompt_build(s, m, &leap_backend_cuda, arch);
	if (m && m->have_tc)
		leap_buf_adds(s, "included before your code. ");
	add_libraries(s, t);
	leap_buf_adds(s, "\n\nThe function is called from host code. Every pointer argument is **device** memory, "
			 "already allocated and filled by the harness; do not allocate, free or copy the arguments "
			 "to the host. Launch your kernels on the default stream; the harness synchronises after "
			 "the call and checks for launch errors. Buffers are contiguous and row-major, aligned to 256 "
			 "bytes.");
	if (leap_prompt_has_half(t))
		leap_buf_adds(s, " `half` is `__half` (cuda_fp16.h) and `bf16` is `__nv_bfloat16` (cuda_bf16.h).");
	leap_buf_adds(s, "\n\nScratch device memory of your own is allowed: cudaMalloc and cudaFree within a call "
			 "(timed with it), or a buffer kept across calls in a static pointer and grown when a call "
			 "needs more.\n");
}

/* What a vendor baseline calls, from its baseline_libraries: the call and its arithmetic, as
 * every bundled baseline.cu makes it (tests/leap-prompt.bats checks the sources say so). */
static void add_vendor_baseline(struct leap_buf *s, const struct leap_task *t)
{
	unsigned libs = t->baseline_libraries;
	leap_buf_adds(s, "the task's vendor baseline, as PyTorch eager computes it by default: ");
	int first = 1;
	if (libs & LEAP_LIB_CUBLAS) {
		leap_buf_adds(s, "the matrix products in cuBLAS SGEMM (cublasSgemm, or its strided-batched form) in full "
				 "fp32 (CUBLAS_DEFAULT_MATH: no TF32 tensor cores)");
		first = 0;
	}
	if (libs & LEAP_LIB_CUDNN) {
		leap_buf_addf(s, "%sthe convolution in cuDNN's cudnnConvolutionForward in full fp32 (CUDNN_FMA_MATH: no "
				 "TF32 tensor cores), with the algorithm cuDNN's heuristics suggest", first ? "" : "; ");
		first = 0;
	}
	unsigned rest = libs & ~(unsigned)(LEAP_LIB_CUBLAS | LEAP_LIB_CUDNN);
	for (unsigned bit = 1; rest && bit < 1u << LEAP_LIB_COUNT; bit <<= 1)
		if (rest & bit) {
			leap_buf_addf(s, "%s%s", first ? "calls of " : ", ", leap_library_name(bit));
			first = 0;
		}
	leap_buf_adds(s, "; any other step in plain CUDA kernels. Its handles and workspace are made in an untimed "
			 "first call");
}


static void prompt_speed(struct leap_buf *s, const struct leap_task *t, const struct leap_prompt_machine *m)
{
	(void)m;
	leap_buf_adds(s, " with CUDA events, the L2 cache flushed before every call, against ");
	if (t->baseline_vendor)
		add_vendor_baseline(s, t);
	else
		leap_buf_adds(s, "a straightforward hand-written CUDA kernel");
	leap_buf_adds(s, ".\n");
}

const struct leap_backend_ops leap_backend_cuda = {
	.name = "cuda",
	.ext = "cu",
	.source = "kernel.cu",
	.shim = "leap_shim.cu",
	.runner = "leap-run-cuda",
	.no_runner = "this leap was built without CUDA (no nvcc at build time)",
	.fence = "cuda",
	.compiler = "nvcc",
	.flags = LEAP_BK_LIBRARIES | LEAP_BK_BATCH | LEAP_BK_KERNELS | LEAP_BK_PRECISION | LEAP_BK_OWNER,
	.ptr_types = ptr_types,
	.linkage = "extern \"C\" ",
	.entry_return = "\treturn (int)cudaGetLastError();\n",
	.includes = includes,
	.want = want,
	.missing = missing,
	.host_compiler = "gcc", /* nvcc compiles host code with the gcc on PATH */
	.arch = arch,
	.flags_of = flags_of,
	.user_flags = user_flags,
	.version_mark = "release",
	.roots = roots,
	.link = link_opts,
	.arch_flag = leap_gpu_arch_flag,
	.trusted_cc = trusted_cc,
	.trusted_flags = trusted_flags,
	.trusted_libs = trusted_libs,
	.baseline = "baseline.cu",
	.target_ci = LEAP_BENCH_TARGET_CUDA,
	.floor_margin = LEAP_BENCH_FLOOR_MARGIN_CUDA,
	.first_call_s = 10.0, /* the module's lazy load, a PTX JIT on a GPU the build did not target */
	.usable = usable,
	.first_use = leap_gpu_first_use,
	.visible = leap_gpu_visible,
	.system_prompt = "You are an expert CUDA kernel engineer. You write correct, fast CUDA C++ for NVIDIA "
			 "GPUs. Reply with one fenced code block holding the complete .cu source file and "
			 "nothing after it.",
	.device_facts = device_facts,
	.prompt_machine = prompt_machine,
	.prompt_speed = prompt_speed,
	.prompt_arch_rule = prompt_arch_rule,
};
