/* rng.h - splitmix64, the one pseudo-random stream of leap: drawn cases, seeded inputs, the
 * referee's secret stream, leap-prune's revisits. */
/*
 * Every draw leap makes must replay from a seed (a verdict re-checks with --seed, a test pins
 * its numbers), so the generator is part of the output and there is exactly one: a change
 * here changes every seeded result at once, never one copy of it. splitmix64 is a 64-bit
 * state, one addition and a finaliser per draw: as fast as a draw can be, and a stream per
 * (seed, task, case) costs one word. Not for secrets an adversary may predict from outputs:
 * the referee's stream is secret because its seed is.
 */
#ifndef LEAP_RNG_H
#define LEAP_RNG_H

#include <stdint.h>

/* splitmix64's finaliser: 64 well-mixed bits of z. */
static inline uint64_t leap_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The golden-ratio increment of the stream (also a multiplier that spreads a counter). */
#define LEAP_RNG_GAMMA 0x9E3779B97F4A7C15ull

/* The next 64 random bits of the stream *s. */
static inline uint64_t leap_rng_next(uint64_t *s)
{
	return leap_mix64(*s += LEAP_RNG_GAMMA);
}

/* x's place in [0, n): the high word of x * n (Lemire's reduction), uniform to within n / 2^64
 * and without the division of x % n, which the referee's hot loops cannot afford. */
static inline uint64_t leap_rng_scale(uint64_t x, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/* The top 53 bits of x as a number uniform in [0, 1). */
static inline double leap_rng_unit_of(uint64_t x)
{
	return (double)(x >> 11) * 0x1.0p-53;
}

/* Uniform in [0, 1), from the stream *s. */
static inline double leap_rng_unit(uint64_t *s)
{
	return leap_rng_unit_of(leap_rng_next(s));
}

#endif
