/* hmap.c - a string-keyed hash map (open addressing) for grouping records by key. */
/*
 * Why one table, probed linearly, with backward-shift removal: hmap.h. Keys are hashed with
 * FNV-1a, once, and the hash is kept in the slot, so that growing never rehashes a string and
 * most probes end without a compare of the key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "hmap.h"
#include "util.h"
#include "banned.h"

/* FNV-1a, 64-bit: keys come from records; the table grows at half load, so a crafted key set
 * costs time, never correctness. The table starts from its own basis, not LEAP_FNV1A_BASIS:
 * any start spreads keys as well, and this one (FNV's basis with its last digit lost) is kept
 * because the order leap_hmap_next steps in follows the hashes, and some outputs follow that
 * order (leap-serve's /metrics lists verdicts in it). */
#define HMAP_BASIS 1469598103934665603ull

static size_t hash(const char *s, size_t n)
{
	return (size_t)leap_fnv1a(HMAP_BASIS, s, n);
}

static size_t find(const struct leap_hmap_slot *slots, size_t cap, const char *key, size_t len, size_t h)
{
	size_t i = h & (cap - 1);
	while (slots[i].key && !(slots[i].hash == h && slots[i].len == len && !memcmp(slots[i].key, key, len)))
		i = (i + 1) & (cap - 1);
	return i;
}

static void grow(struct leap_hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct leap_hmap_slot *s = xcalloc(cap, sizeof(*s));
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			s[find(s, cap, m->slots[i].key, m->slots[i].len, m->slots[i].hash)] = m->slots[i];
	free(m->slots);
	m->slots = s;
	m->cap = cap;
}

void **leap_hmap_put(struct leap_hmap *m, const char *key, size_t len, int *added)
{
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	size_t h = hash(key, len);
	size_t i = find(m->slots, m->cap, key, len, h);
	if (added)
		*added = !m->slots[i].key;
	if (!m->slots[i].key) {
		m->slots[i] = (struct leap_hmap_slot){xstrndup(key, len), len, h, NULL};
		m->n++;
	}
	return &m->slots[i].val;
}

void *leap_hmap_get(const struct leap_hmap *m, const char *key, size_t len)
{
	if (!m->cap)
		return NULL;
	size_t h = hash(key, len);
	size_t i = find(m->slots, m->cap, key, len, h);
	return m->slots[i].key ? m->slots[i].val : NULL;
}

void *leap_hmap_del(struct leap_hmap *m, const char *key, size_t len)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	size_t i = find(m->slots, m->cap, key, len, hash(key, len));
	if (!m->slots[i].key)
		return NULL;
	void *val = m->slots[i].val;
	free(m->slots[i].key);
	/* Backward-shift deletion: move up each following entry of the run whose home slot is
	 * not in (i, j], so that no probe sequence crosses an empty slot it used to pass. */
	for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		size_t home = m->slots[j].hash & mask;
		int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!between) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i] = (struct leap_hmap_slot){0};
	m->n--;
	return val;
}

size_t leap_hmap_count(const struct leap_hmap *m)
{
	return m->n;
}

int leap_hmap_next(const struct leap_hmap *m, size_t *pos, const char **key, size_t *keylen, void **val)
{
	for (; *pos < m->cap; (*pos)++) {
		const struct leap_hmap_slot *s = &m->slots[*pos];
		if (!s->key)
			continue;
		*key = s->key;
		if (keylen)
			*keylen = s->len;
		if (val)
			*val = s->val;
		(*pos)++;
		return 1;
	}
	return 0;
}

void leap_hmap_free_with(struct leap_hmap *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			free_val(m->slots[i].val);
	leap_hmap_free(m);
}

void leap_hmap_free(struct leap_hmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
