/* case.h - the data of verification: seeded inputs, poison, reference outputs, comparison. */
#ifndef LEAP_CASE_H
#define LEAP_CASE_H

#include <stdint.h>
#include <jansson.h>

#include "compile/abi.h"
#include "sandbox/runproto.h"
#include "task/task.h"

/* The buffers of one case of a task for `nsets` input sets. The parent keeps its own copy
 * of every input (the arena is shared with the candidate and proves nothing) and the
 * reference outputs, which never leave this process. */
struct leap_case_data {
	const struct leap_task *t;
	const struct leap_case *c;
	size_t index;                /* the case's index in the task (for messages) */
	int drawn;                   /* a drawn case (sizes not listed in the task) */
	uint32_t nsets;              /* input sets drawn */
	uint32_t arena_sets;         /* input sets the arena holds at once (<= nsets) */
	int64_t *sizes;              /* elements per parameter */
	struct leap_run_param *rp;   /* the protocol's view of the parameters */
	uint64_t *in, *out, *after;  /* arena offsets, arena_sets * nparams each */
	uint64_t arena_bytes;
	unsigned char **inputs;      /* [set * nparams + p]: inputs of in/inout parameters */
	unsigned char **want;        /* [set * nparams + p]: reference results of out/inout */
	char *desc;                  /* "n=1000" or "rows=7, cols=33"; a drawn case adds
				      * "; random sizes, not a listed case" */
	double tol_scale;            /* the task's atol and rtol are multiplied by this (0: 1);
				      * leap-bench widens them for longer reductions */
	enum leap_tolerance tol;     /* whose atol and rtol: the task's or KernelBench's */
	unsigned threads;            /* threads leap_case_check may compare a large output on (0:
				      * this one) */
};

/* Prepares case `c` (index `index`) of `t` for `nsets` input sets, of which the arena
 * holds `arena_sets` at once in slots 0..arena_sets-1 (0: all). Returns 0, or -1 with a new
 * message in *err (a size expression fails). Set d->drawn with leap_case_mark_drawn. */
int leap_case_prepare(struct leap_case_data *d, const struct leap_task *t, const struct leap_case *c, size_t index,
		      uint32_t nsets, uint32_t arena_sets, char **err);
void leap_case_free(struct leap_case_data *d);

/* Whether a fork of this process gets the case's large input and output buffers (copy 1, the
 * default) or not (0: the forked child must not touch them, as a sandbox that execs its runner
 * never does). A process that holds many cases and forks often keeps them out; one about to
 * fork a worker that reads them puts them back first. Best effort. */
void leap_case_fork(struct leap_case_data *d, int copy);

/* Marks a prepared case as drawn from the task's ranges: its messages say so (the model
 * learns that its code must handle sizes it was not shown) and its mismatch has "drawn": true. */
void leap_case_mark_drawn(struct leap_case_data *d);

/* Draws fresh inputs of set `set` from `seed` (mixed with case index, set and parameter),
 * using input pattern number `pattern` (rotating over the patterns each buffer allows), and
 * copies them into arena slot set % arena_sets when arena is not NULL. A buffer is never all zeros. */
void leap_case_inputs(struct leap_case_data *d, uint32_t set, uint64_t seed, unsigned pattern, unsigned char *arena);

/* leap_case_inputs(d, k, seed, k, NULL) for every set k below nsets, the same values, each set
 * on a thread of its own: a set's draws are one stream, sets are independent, and a large set's
 * normal draws (a logarithm and a cosine each) were about a third of leap-bench's first record
 * of a task (vector_add's 4M-element inputs). */
void leap_case_inputs_sets(struct leap_case_data *d, uint32_t nsets, uint64_t seed);

/* Draws a donor for leap_case_derive into set `set`: what leap_case_inputs draws, but only the
 * first n / fresh_every elements (at least 64, or n) of each input of n elements, the ones a
 * derived set takes from. */
void leap_case_donor(struct leap_case_data *d, uint32_t set, uint64_t seed, unsigned pattern, uint32_t fresh_every);

/* Makes the inputs of set `dst` from those of set `src` (drawn with pattern `src`, as a pool's
 * base sets are) with the secret stream seeded by `seed`: each input rotated by an offset of its
 * own, every element mixed with its donor's at a second offset (keeping the pattern's
 * distribution, so that no element is the base set's), then about one element in `fresh_every`
 * (at least 64, or all of a smaller input), at places the stream picks (a walk whose gaps it
 * draws, on a stream of its own in each piece of 65536 elements), replaced by an element, also picked by the stream, of donor `donor`
 * (leap_case_donor): drawn like `src` from a secret seed and never given to a candidate. So a
 * derived set is no permutation of a set seen before: its histogram, its column maxima, its
 * sums change, and an output that depends on every element cannot be had without reading
 * every element. Costs about a copy of the inputs. */
void leap_case_derive(struct leap_case_data *d, uint32_t dst, uint32_t src, uint32_t donor, uint64_t seed,
		      uint32_t fresh_every);

/* Poisons the outputs of arena slot `slot` (OUT parameters; INOUT ones hold their input) with
 * plain stores. */
void leap_case_poison(const struct leap_case_data *d, unsigned char *arena, uint32_t slot);

/* One set a block runs on: derived (leap_case_derive) from base set `src` and donor `donor` with
 * the secret stream `seed`, made in arena slot `slot`. */
struct leap_case_recipe {
	uint32_t slot, src, donor;
	uint64_t seed;
};

/* Stages n sets in arena: each derived straight into the IN part of its slot with streaming
 * stores (the bytes leap_case_derive makes from the same recipe; none of them in a cache
 * afterwards: stream.h), then the outputs of its slot poisoned with plain stores on this
 * thread. Each input is made in pieces of its own stream, so that up to `threads` threads (this
 * one included) share the work: a block's inputs are a copy of up to hundreds of megabytes,
 * made while nothing is timed. */
void leap_case_stage(const struct leap_case_data *d, unsigned char *arena, const struct leap_case_recipe *r,
		     uint32_t n, uint32_t fresh_every, unsigned threads);

/* Copies the inputs of set `set` (drawn before) into the IN slots of arena slot `slot`. */
void leap_case_upload(const struct leap_case_data *d, uint32_t set, uint32_t slot, unsigned char *arena);

/* Swaps the buffers (inputs and expected outputs) of set `set` of d with those of set `oset` of
 * o, a case prepared from the same task and case: a set drawn in o moves to d without a copy. */
void leap_case_swap(struct leap_case_data *d, uint32_t set, struct leap_case_data *o, uint32_t oset);

/* The other way: the outputs a trusted run left in arena slot `slot` become the expected
 * outputs of set `set` (leap-bench's baseline, whose outputs are the reference). */
void leap_case_expect(struct leap_case_data *d, uint32_t set, uint32_t slot, const unsigned char *arena);

/* The name of the pattern `pattern` selects for the first floating-point input ("normal"...),
 * or "range" when there is none. Static. */
const char *leap_case_pattern_name(const struct leap_case_data *d, unsigned pattern);

/* Computes the reference outputs of set `set` with the trusted reference entry point.
 * Returns the reference's leap_entry result (0 on success). */
int leap_case_reference(struct leap_case_data *d, uint32_t set, leap_entry_fn ref);

/* Error statistics over compared elements. */
struct leap_errstats {
	double max_abs, max_rel;
};

/* Compares arena slot `slot`, which ran on input set `set`, with the reference: every output element written (not
 * the poison), finite and within atol + rtol*|want|; every in-parameter unchanged (when
 * `check_inputs`). Returns NULL when all is well, otherwise a new `mismatch` object
 * {case, values, trial, output, index, coords?, got, want, kind, count, drawn?, ...} and a new
 * message for the model in *msg. Updates *es with the errors of compared elements. */
json_t *leap_case_check(const struct leap_case_data *d, uint32_t set, uint32_t slot, const unsigned char *arena,
			int check_inputs, struct leap_errstats *es, char **msg);

/* 1 when a mismatch's message quotes the set's inputs (d->inputs): at most 16 elements in
 * each input and 32 in all. */
int leap_case_quotes_inputs(const struct leap_case_data *d);

/* leap_case_check against the outputs the reference left in slot `wslot` of arena `wa` (its own
 * mapping of them), not against the set's buffers: no copy of them first. The messages quote
 * the set's inputs (d->inputs) where they are few. */
json_t *leap_case_check_against(const struct leap_case_data *d, uint32_t set, uint32_t slot,
				const unsigned char *arena, const unsigned char *wa, uint32_t wslot, int check_inputs,
				struct leap_errstats *es, char **msg);

#endif
