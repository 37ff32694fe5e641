/* hmap.h - a string-keyed hash map (open addressing) for grouping records by key. */
#ifndef LEAP_HMAP_H
#define LEAP_HMAP_H

#include <stddef.h>

struct leap_hmap_slot {
	char *key;  /* owned copy; NULL marks an empty slot */
	size_t len;
	size_t hash;
	void *val;
};

struct leap_hmap {
	struct leap_hmap_slot *slots;
	size_t cap, n; /* cap is 0 or a power of two */
};

/* Returns the address of the value stored under key[0..len), inserting a NULL value first
 * when the key is new (then *added is set to 1, else 0; added may be NULL). The address is
 * valid until the next insertion. Never fails (dies on exhaustion). */
void **leap_hmap_put(struct leap_hmap *m, const char *key, size_t len, int *added);

/* Returns the value stored under key[0..len), or NULL when absent. */
void *leap_hmap_get(const struct leap_hmap *m, const char *key, size_t len);

/* Frees the map's memory and its keys (not the values); the map is empty afterwards. */
void leap_hmap_free(struct leap_hmap *m);

/* Iterate: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

#endif
