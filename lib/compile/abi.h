/* abi.h - the binary interface between a compiled candidate (artifact) and the runner that calls it. */
#ifndef LEAP_ABI_H
#define LEAP_ABI_H

/*
 * An artifact is a shared object built by leap-compile from the candidate's source and a
 * generated shim. The candidate implements the task's entry point with the exact prototype
 * of leap_task_prototype(); it never writes harness code. The shim exports:
 *
 *   int leap_abi_version(void);          returns LEAP_ABI_VERSION
 *   int leap_entry(void *const *args);   calls the entry point once
 *
 * args has one slot per task parameter, in the task's order:
 *   - a buffer parameter: args[i] IS the buffer pointer (device memory for cuda, host
 *     memory for cpu), cast to the parameter's pointer type by the shim;
 *   - a scalar parameter: args[i] POINTS TO the value (int, int64_t, float or double).
 * leap_entry returns 0 on success. For cuda it returns the cudaError_t of
 * cudaGetLastError() taken right after the call (launch errors); the runner synchronises
 * and checks again. The runner never calls anything else in the artifact.
 */
#define LEAP_ABI_VERSION 1
#define LEAP_ABI_ENTRY "leap_entry"
#define LEAP_ABI_VERSION_SYMBOL "leap_abi_version"

typedef int (*leap_entry_fn)(void *const *args);
typedef int (*leap_abi_version_fn)(void);

#endif
