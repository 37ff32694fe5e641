/* runplan.h - what a runner does with the host regions: which ranges it makes inaccessible,
 * which it copies to the device and back, which it page-locks. Plain C, so that a test can ask
 * it with a made-up layout (tests/cuda.bats) what the cuda runner, which needs a GPU, does. */
#ifndef LEAP_RUNPLAN_H
#define LEAP_RUNPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "runproto.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why these decisions are written down here, and not inline in the backends: each one, got
 * wrong, stops the cuda path on its first call, and no test machine has a GPU. The host regions
 * are the referee's shared memory. On cpu the candidate's pointers point into them, so their
 * guard ranges are made inaccessible (a write past a buffer faults at once). On cuda the
 * candidate's pointers are device memory; the host regions are staging that only the runner's
 * own copies touch, and a copy from pageable memory is made by the CPU: a guard made
 * inaccessible there faults inside the copy (issue 27, item 1). IN is mapped read-only when
 * sealed, so nothing may be copied back into it (item 2), and it can be page-locked only with
 * cudaHostRegisterReadOnly, which a device may refuse (item 7).
 */

/* One range of a host region: region (enum leap_run_region), offset and length in it. */
struct leap_run_move {
	uint32_t region;
	uint64_t off, len;
};

/* Whether a runner makes guard range g (an entry of the guard list; offsets as in runproto.h:
 * OUT's from LEAP_RUN_OUT_BASE) inaccessible: never when the candidate's pointers do not point
 * into the host regions (`host_pointers` 0: cuda), else when it is page-aligned and lies inside
 * its region (in_len, out_len). Returns 1 with the range in *m, or 0. */
int leap_run_protects(struct leap_run_range g, uint64_t in_len, uint64_t out_len, int host_pointers,
		      struct leap_run_move *m);

/* The copy role's moves for one call whose arguments are row[0..np): each buffer's slot, guards
 * included, clipped to its region (in_len, out_len), into mv[] (room for np). To the device
 * (`back` 0): every buffer. Back to the host (`back` 1): what the candidate may write and the
 * host mapping can take: OUT and INOUT slots, and IN slots only when IN is mapped writable
 * (`in_writable`: not sealed; leap-verify then checks that inputs are unchanged). Returns the
 * count. */
uint32_t leap_run_copy_plan(const struct leap_run_arg *row, uint32_t np, uint64_t in_len, uint64_t out_len, int back,
			    int in_writable, struct leap_run_move *mv);

/* How a host region is page-locked (cudaHostRegister's flags, in words). */
enum leap_run_reg { LEAP_RUN_REG_NONE = 0, LEAP_RUN_REG_DEFAULT, LEAP_RUN_REG_READONLY };

/* Registers `len` bytes at `p` as `how`; 0 on success. The cuda backend's wraps cudaHostRegister. */
typedef int leap_run_reg_fn(void *arg, void *p, size_t len, enum leap_run_reg how);

/* Page-locks the host regions, each on its own (the one's refusal never keeps the other from
 * being tried): IN as READONLY when it is mapped read-only (`in_writable` 0) and the device
 * supports that (`ro_supported`), not at all when it does not, else DEFAULT; OUT as DEFAULT.
 * Empty regions are skipped. Returns a mask: bit LEAP_RUN_R_IN, bit LEAP_RUN_R_OUT for each
 * region registered. Registration is optional: a region that is not is copied from pageable
 * memory, more slowly. */
unsigned leap_run_register(void *in, uint64_t in_len, int in_writable, void *out, uint64_t out_len, int ro_supported,
			   leap_run_reg_fn *reg, void *arg);

#ifdef __cplusplus
}
#endif

#endif
