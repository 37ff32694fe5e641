/* hash.h - FNV-1a, the one non-cryptographic string hash of leap (hash tables, per-task seeds). */
/*
 * Where a hash only spreads keys (hmap.c's table) or turns a task id into a number that seeds
 * a stream (ranges.c's drawn sizes, adaptive.c's revisits), FNV-1a is enough: a byte at a
 * time, no state beyond 64 bits, the same on every machine. The value is part of what a seed
 * replays, so there is one copy of the loop. Where an adversary chooses the input and the
 * result must not collide (cache keys, the referee's stream), leap uses SHA-256 (cache.h).
 */
#ifndef LEAP_HASH_H
#define LEAP_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The 64-bit FNV offset basis: where a hash of nothing starts. */
#define LEAP_FNV1A_BASIS 0xcbf29ce484222325ull

/* FNV-1a (64-bit) of n bytes at p, continuing from h (LEAP_FNV1A_BASIS for a new hash). */
static inline uint64_t leap_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

#endif
