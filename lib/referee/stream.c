/* stream.c - streaming stores (stream.h). */

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_STREAM 1
#endif

#include "stream.h"
#include "core/banned.h"

void leap_stream_copy(void *to, const void *from, size_t n)
{
#ifdef HAVE_STREAM
	unsigned char *t = to;
	const unsigned char *f = from;
	size_t head = (size_t)(-(uintptr_t)t & 15);
	if (head > n)
		head = n;
	memcpy(t, f, head);
	t += head;
	f += head;
	n -= head;
	for (; n >= 64; n -= 64, t += 64, f += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)f), b = _mm_loadu_si128((const __m128i *)(f + 16)),
			c = _mm_loadu_si128((const __m128i *)(f + 32)), d = _mm_loadu_si128((const __m128i *)(f + 48));
		_mm_stream_si128((__m128i *)t, a);
		_mm_stream_si128((__m128i *)(t + 16), b);
		_mm_stream_si128((__m128i *)(t + 32), c);
		_mm_stream_si128((__m128i *)(t + 48), d);
	}
	for (; n >= 16; n -= 16, t += 16, f += 16)
		_mm_stream_si128((__m128i *)t, _mm_loadu_si128((const __m128i *)f));
	memcpy(t, f, n);
#else
	memcpy(to, from, n);
#endif
}

void leap_stream_fence(void)
{
#ifdef HAVE_STREAM
	_mm_sfence();
#endif
}
