/* heap.h - the cpu runner's check of the candidate's own heap blocks (runner/heap.c). */
#ifndef LEAP_RUNNER_HEAP_H
#define LEAP_RUNNER_HEAP_H

#include <stdint.h>

/* The first block the process allocated whose canary after its last byte was found damaged
 * (at free, realloc, or by heap_check), or 0 when none was. Fills *bytes (its size), *site
 * (the return address of the call that allocated it, 0 when unknown) and *fn (the allocating
 * function: "malloc", "calloc"...). */
int heap_damage(uint64_t *bytes, uintptr_t *site, const char **fn);

/* Checks the canary of every block still allocated; returns heap_damage's answer. */
int heap_check(uint64_t *bytes, uintptr_t *site, const char **fn);

#endif
