/* build.h - build a task's trusted sources (reference.c, baseline.cu) into cached artifacts.
 * Candidates, by hand too, are built by compile.c (see hand.h). */
#ifndef LEAP_BUILD_H
#define LEAP_BUILD_H

#include "task.h"

/* Builds `source` (the candidate or reference source text) for task `t` and backend `b`
 * into a shared object exporting the artifact ABI (abi.h): the task's prelude is
 * force-included and the generated shim linked in, with the backend's compiler and flags
 * (its trusted_cc and trusted_flags: cc as $CC or "cc", -O2; nvcc as leap-compile finds it,
 * $NVCC, $CUDA_HOME/bin/nvcc, PATH, -O3, code for sm_80 and sm_90 and PTX for later GPUs). Objects are cached under
 * CACHE/artifacts/ by the SHA-256 of the command line that builds them (the compiler as named,
 * its flags, the files' names within the build directory), prelude, shim and source, so a
 * second call is a lookup. Returns the absolute path of the object (new string), or NULL with a
 * new message in *err (compiler output included, at most a few KiB). */
char *leap_build_artifact(const struct leap_task *t, enum leap_backend b, const char *source, size_t len,
			  const char *cache, char **err);

/* Builds `source`, a complete trusted shared object that exports the artifact ABI itself (the
 * torch baseline of a module task: lib/referee/torchbase.c), with the reference backend's
 * compiler and flags (cc -O2 -shared -fPIC), no prelude and no shim; cached as
 * leap_build_artifact's objects are. Returns the absolute path (new string), or NULL with *err. */
char *leap_build_plain(const struct leap_task *t, const char *source, size_t len, const char *cache, char **err);

/* The hex SHA-256 (64 digits and a NUL into out) of the parts, each followed by a NUL byte. */
void leap_sha256_hex(char out[65], const char *const *parts, const size_t *lens, int n);

#endif
