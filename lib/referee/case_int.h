/* case_int.h - what case_draw.c and case_check.c share: the element types' numbers, and pieces. */
/*
 * Private to the files of case.h. Both make or read buffers element by element in their hot
 * loops (a draw, a derived set, a comparison), so the conversions and accessors of the element
 * types are static inline: each loop inlines them as it would a static function of its own
 * file, and a type's representation is written down once, for both. The pieces are the units
 * that threads share, of a derived input (case_draw.c) as of a compared output (case_check.c).
 */
#ifndef LEAP_CASE_INT_H
#define LEAP_CASE_INT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/rng.h"
#include "case.h"

/* ---- numbers ---- */

/* Standard normal draws from the stream *rng, two at a time: Box-Muller in single precision,
 * both of its outputs, both uniforms from one 64-bit draw (u in (0, 1], so tails end at 5.8
 * standard deviations). Inputs are single precision or narrower; the double-precision log
 * and cosine per draw were most of what a pool's first record took to draw vector_add's four
 * million-element inputs (bench/README.md section 6). */
struct normals {
	uint64_t *rng;
	float spare;
	int have;
};

static inline double normal(struct normals *g)
{
	if (g->have) {
		g->have = 0;
		return g->spare;
	}
	uint64_t x = leap_rng_next(g->rng);
	float u = (float)((x >> 40) + 1) * 0x1.0p-24f, v = (float)(x & 0xffffff) * 0x1.0p-24f;
	float r = sqrtf(-2.0f * logf(u)), sn, cs;
	sincosf(6.28318531f * v, &sn, &cs);
	g->spare = r * sn;
	g->have = 1;
	return r * cs;
}

/* IEEE binary16 bits of f, rounded to nearest even (overflow to infinity). */
static inline uint16_t float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
	if (e == 0xff)
		return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
	int ex = (int)e - 127 + 15;
	if (ex >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (ex <= 0) {
		if (ex < -10)
			return (uint16_t)sign;
		m |= 0x800000;
		int shift = 14 - ex;
		uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (hm & 1)))
			hm++;
		return (uint16_t)(sign | hm);
	}
	uint32_t hm = m >> 13, rem = m & 0x1fff;
	uint32_t h = sign | ((uint32_t)ex << 10) | hm;
	if (rem > 0x1000 || (rem == 0x1000 && (hm & 1)))
		h++;
	return (uint16_t)h;
}

/* The float value of binary16 bits h (exact). */
static inline float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
	if (e == 0) {
		if (m == 0) {
			x = sign;
		} else {
			int k = -1;
			do {
				k++;
				m <<= 1;
			} while (!(m & 0x400));
			x = sign | ((uint32_t)(127 - 15 - k) << 23) | ((m & 0x3ff) << 13);
		}
	} else if (e == 31) {
		x = sign | 0x7f800000 | (m << 13);
	} else {
		x = sign | ((e + 127 - 15) << 23) | (m << 13);
	}
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* bfloat16 bits of f, rounded to nearest even (NaN stays NaN). */
static inline uint16_t float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

/* The float value of bfloat16 bits h (exact). */
static inline float bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* Element i of a buffer of type `ty` as a double. */
static inline double get(enum leap_type ty, const unsigned char *b, size_t i)
{
	switch (ty) {
	case LEAP_T_FLOAT: {
		float f;
		memcpy(&f, b + 4 * i, 4);
		return f;
	}
	case LEAP_T_DOUBLE: {
		double f;
		memcpy(&f, b + 8 * i, 8);
		return f;
	}
	case LEAP_T_INT: {
		int32_t v;
		memcpy(&v, b + 4 * i, 4);
		return v;
	}
	case LEAP_T_INT64: {
		int64_t v;
		memcpy(&v, b + 8 * i, 8);
		return (double)v;
	}
	case LEAP_T_HALF: {
		uint16_t h;
		memcpy(&h, b + 2 * i, 2);
		return half_to_float(h);
	}
	case LEAP_T_BF16: {
		uint16_t h;
		memcpy(&h, b + 2 * i, 2);
		return bf16_to_float(h);
	}
	case LEAP_T_UINT8:
		return b[i];
	}
	return 0;
}

/* Stores v as element i of a buffer of type ty (converted, rounded for half/bf16). */
static inline void put(enum leap_type ty, unsigned char *b, size_t i, double v)
{
	switch (ty) {
	case LEAP_T_FLOAT: {
		float f = (float)v;
		memcpy(b + 4 * i, &f, 4);
		break;
	}
	case LEAP_T_DOUBLE:
		memcpy(b + 8 * i, &v, 8);
		break;
	case LEAP_T_INT: {
		int32_t x = (int32_t)v;
		memcpy(b + 4 * i, &x, 4);
		break;
	}
	case LEAP_T_INT64: {
		int64_t x = (int64_t)v;
		memcpy(b + 8 * i, &x, 8);
		break;
	}
	case LEAP_T_HALF: {
		uint16_t h = float_to_half((float)v);
		memcpy(b + 2 * i, &h, 2);
		break;
	}
	case LEAP_T_BF16: {
		uint16_t h = float_to_bf16((float)v);
		memcpy(b + 2 * i, &h, 2);
		break;
	}
	case LEAP_T_UINT8:
		b[i] = (unsigned char)v;
		break;
	}
}

/* ---- pieces ---- */

/* Bytes of a streamed input made at a time (in the first-level cache), then written past the
 * caches: a multiple of every element size it is used for. */
#define DERIVE_CHUNK 8192

/* Elements of an input made from one stream of their own: the pieces threads share (a
 * multiple of DERIVE_CHUNK / es for every element size). */
#define DERIVE_PIECE ((uint64_t)1 << 16)

/* Staging or checking fewer bytes than this takes one thread: below it a thread costs more
 * than it saves. */
#define PAR_BYTES ((uint64_t)1 << 20)


/* Pieces of an input of n elements. */
static inline uint64_t pieces(uint64_t n)
{
	return (n + DERIVE_PIECE - 1) / DERIVE_PIECE;
}

#endif
