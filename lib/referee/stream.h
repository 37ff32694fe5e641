/* stream.h - writes that leave nothing in the caches: how leap-bench stages a timed block.
 *
 * A block's time depends on where its inputs are when it starts: in the core's own cache, in
 * the shared one, or in memory. The referee writes every input just before the block that
 * reads it, and what that writing leaves in the caches depends on what ran before: measured
 * on the 2-core VM (480 MiB L3), a column-maximum kernel took 3.3 ms when its block came first
 * in a pair and 4.7 ms when it came second, every pair, so the pairs' ratios alternated between
 * two values 40% apart and no record's interval reached 5% (bench/README.md section 6).
 * Written with streaming stores, a block's inputs are in memory and in no cache when it
 * starts, whatever came before: both blocks of a pair read them alike, as after a GPU timer's
 * flush of the L2 between runs (nvbench, triton's do_bench). The outputs are poisoned with
 * plain stores, in the cache as for every block: poisoned past the caches too, the self-test's
 * kernel against itself measured up to 10% off within a record, whose interval covered 1 in
 * 75% to 97.5% of the self-test's runs of 40 (90% to 95% as it is), the lines a kernel writes
 * then coming from each runner's own memory, which is not as fast for both.
 *
 * x86-64 has the stores (SSE2's movntdq); elsewhere these are plain copies and the caches keep
 * what they keep.
 */
#ifndef LEAP_STREAM_H
#define LEAP_STREAM_H

#include <stddef.h>

/* Copies n bytes from `from` to `to` with streaming stores (to's lines end up in memory and in
 * no cache); a few bytes at either end of an unaligned `to` are plain stores. */
void leap_stream_copy(void *to, const void *from, size_t n);

/* Orders the streaming stores before every later store: call it before another process may
 * read what they wrote (before the block's "go"). */
void leap_stream_fence(void);

#endif
