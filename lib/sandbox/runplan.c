/* runplan.c - what a runner does with the host regions (runplan.h): guard protection, the copy
 * role's moves, page-locking. Linked into the runners and into libleap (for the tests). */
/*
 * Why these decisions live here, apart from the backends: runplan.h. They are plain C with no
 * CUDA in them: they return plans (the ranges to protect, the moves to make) and page-lock
 * through a callback, so that the cuda runner's choices are tested on a machine without a GPU
 * with the very code the runner runs.
 */
#include "runplan.h"
#include "core/banned.h"

int leap_run_protects(struct leap_run_range g, uint64_t in_len, uint64_t out_len, int host_pointers,
		      struct leap_run_move *m)
{
	if (!host_pointers)
		return 0;
	int in = g.off < LEAP_RUN_OUT_BASE;
	uint64_t off = in ? g.off : g.off - LEAP_RUN_OUT_BASE, len = in ? in_len : out_len;
	if (off > len || g.len > len - off || off % LEAP_RUN_GUARD || g.len % LEAP_RUN_GUARD || !g.len)
		return 0;
	*m = (struct leap_run_move){in ? LEAP_RUN_R_IN : LEAP_RUN_R_OUT, off, g.len};
	return 1;
}

/* The slot of a buffer at `off` of `bytes` (leap_run_layout placed it between two guards):
 * from the guard before it to the end of the guard after it, clipped to [0, region). Returns 0
 * when nothing of it lies in the region. */
static int slot_of(uint64_t off, uint64_t bytes, uint64_t region, uint64_t *lo, uint64_t *len)
{
	if (off > region || bytes > region - off)
		return 0;
	struct leap_run_range r[4];
	leap_run_canary_ranges(off, bytes, r);
	uint64_t a = off - off % LEAP_RUN_GUARD, b = r[3].off;
	a = a >= LEAP_RUN_GUARD ? a - LEAP_RUN_GUARD : 0;
	b = b <= region && region - b >= LEAP_RUN_GUARD ? b + LEAP_RUN_GUARD : region;
	if (b <= a)
		return 0;
	*lo = a;
	*len = b - a;
	return 1;
}

uint32_t leap_run_copy_plan(const struct leap_run_arg *row, uint32_t np, uint64_t in_len, uint64_t out_len, int back,
			    int in_writable, struct leap_run_move *mv)
{
	uint32_t n = 0;
	for (uint32_t p = 0; p < np; p++) {
		const struct leap_run_arg *a = &row[p];
		if (a->kind == LEAP_RUN_K_SCALAR || a->kind > LEAP_RUN_K_INOUT || a->region > LEAP_RUN_R_OUT)
			continue;
		/* back: what the candidate may have written, where the host mapping takes it */
		if (back && a->region == LEAP_RUN_R_IN && !in_writable)
			continue;
		uint64_t lo, len;
		if (!slot_of(a->off, a->bytes, a->region == LEAP_RUN_R_IN ? in_len : out_len, &lo, &len))
			continue;
		mv[n++] = (struct leap_run_move){a->region, lo, len};
	}
	return n;
}

unsigned leap_run_register(void *in, uint64_t in_len, int in_writable, void *out, uint64_t out_len, int ro_supported,
			   leap_run_reg_fn *reg, void *arg)
{
	unsigned got = 0;
	/* A read-only mapping can be page-locked only as read-only for the device: without the
	 * flag the driver would pin its pages for writing, which the kernel refuses
	 * (cudaHostRegister, cudaHostRegisterReadOnly: "required in order to register memory
	 * mapped to the CPU as read-only"), and the flag itself fails with cudaErrorNotSupported
	 * on a device without cudaDevAttrHostRegisterReadOnlySupported. */
	enum leap_run_reg how_in = in_writable ? LEAP_RUN_REG_DEFAULT : ro_supported ? LEAP_RUN_REG_READONLY : LEAP_RUN_REG_NONE;
	if (in && in_len && how_in != LEAP_RUN_REG_NONE && reg(arg, in, (size_t)in_len, how_in) == 0)
		got |= 1u << LEAP_RUN_R_IN;
	if (out && out_len && reg(arg, out, (size_t)out_len, LEAP_RUN_REG_DEFAULT) == 0)
		got |= 1u << LEAP_RUN_R_OUT;
	return got;
}
