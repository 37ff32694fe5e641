/* heap.c - the cpu runner's check of the candidate's own heap blocks.
 *
 * The referee guards the buffers it lays out (a canary and a guard page around each), so a
 * write past an output fails the case it happens in. A write past a block the candidate
 * allocated itself (a scratch tile one row short) corrupted glibc's heap silently on small
 * cases and crashed in malloc on a later, larger one, far from its cause. So the cpu runner
 * replaces the C library's allocator functions (the C library supports that: its own calls
 * go through the same symbols, which leap-run-cpu exports, runner/heap.list) with thin
 * wrappers around glibc's: every block gets LEAP_HEAP_CANARY bytes of a pattern right after
 * its last byte, registered in a table the candidate's pointers never lead to (its own
 * mappings). free and realloc check a block's canary, and heap_check checks every live one
 * after each block of calls (runner/cpu.c), so a write past the end of a block is found in
 * the call that made it. A damaged block is never handed back to glibc, whose metadata the
 * write may have reached.
 *
 * Like everything in the runner's process, the check is within the candidate's reach: it
 * can only make a candidate fail, never pass, so a candidate that defeats it gains nothing.
 * Blocks are not moved or padded in front, so every pointer glibc's allocator would give is
 * the one the candidate gets (alignment included); an allocation that cannot be registered
 * (the table's memory refused) is simply not checked. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap.h"
#include "core/banned.h"

#ifdef __GLIBC__

#define LEAP_HEAP_CANARY 32 /* bytes checked after every block */

void *__libc_malloc(size_t n);
void __libc_free(void *p);
void *__libc_calloc(size_t a, size_t b);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

struct ent {
	uintptr_t p;
	uint64_t size;
	uintptr_t site;
	const char *fn;
};

/* The live blocks: a dense array (the scan walks it) and an open-addressing table of indices
 * into it (-1 empty, -2 deleted), both in mappings of their own. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ent *ents;
static size_t nent, capent;
static int32_t *slots;
static size_t nslot, nused;
static struct {
	int have;
	uint64_t size;
	uintptr_t site;
	const char *fn;
} first;

static const unsigned char pattern[LEAP_HEAP_CANARY] = {
	0xa5, 0x5a, 0xc3, 0x3c, 0xa5, 0x5a, 0xc3, 0x3c, 0xa5, 0x5a, 0xc3, 0x3c, 0xa5, 0x5a, 0xc3, 0x3c,
	0xa5, 0x5a, 0xc3, 0x3c, 0xa5, 0x5a, 0xc3, 0x3c, 0xa5, 0x5a, 0xc3, 0x3c, 0xa5, 0x5a, 0xc3, 0x3c};

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t hash(uintptr_t p, size_t n)
{
	return (size_t)(((uint64_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 17) & (n - 1);
}

/* The slot of block p, or -1. */
static long find(uintptr_t p)
{
	if (!nslot)
		return -1;
	for (size_t k = hash(p, nslot), i = 0; i < nslot; k = (k + 1) & (nslot - 1), i++) {
		if (slots[k] == -1)
			return -1;
		if (slots[k] >= 0 && ents[slots[k]].p == p)
			return (long)k;
	}
	return -1;
}

/* Rebuilds the table with `n` slots (a power of two). Returns 0, or -1 (nothing changed). */
static int rehash(size_t n)
{
	int32_t *s = map(n * sizeof *s);
	if (!s)
		return -1;
	memset(s, 0xff, n * sizeof *s);
	for (size_t i = 0; i < nent; i++) {
		size_t k = hash(ents[i].p, n);
		while (s[k] != -1)
			k = (k + 1) & (n - 1);
		s[k] = (int32_t)i;
	}
	if (slots)
		munmap(slots, nslot * sizeof *slots);
	slots = s;
	nslot = n;
	nused = nent;
	return 0;
}

/* Registers block p. Returns 0, or -1 when there is no room (the block goes unchecked). */
static int add(uintptr_t p, uint64_t size, uintptr_t site, const char *fn)
{
	if (nent == capent) {
		size_t cap = capent ? 2 * capent : 4096;
		if (cap > INT32_MAX)
			return -1;
		struct ent *e = map(cap * sizeof *e);
		if (!e)
			return -1;
		if (ents) {
			memcpy(e, ents, nent * sizeof *e);
			munmap(ents, capent * sizeof *ents);
		}
		ents = e;
		capent = cap;
	}
	if ((nused + 1) * 2 > nslot && rehash(nslot && (nent + 1) * 4 > nslot ? 2 * nslot : nslot ? nslot : 8192))
		return -1;
	size_t k = hash(p, nslot);
	while (slots[k] >= 0)
		k = (k + 1) & (nslot - 1);
	nused += slots[k] == -1;
	slots[k] = (int32_t)nent;
	ents[nent++] = (struct ent){p, size, site, fn};
	return 0;
}

/* Removes the entry in slot k. */
static void drop(long k)
{
	int32_t i = slots[k];
	slots[k] = -2;
	size_t last = nent - 1;
	if ((size_t)i != last) {
		ents[i] = ents[last];
		long m = find(ents[i].p);
		if (m >= 0)
			slots[m] = i;
	}
	nent--;
}

static int damaged(const struct ent *e)
{
	return memcmp((const void *)(e->p + e->size), pattern, LEAP_HEAP_CANARY) != 0;
}

static void note(const struct ent *e)
{
	if (first.have)
		return;
	first.have = 1;
	first.size = e->size;
	first.site = e->site;
	first.fn = e->fn;
}

/* The bytes to ask glibc for a block of n, or 0 on overflow. */
static size_t with_canary(size_t n)
{
	return n > SIZE_MAX - LEAP_HEAP_CANARY ? 0 : n + LEAP_HEAP_CANARY;
}

/* Lays the canary after block p of n bytes and registers it. */
static void *track(void *p, size_t n, uintptr_t site, const char *fn)
{
	if (!p)
		return NULL;
	memcpy((char *)p + n, pattern, LEAP_HEAP_CANARY);
	pthread_mutex_lock(&lock);
	add((uintptr_t)p, n, site, fn);
	pthread_mutex_unlock(&lock);
	return p;
}

/* Unregisters block p; returns 1 when it may go back to glibc (unknown or intact), 0 when
 * its canary was damaged (noted; the block is kept out of glibc's hands). */
static int untrack(void *p)
{
	pthread_mutex_lock(&lock);
	long k = find((uintptr_t)p);
	int ok = 1;
	if (k >= 0) {
		if (damaged(&ents[slots[k]])) {
			note(&ents[slots[k]]);
			ok = 0;
		}
		drop(k);
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

/* The size of registered block p, or -1. */
static int64_t size_of(void *p)
{
	pthread_mutex_lock(&lock);
	long k = find((uintptr_t)p);
	int64_t n = k >= 0 ? (int64_t)ents[slots[k]].size : -1;
	pthread_mutex_unlock(&lock);
	return n;
}

static void *aligned(size_t align, size_t n, uintptr_t site, const char *fn)
{
	size_t m = with_canary(n);
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	return track(__libc_memalign(align, m), n, site, fn);
}

#define SITE ((uintptr_t)__builtin_return_address(0))

void *malloc(size_t n)
{
	size_t m = with_canary(n);
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	return track(__libc_malloc(m), n, SITE, "malloc");
}

void free(void *p)
{
	if (p && untrack(p))
		__libc_free(p);
}

void *calloc(size_t a, size_t b)
{
	size_t n, m;
	if (__builtin_mul_overflow(a, b, &n) || !(m = with_canary(n))) {
		errno = ENOMEM;
		return NULL;
	}
	return track(__libc_calloc(1, m), n, SITE, "calloc");
}

/* realloc: an intact registered block is resized by glibc; a damaged one is noted and kept,
 * its contents copied to a new block. */
static void *resize(void *p, size_t n, uintptr_t site, const char *fn)
{
	size_t m = with_canary(n);
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	if (!p)
		return track(__libc_malloc(m), n, site, fn);
	int64_t old = size_of(p);
	if (old < 0)
		return __libc_realloc(p, n); /* a block that was never registered */
	if (!untrack(p)) {
		void *q = track(__libc_malloc(m), n, site, fn);
		if (q)
			memcpy(q, p, (size_t)old < n ? (size_t)old : n);
		return q;
	}
	void *q = __libc_realloc(p, m);
	if (!q) {
		track(p, (size_t)old, site, fn); /* the old block stays valid */
		return NULL;
	}
	return track(q, n, site, fn);
}

void *realloc(void *p, size_t n)
{
	return resize(p, n, SITE, "realloc");
}

void *reallocarray(void *p, size_t a, size_t b)
{
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return resize(p, n, SITE, "reallocarray");
}

void *aligned_alloc(size_t align, size_t n)
{
	return aligned(align, n, SITE, "aligned_alloc");
}

void *memalign(size_t align, size_t n)
{
	return aligned(align, n, SITE, "memalign");
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = aligned(align, n, SITE, "posix_memalign");
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), n, SITE, "valloc");
}

void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (n > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(page, (n + page - 1) & ~(page - 1), SITE, "pvalloc");
}

size_t malloc_usable_size(void *p)
{
	int64_t n = p ? size_of(p) : 0;
	return n > 0 ? (size_t)n : 0; /* the canary is not the caller's to use */
}

int heap_damage(uint64_t *bytes, uintptr_t *site, const char **fn)
{
	pthread_mutex_lock(&lock);
	int have = first.have;
	*bytes = first.size;
	*site = first.site;
	*fn = first.fn;
	pthread_mutex_unlock(&lock);
	return have;
}

int heap_check(uint64_t *bytes, uintptr_t *site, const char **fn)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nent && !first.have; i++)
		if (damaged(&ents[i]))
			note(&ents[i]);
	pthread_mutex_unlock(&lock);
	return heap_damage(bytes, site, fn);
}

#else /* not glibc: no check */

int heap_damage(uint64_t *bytes, uintptr_t *site, const char **fn)
{
	*bytes = 0;
	*site = 0;
	*fn = "";
	return 0;
}

int heap_check(uint64_t *bytes, uintptr_t *site, const char **fn)
{
	return heap_damage(bytes, site, fn);
}

#endif
