/* crash.h - where a candidate failed at run time: a code address mapped to its source line,
 * the kernels of a CUDA artifact. */
#ifndef LEAP_CRASH_H
#define LEAP_CRASH_H

#include <stdint.h>

/* The source line of the instruction at `offset` (an address of the ELF file `artifact`, as
 * the runner reports it: the faulting pc minus the artifact's load base) when it lies in
 * the candidate's own file, whose base name the compiler saw as `cand` (e.g. "kernel.c").
 * Uses the artifact's DWARF line table (built with -g1). Returns the line (>= 1) and sets
 * *func to a new string naming the function symbol holding the address (NULL when
 * unknown); 0 when the address is not in the candidate's file or has no line information. */
long leap_crash_line(const char *artifact, uint64_t offset, const char *cand, char **func);

/* The __global__ functions a CUDA artifact defines (found through the host stubs nvcc emits
 * for each), as a new comma-separated string of their names ("copy_kernel, ns::tk<...>"),
 * and their number in *n; NULL when there are none or the file cannot be read. */
char *leap_artifact_kernels(const char *artifact, int *n);

#endif
