/* compile_int.h - what the batch mode (cbatch.c) uses of compile.c. Not an interface for programs: see compile.h. */
#ifndef LEAP_COMPILE_INT_H
#define LEAP_COMPILE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "compile.h"
#include "core/util.h"

/* The header every compile includes first (-include), in the job directory. */
#define LEAP_PRELUDE_FILE "leap_prelude.h"

/* Rounds to 0.01 ms, so that records stay short. */
double leap_compile_round_ms(double ms);
/* Makes a new job directory under c's work directory (newly allocated), or NULL with *err. */
char *leap_compile_jobdir(struct leap_compiler *c, char **err);
/* A compiler's output `out` scrubbed of this machine's paths (job `dir`, work directory,
 * cache, CUDA_HOME, HOME). Newly allocated. */
char *leap_compile_scrub(const struct leap_compiler *c, const char *dir, const struct leap_buf *out);
/* The private path of v's shim object, built once per process (owned by v), or NULL with *err. */
const char *leap_compile_shim(struct leap_compiler *c, struct leap_variant *v, char **err);
/* Stores r in the cache under `key` (with the artifact `tmp_artifact` when ok); an ok result
 * that cannot be stored becomes internal. */
void leap_compile_publish(struct leap_compiler *c, const char *key, const char *tmp_artifact, struct leap_cresult *r,
			  const char *full_log);

#endif
