/* prompt.h - the turn-1 chat messages that state a task to the model. */
#ifndef LEAP_PROMPT_H
#define LEAP_PROMPT_H

#include <jansson.h>

#include "compile/compile.h"
#include "task/task.h"

/* The facts of the machine a prompt states: where the candidate runs and how it is built. */
struct leap_prompt_machine {
	int cores;                /* CPUs the candidate's process may use (0: unknown) */
	int timed_cores;          /* CPUs leap-bench confines it to while timing (0: unknown) */
	char *cpu_model;          /* NULL: unknown */
	char **cpu_flags;         /* SIMD extensions of the CPU (avx2, fma, avx512f...) */
	size_t ncpu_flags;
	char *cpu_caches;         /* "L1d 32 KiB per CPU, ...; 64-byte lines" (sysfs); NULL: unknown */
	int have_tc;              /* tc holds the compiler leap-compile uses */
	struct leap_toolchain tc;
	enum leap_tolerance tolerance; /* the tolerance the checks apply (--tolerance) */
	json_t *gpu;              /* {name, sm_count, compute_capability, arch, memory_bytes,
				   * l2_bytes}, any of them may be missing; NULL: unknown */
};

/* Fills `m` for backend `b`: the compiler as leap-compile resolves it (compile.h), the CPUs
 * this process may run on, the CPU's model and SIMD flags (/proc/cpuinfo) and the caches of
 * the first of those CPUs (/sys/devices/system/cpu), then what the JSON object in
 * `device_info` (a file; may be NULL) says, which wins: "cores", "cpu_model" (which drops the
 * probed caches: they are another CPU's), "cpu_caches" (a sentence), "cpu_flags" and, for cuda, the GPU's "name", "sm_count", "compute_capability", "arch",
 * "memory_bytes", "l2_bytes". Returns 0, or -1 with a new message in *err (the file cannot
 * be read or is not such an object). A missing compiler only leaves have_tc 0. */
int leap_prompt_machine_probe(struct leap_prompt_machine *m, enum leap_backend b, const char *device_info,
			      char **err);
void leap_prompt_machine_free(struct leap_prompt_machine *m);

/* The default system message for backend `b` (static text). */
const char *leap_prompt_system(enum leap_backend b);

/* The user message for task `t` on backend `b`, every fact generated from task.json and `m`
 * (NULL: none known): the task text and exact prototype; the parameters; the inputs (their
 * patterns and ranges, the sizes and the checked cases); correctness (the tolerance in
 * words, how the reference computes, NaN-poisoned outputs); the machine and the build
 * (cores and pinning or the GPU, compiler and flags, libraries, memory model); how speed is
 * measured and against what baseline; the answer format. Sentences that do not apply to the
 * task (half and bf16 types, integer or float outputs) are left out. Newly allocated. */
char *leap_prompt_user(const struct leap_task *t, enum leap_backend b, const struct leap_prompt_machine *m);

/* The fence language tag of answers for `b` (its row's fence). */
const char *leap_prompt_lang(enum leap_backend b);

/* For the backends' prompt_machine (backend.h; promptline.c): the compile sentence, "It is compiled as one
 * translation unit with VERSION: `CMD FLAGS`, with the prototype above " (the backend ends
 * it), nothing when the compiler is not known. `arch`: the architecture the device facts name;
 * NULL where the backend has an arch rule and the device is not known, for which the flags
 * say ARCH and the rule that picks it. */
void leap_prompt_build(struct leap_buf *s, const struct leap_prompt_machine *m, const struct leap_backend_ops *be,
		       const char *arch);
/* 1 when some buffer of t is half or bf16. */
int leap_prompt_has_half(const struct leap_task *t);

/* [{role:system, content:system}, {role:user, content:user}] (new reference). */
json_t *leap_prompt_messages(const char *system, const char *user);

#endif
