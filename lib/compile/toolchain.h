/* toolchain.h - find a backend's compiler, name it for the cache keys, and build its command lines. */
#ifndef LEAP_TOOLCHAIN_H
#define LEAP_TOOLCHAIN_H

#include "compiler.h"
#include "core/util.h"

/* Resolves c->tools[b] once: the compiler's path, its identity (--version, and what the
 * backend adds: nvcc's host gcc), the arch and the include guard's roots; or tools[b].err. */
void leap_tool_resolve(struct leap_compiler *c, enum leap_backend b);

/* The full argv of a compiler run of backend b: the compiler, the fixed flags, the user's,
 * then `tail` (NULL-terminated). `shared`: link a shared object, else compile (-c). Newly
 * allocated (leap_strv_free). */
char **leap_tool_argv(const struct leap_compiler *c, enum leap_backend b, int shared, const char *const *tail);

/* Hashes into h what of backend b's toolchain shapes an artifact: identity, arch, flags, the
 * guard's and the hiding's versions. */
void leap_tool_hash(const struct leap_compiler *c, enum leap_backend b, struct leap_hash *h);

/* The toolchain leap-compile uses for a backend, as a model should be told about it. */
struct leap_toolchain {
	char *version; /* "gcc (Debian 12.2.0-14) 12.2.0", "Cuda compilation tools, release 13.0, V13.0.88" */
	char *arch;    /* cuda: the -arch value (from --arch, else the visible GPU's); else NULL */
	char *flags;   /* the options that shape the code, e.g. "-std=gnu11 -O2 -g1 -fPIC -fopenmp
			* -Werror=implicit-function-declaration" (not -shared/-c, not the diagnostics'
			* format) */
};

/* Resolves the compiler of backend `b` as leap-compile does with options `o` (the same
 * lookup, --version query and, on cuda, architecture), without a cache or a work directory.
 * Returns 0 with *tc filled (free with leap_toolchain_free), or -1 with a new message in *err
 * when the compiler is missing or does not run. */
int leap_compile_toolchain(enum leap_backend b, const struct leap_compile_opts *o, struct leap_toolchain *tc,
			   char **err);
void leap_toolchain_free(struct leap_toolchain *tc);

#endif
