/* cache.c - content-addressed store of compile results (SHA-256 keys, atomic publication, LRU size bound). */
/*
 * Why a directory of files published by rename, with no lock: cache.h. What that asks of this
 * file: a temporary's name carries host, pid, a counter and random bytes, so that processes and
 * hosts sharing the cache never write one file; a program can remove its own temporaries (when it
 * aborts, leap_cache_remove_own_tmp) and eviction removes stale ones a crash left; a result whose
 * .json does not read back as an object, or whose artifact is missing, is a miss, never an error:
 * a miss only costs a compile.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "cache.h"
#include "core/files.h"
#include "core/jsonl.h"
#include "core/util.h"
#include "core/banned.h"

/* Where the cache lives when no --cache says: every program's one policy (cache.h). */
char *leap_cache_dir(void)
{
	const char *e = getenv("LEAP_CACHE");
	if (e && *e)
		return xstrdup(e);
	e = getenv("XDG_CACHE_HOME");
	if (e && *e == '/')
		return xasprintf("%s/leap", e);
	e = getenv("HOME");
	if (e && *e == '/')
		return xasprintf("%s/.cache/leap", e);
	/* No HOME (a service, env -i): the account's home directory. Never a fixed name in a
	 * shared /tmp: another user could create it first and choose the artifacts we load. */
	struct passwd *pw = getpwuid(geteuid());
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/' && strcmp(pw->pw_dir, "/"))
		return xasprintf("%s/.cache/leap", pw->pw_dir);
	return NULL;
}

void leap_hash_init(struct leap_hash *h)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		leap_die("libcrypto cannot compute SHA-256");
	h->ctx = ctx;
}

void leap_hash_field(struct leap_hash *h, const void *data, size_t len)
{
	unsigned char n[8];
	uint64_t l = len;
	for (int i = 0; i < 8; i++)
		n[i] = (unsigned char)(l >> (8 * i));
	if (EVP_DigestUpdate(h->ctx, n, sizeof(n)) != 1 || (len && EVP_DigestUpdate(h->ctx, data, len) != 1))
		leap_die("libcrypto: SHA-256 update failed");
}

void leap_hash_str(struct leap_hash *h, const char *s)
{
	leap_hash_field(h, s ? s : "", s ? strlen(s) : 0);
}

void leap_hash_final(struct leap_hash *h, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1 || n != 32)
		leap_die("libcrypto: SHA-256 final failed");
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
	static const char digits[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

int leap_cache_open(struct leap_cache *c, const char *dir, int64_t max_bytes, char **err)
{
	memset(c, 0, sizeof(*c));
	c->dir = xasprintf("%s/v1", dir);
	c->tmp = xasprintf("%s/v1/tmp", dir);
	c->max_bytes = max_bytes;
	if (leap_mkdirs_mode(c->tmp, 0777)) { /* the umask decides who shares the cache */
		*err = xasprintf("cannot create the cache directory %s: %s", c->tmp, strerror(errno));
		free(c->dir);
		free(c->tmp);
		memset(c, 0, sizeof(*c));
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	return 0;
}

void leap_cache_close(struct leap_cache *c)
{
	if (!c->dir)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	free(c->tmp);
	memset(c, 0, sizeof(*c));
}

char *leap_cache_path(const struct leap_cache *c, const char *hash, const char *ext)
{
	return xasprintf("%s/%.2s/%s.%s", c->dir, hash, hash, ext);
}

/* The host name as it appears in temporary names (unsafe characters replaced). */
static void tmp_host(char host[64])
{
	memcpy(host, "host", 5);
	if (gethostname(host, 63))
		host[0] = '\0';
	host[63] = '\0';
	for (char *p = host; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
			*p = '_';
}

void leap_cache_remove_own_tmp(struct leap_cache *c)
{
	char host[64];
	tmp_host(host);
	char *prefix = xasprintf("%s.%ld.", host, (long)getpid());
	DIR *d = opendir(c->tmp);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, prefix, strlen(prefix)))
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	free(prefix);
}

char *leap_cache_tmp(struct leap_cache *c, const char *ext)
{
	char host[64];
	tmp_host(host);
	unsigned char r[4] = {0};
	if (RAND_bytes(r, sizeof(r)) != 1)
		r[0] = (unsigned char)time(NULL);
	pthread_mutex_lock(&c->lock);
	unsigned long n = ++c->counter;
	pthread_mutex_unlock(&c->lock);
	return xasprintf("%s/%s.%ld.%lu.%02x%02x%02x%02x.%s", c->tmp, host, (long)getpid(), n, r[0], r[1], r[2], r[3],
			 ext);
}

json_t *leap_cache_get(struct leap_cache *c, const char *hash, const char *ext)
{
	char *path = leap_cache_path(c, hash, "json");
	json_error_t jerr;
	json_t *meta = json_load_file(path, 0, &jerr);
	if (!meta || !json_is_object(meta)) {
		json_decref(meta);
		free(path);
		return NULL;
	}
	const char *status = leap_get_str(meta, "status", "");
	if (!strcmp(status, "ok")) {
		char *art = leap_cache_path(c, hash, ext);
		struct stat st;
		int ok = stat(art, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
		free(art);
		if (!ok) {
			json_decref(meta);
			free(path);
			return NULL;
		}
	}
	/* mark as used now; failure (a read-only cache) only affects eviction order */
	if (utimensat(AT_FDCWD, path, NULL, 0) && errno != EROFS && errno != EACCES && errno != EPERM)
		leap_warn_errno("%s: cannot mark as used", path);
	free(path);
	return meta;
}

static int64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

int leap_cache_put(struct leap_cache *c, const char *hash, const char *tmp_artifact, const char *ext,
		   const json_t *meta, char **err)
{
	char *sub = xasprintf("%s/%.2s", c->dir, hash);
	int64_t bytes = 0;
	if (mkdir(sub, 0777) && errno != EEXIST) {
		*err = xasprintf("cannot create %s: %s", sub, strerror(errno));
		free(sub);
		if (tmp_artifact)
			unlink(tmp_artifact);
		return -1;
	}
	free(sub);
	if (tmp_artifact) {
		char *dst = leap_cache_path(c, hash, ext);
		bytes += file_size(tmp_artifact);
		if (rename(tmp_artifact, dst)) {
			*err = xasprintf("cannot publish %s: %s", dst, strerror(errno));
			free(dst);
			unlink(tmp_artifact);
			return -1;
		}
		free(dst);
	}
	char *tmp = leap_cache_tmp(c, "json");
	char *dst = leap_cache_path(c, hash, "json");
	int rc = 0;
	FILE *fp = fopen(tmp, "wxe");
	struct leap_buf text = {0};
	if (!fp || leap_json_append(&text, meta) || (leap_buf_add(&text, "\n", 1), fwrite(text.s, 1, text.len, fp) != text.len) ||
	    fflush(fp) == EOF) {
		*err = xasprintf("cannot write %s: %s", tmp, strerror(errno));
		rc = -1;
	}
	leap_buf_free(&text);
	if (fp) {
		bytes += ftell(fp) > 0 ? ftell(fp) : 0;
		if (fclose(fp) && !rc) {
			*err = xasprintf("cannot write %s: %s", tmp, strerror(errno));
			rc = -1;
		}
	}
	if (!rc && rename(tmp, dst)) {
		*err = xasprintf("cannot publish %s: %s", dst, strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	free(dst);
	if (!rc && c->max_bytes > 0) {
		pthread_mutex_lock(&c->lock);
		c->since_scan += bytes;
		int scan = !c->scanned || c->since_scan > c->max_bytes / 16;
		if (scan) {
			c->scanned = 1;
			c->since_scan = 0;
		}
		pthread_mutex_unlock(&c->lock);
		if (scan)
			leap_cache_evict(c);
	}
	return rc;
}

/* One result found by a scan. */
struct entry {
	char hash[65];
	int64_t used;     /* mtime of the .json in ns; 0 without one */
	int64_t newest;   /* newest mtime of its files in ns */
	int64_t bytes;
	int has_json;
};

static int by_use(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return strcmp(x->hash, y->hash);
}

static int by_hash(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->hash, ((const struct entry *)b)->hash);
}

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

static void remove_result(const struct leap_cache *c, const char *hash)
{
	static const char *const exts[] = {"json", "so", "o"}; /* the commit marker first */
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		char *p = leap_cache_path(c, hash, exts[i]);
		if (unlink(p) && errno != ENOENT)
			leap_warn_errno("%s: cannot evict", p);
		free(p);
	}
}

long leap_cache_evict(struct leap_cache *c)
{
	time_t now = time(NULL);
	/* stale temporaries */
	DIR *d = opendir(c->tmp);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char *p = xasprintf("%s/%s", c->tmp, e->d_name);
			struct stat st;
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > 3600)
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	if (c->max_bytes <= 0)
		return 0;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	int64_t total = 0;
	d = opendir(c->dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2))
			continue;
		char *sub = xasprintf("%s/%s", c->dir, e->d_name);
		DIR *sd = opendir(sub);
		struct dirent *f;
		while (sd && (f = readdir(sd))) {
			const char *dot = strchr(f->d_name, '.');
			if (!dot || dot - f->d_name != 64 || !is_hex(f->d_name, 64))
				continue;
			char *p = xasprintf("%s/%s", sub, f->d_name);
			struct stat st;
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				xgrow((void **)&v, &cap, n + 1, sizeof(*v));
				struct entry *x = &v[n++];
				memset(x, 0, sizeof(*x));
				memcpy(x->hash, f->d_name, 64);
				x->bytes = st.st_size;
				x->newest = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
				if (!strcmp(dot, ".json")) {
					x->has_json = 1;
					x->used = x->newest;
				}
				total += st.st_size;
			}
			free(p);
		}
		if (sd)
			closedir(sd);
		free(sub);
	}
	closedir(d);
	/* merge the files of one result */
	qsort(v, n, sizeof(*v), by_hash);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1].hash, v[i].hash)) {
			struct entry *x = &v[m - 1];
			x->bytes += v[i].bytes;
			if (v[i].has_json) {
				x->has_json = 1;
				x->used = v[i].used;
			}
			if (v[i].newest > x->newest)
				x->newest = v[i].newest;
		} else {
			v[m++] = v[i];
		}
	}
	long removed = 0;
	for (size_t i = 0; i < m; i++) {
		/* an artifact without its .json for an hour was left by a crashed writer */
		if (!v[i].has_json && (int64_t)now - v[i].newest / 1000000000 > 3600) {
			remove_result(c, v[i].hash);
			total -= v[i].bytes;
			v[i].bytes = 0;
		}
		if (!v[i].has_json)
			v[i].used = v[i].newest;
	}
	if (total > c->max_bytes) {
		qsort(v, m, sizeof(*v), by_use);
		for (size_t i = 0; i < m && total > c->max_bytes; i++) {
			if (!v[i].has_json || !v[i].bytes)
				continue; /* being published right now */
			remove_result(c, v[i].hash);
			total -= v[i].bytes;
			removed++;
		}
	}
	free(v);
	pthread_mutex_lock(&c->lock);
	c->evicted += removed;
	pthread_mutex_unlock(&c->lock);
	return removed;
}
