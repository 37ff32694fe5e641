/* hmap.h - a string-keyed hash map (open addressing) for grouping records by key. */
/*
 * The one hash table of leap: the grouper's open groups, the two-pass summaries, the done
 * file's index and the report's tallies all key on strings taken from records. Linear
 * probing over one array (keys hashed once, the hash kept to skip most compares) is small
 * and fast at the half load it keeps; removal shifts the following entries back instead of
 * leaving tombstones, so a table that sees many groups come and go stays as short as the
 * groups open at one time. Callers step through it with leap_hmap_next, never its slots.
 */
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

/* Removes key[0..len) and returns its value, or NULL when absent. The other entries may
 * move (addresses from leap_hmap_put are no longer valid). */
void *leap_hmap_del(struct leap_hmap *m, const char *key, size_t len);

/* The number of keys. */
size_t leap_hmap_count(const struct leap_hmap *m);

/* Steps through the entries: start with *pos = 0; each call returns 1 with the next entry's
 * key (NUL-terminated; keylen may be NULL) and value (val may be NULL), or 0 after the last.
 * The order is the table's, the same for the same insertions; the map must not change while
 * stepping (a value may: it is returned by value). */
int leap_hmap_next(const struct leap_hmap *m, size_t *pos, const char **key, size_t *keylen, void **val);

/* Frees the map's memory and its keys (not the values); the map is empty afterwards. */
void leap_hmap_free(struct leap_hmap *m);

/* Like leap_hmap_free, after calling free_val on every value (NULL values included, as
 * free() takes them). */
void leap_hmap_free_with(struct leap_hmap *m, void (*free_val)(void *));

#endif
