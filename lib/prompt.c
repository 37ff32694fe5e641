/* prompt.c - the turn-1 chat messages that state a task to the model. */
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "util.h"
#include "banned.h"

const char *leap_prompt_system(enum leap_backend b)
{
	if (b == LEAP_BACKEND_CPU)
		return "You are an expert in high-performance C. You write correct, fast C11 kernels "
		       "for a CPU (OpenMP and compiler vector extensions are allowed). Reply with one "
		       "fenced code block holding the complete source file and nothing after it.";
	return "You are an expert CUDA kernel engineer. You write correct, fast CUDA C++ for NVIDIA "
	       "GPUs. Reply with one fenced code block holding the complete .cu source file and "
	       "nothing after it.";
}

const char *leap_prompt_lang(enum leap_backend b)
{
	return b == LEAP_BACKEND_CPU ? "c" : "cuda";
}

static void add_case(struct leap_buf *s, const struct leap_task *t, const struct leap_case *c)
{
	int first = 1;
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR)
			continue;
		if (p->type == LEAP_T_INT || p->type == LEAP_T_INT64)
			leap_buf_addf(s, "%s%s=%lld", first ? "" : ", ", p->name, (long long)c->vals[i].i);
		else
			leap_buf_addf(s, "%s%s=%g", first ? "" : ", ", p->name, c->vals[i].f);
		first = 0;
	}
	if (first)
		leap_buf_adds(s, "(no scalars)");
}

char *leap_prompt_user(const struct leap_task *t, enum leap_backend b)
{
	struct leap_buf s = {0};
	const char *lang = leap_prompt_lang(b);
	leap_buf_addf(&s, "# Task: %s\n\n%s", t->title, t->prompt);
	if (s.len && s.s[s.len - 1] != '\n')
		leap_buf_adds(&s, "\n");
	char *proto = leap_task_prototype(t, b);
	leap_buf_addf(&s, "\n## Implement exactly this function\n\n```%s\n%s\n```\n\n", lang, proto);
	free(proto);
	leap_buf_adds(&s, "## Parameters\n\n");
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role == LEAP_ROLE_SCALAR)
			leap_buf_addf(&s, "- `%s`: %s scalar\n", p->name, leap_type_name(p->type));
		else
			leap_buf_addf(&s, "- `%s`: %s buffer of `%s` elements, %s\n", p->name,
				      leap_type_name(p->type), leap_expr_source(p->size),
				      p->role == LEAP_ROLE_IN    ? "input (read only: it must be left unchanged)"
				      : p->role == LEAP_ROLE_OUT ? "output (write every element)"
								 : "input and output (updated in place)");
	}
	leap_buf_adds(&s, "\n## Memory model\n\n");
	if (b == LEAP_BACKEND_CUDA) {
		leap_buf_adds(&s,
			      "The function is called from host code. Every pointer argument is **device** "
			      "memory, already allocated and filled by the harness; do not allocate, free or "
			      "copy the arguments to the host. Launch your kernels on the default stream; the "
			      "harness synchronises after the call and checks for launch errors. Buffers are "
			      "contiguous and row-major, aligned to 256 bytes. `half` is `__half` "
			      "(cuda_fp16.h) and `bf16` is `__nv_bfloat16` (cuda_bf16.h). Compiled with "
			      "`nvcc -O3` as one translation unit.\n");
	} else {
		leap_buf_adds(&s,
			      "The function is called from C. Every pointer argument is host memory, already "
			      "allocated and filled by the harness; do not allocate or free the arguments. "
			      "Buffers are contiguous and row-major, aligned to 64 bytes. `half` and `bf16` "
			      "values are passed as their IEEE bit patterns in `uint16_t`. Compiled as C11 "
			      "with `cc -O2 -fopenmp` as one translation unit; <stdint.h> is included.\n");
	}
	leap_buf_adds(&s, "\n## Checking\n\nCorrectness is checked against a reference on fresh random "
			  "inputs for each of these cases: ");
	for (size_t i = 0; i < t->ncases; i++) {
		leap_buf_adds(&s, i ? "; " : "");
		add_case(&s, t, &t->cases[i]);
	}
	leap_buf_addf(&s, ". Tolerance: |out - ref| <= %g + %g * |ref| for every element. Speed is "
			  "measured on ", t->atol, t->rtol);
	add_case(&s, t, leap_task_bench_case(t, b));
	leap_buf_adds(&s, " against a straightforward baseline.\n");
	leap_buf_addf(&s, "\n## Answer format\n\nOne fenced ```%s block with the complete source: "
			  "includes, helpers and kernels, and the function above with exactly that "
			  "signature. No main(), no test code.\n", lang);
	return leap_buf_detach(&s);
}

json_t *leap_prompt_messages(const char *system, const char *user)
{
	return json_pack("[{s:s,s:s},{s:s,s:s}]", "role", "system", "content", system, "role", "user",
			 "content", user);
}
