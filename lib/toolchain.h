/* toolchain.h - find a backend's compiler, name it for the cache keys, and build its command lines. */
#ifndef LEAP_TOOLCHAIN_H
#define LEAP_TOOLCHAIN_H

#include "compile.h"
#include "util.h"

/* Resolves c->tools[b] once: the compiler's path, its identity (--version, and the host gcc's
 * for nvcc), the cuda arch and the include guard's roots; or tools[b].err. */
void leap_tool_resolve(struct leap_compiler *c, enum leap_backend b);

/* The CUDA compiler to run, as named (one policy for candidates and baselines, the Makefile's
 * HAVE_NVCC follows the same order): `given` (--nvcc) when not NULL, else $NVCC, else
 * $CUDA_HOME/bin/nvcc (CUDA_HOME defaults to /usr/local/cuda) when it can be executed, else
 * the nvcc found on PATH (an absolute path), else $CUDA_HOME/bin/nvcc, which does not run and
 * names what was looked for. Newly allocated. */
char *leap_nvcc_name(const char *given);

/* The full argv of a compiler run of backend b: the compiler, the fixed flags, the user's,
 * then `tail` (NULL-terminated). `shared`: link a shared object, else compile (-c). Newly
 * allocated (leap_strv_free). */
char **leap_tool_argv(const struct leap_compiler *c, enum leap_backend b, int shared, const char *const *tail);

/* Hashes into h what of backend b's toolchain shapes an artifact: identity, arch, flags, the
 * guard's and the hiding's versions. */
void leap_tool_hash(const struct leap_compiler *c, enum leap_backend b, struct leap_hash *h);

#endif
