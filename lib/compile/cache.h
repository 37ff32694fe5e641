/* cache.h - content-addressed store of compile results (SHA-256 keys, atomic publication, LRU size bound). */
#ifndef LEAP_CACHE_H
#define LEAP_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/*
 * Layout under the cache directory D (shared by any number of processes and hosts):
 *   D/v1/xx/HASH.json   the result (status, diagnostics, log...): the commit marker
 *   D/v1/xx/HASH.so     the artifact of a successful compile (HASH.o: a shim object)
 *   D/v1/tmp/           files being written; renamed into place when complete
 * xx is the first two hex digits of HASH. A result is published by writing its files under
 * tmp/ and renaming them into place, the artifact first and the .json last, so a reader that
 * finds the .json finds a complete artifact; rename is atomic on local filesystems and NFS,
 * and no lock is taken. Two processes compiling the same source publish identical results;
 * the last rename wins. A lookup touches the .json (its mtime is the last use), and eviction
 * removes the least recently used results until the total size is under the bound.
 */

/* The default cache directory of every program: $LEAP_CACHE, else $XDG_CACHE_HOME/leap (when
 * absolute), else $HOME/.cache/leap (when absolute), else .cache/leap in the user's home
 * directory from the passwd database (not "/"). Newly allocated; the directory may not exist
 * yet. NULL when there is none: the caller asks for --cache or LEAP_CACHE. */
char *leap_cache_dir(void);

/* A SHA-256 digest over a sequence of length-prefixed fields (so that no two different
 * sequences hash the same way by moving a boundary). */
struct leap_hash {
	void *ctx; /* EVP_MD_CTX */
};

/* Starts a digest. Dies when libcrypto cannot provide SHA-256. */
void leap_hash_init(struct leap_hash *h);
/* Adds one field: its length (8 bytes, little-endian) then its bytes. */
void leap_hash_field(struct leap_hash *h, const void *data, size_t len);
void leap_hash_str(struct leap_hash *h, const char *s);
/* Ends the digest and writes it as 64 lowercase hex digits and a NUL into hex[65]. */
void leap_hash_final(struct leap_hash *h, char hex[65]);

struct leap_cache {
	char *dir;               /* D/v1 */
	char *tmp;               /* D/v1/tmp */
	int64_t max_bytes;       /* size bound (0: unbounded) */
	pthread_mutex_t lock;    /* guards what follows */
	unsigned long counter;   /* temporary file names */
	int64_t since_scan;      /* bytes published since the last eviction scan */
	int scanned;             /* an eviction scan ran in this process */
	long evicted;            /* results evicted by this process */
};

/* Opens (creating as needed) the cache at `dir` with a size bound. Returns 0, or -1 with a
 * new message in *err (cannot create the directories). */
int leap_cache_open(struct leap_cache *c, const char *dir, int64_t max_bytes, char **err);
void leap_cache_close(struct leap_cache *c);

/* The path of result `hash` with extension `ext` ("json", "so", "o"). Newly allocated. */
char *leap_cache_path(const struct leap_cache *c, const char *hash, const char *ext);

/* A new unique path under tmp/ ending in `ext`, for a file about to be published; unique
 * across threads, processes and hosts (host name, pid, counter, random). Newly allocated. */
char *leap_cache_tmp(struct leap_cache *c, const char *ext);

/* Removes the temporaries of this process under tmp/ (the files leap_cache_tmp named for
 * it), for a program ending on a signal. Best effort; async-signal-safety not needed. */
void leap_cache_remove_own_tmp(struct leap_cache *c);

/* Looks up `hash`. Returns its result object (new reference) and marks it used, or NULL when
 * absent, unreadable, or a successful result whose artifact (`ext`) is missing. */
json_t *leap_cache_get(struct leap_cache *c, const char *hash, const char *ext);

/* Publishes a result: renames the finished file `tmp_artifact` (may be NULL) to HASH.`ext`,
 * then writes `meta` to HASH.json through a temporary file and a rename. Returns 0, or -1
 * with a new message in *err (the temporary artifact is then removed). Evicts old results
 * when the bound is exceeded. */
int leap_cache_put(struct leap_cache *c, const char *hash, const char *tmp_artifact, const char *ext,
		   const json_t *meta, char **err);

/* Removes least recently used results until the cache is within its bound, and temporary
 * files older than an hour (left by crashed writers). Returns the number of results
 * removed. Safe to run in several processes at once. */
long leap_cache_evict(struct leap_cache *c);

#endif
