/* par.h - work shared by a few threads of this process, for the referee's copies and checks. */
#ifndef LEAP_PAR_H
#define LEAP_PAR_H

#include <stdatomic.h>
#include <stddef.h>

/* The most threads leap_par_run starts. */
#define LEAP_PAR_MAX 8

/* Runs worker(arg) on `threads` threads at once, this one included (fewer where a thread
 * cannot start, LEAP_PAR_MAX at most), and returns when every one has returned. The workers
 * share the work through arg, typically by taking pieces with leap_par_next until none is left;
 * a worker must not assume that any other runs. */
void leap_par_run(unsigned threads, void *(*worker)(void *), void *arg);

/* The next piece of n to take from counter *next, or n when none is left. */
static inline size_t leap_par_next(atomic_size_t *next, size_t n)
{
	size_t i = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
	return i < n ? i : n;
}

#endif
