/* shim.h - generated glue between a candidate's entry point and the uniform artifact ABI (abi.h). */
#ifndef LEAP_SHIM_H
#define LEAP_SHIM_H

#include "task/task.h"

/* The header force-included before the candidate's source (cc/nvcc -include): the includes
 * the prompt promises (<stdint.h>; for cuda also cuda_runtime.h, and cuda_fp16.h / cuda_bf16.h
 * when a parameter is half / bf16)
 * and the entry point's prototype, so that a definition with another signature is a compile
 * error in the candidate's own file. Newly allocated. */
char *leap_shim_prelude(const struct leap_task *t, enum leap_backend b);

/* The source of the shim translation unit (C for cpu, CUDA C++ for cuda) that defines
 * leap_abi_version() and leap_entry() as described in abi.h. Newly allocated. */
char *leap_shim_source(const struct leap_task *t, enum leap_backend b);

#endif
