/* files.c - whole files: read one, write one, copy one, make a directory's parents, remove a
 * tree leap made (files.h). */
/*
 * The builds of trusted sources, the compiler's job directories, leap-prune's state and the
 * caches all read and write whole files, and each had grown its own loop. They are here once,
 * over fdio.h's exact reads and writes, each with the messages the programs print ("cannot
 * open P: why", "cannot write P: why"). None of them is atomic: a file that others may read
 * while it is written is written under a temporary name and renamed by the caller (cache.c,
 * adaptive.c), which knows where the temporary may live.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "files.h"
#include "util.h"
#include "banned.h"

int leap_read_fd(int fd, struct leap_buf *b)
{
	char chunk[65536];
	for (;;) {
		ssize_t k = read(fd, chunk, sizeof chunk);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			return 0;
		leap_buf_add(b, chunk, (size_t)k);
	}
}

char *leap_read_file(const char *path, size_t *len, char **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = xasprintf("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	struct leap_buf b = {0};
	int bad = leap_read_fd(fd, &b) ? errno : 0;
	close(fd);
	if (bad) {
		*err = xasprintf("cannot read %s: %s", path, strerror(bad));
		leap_buf_free(&b);
		return NULL;
	}
	*len = b.len;
	leap_buf_add(&b, "", 0);
	if (!b.s)
		return xstrdup("");
	return leap_buf_detach(&b);
}

int leap_write_file(const char *path, const char *data, size_t n, char **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (err)
			*err = xasprintf("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	int bad = leap_write_full(fd, data, n) ? errno : 0;
	if (close(fd) && !bad)
		bad = errno;
	if (bad) {
		if (err)
			*err = xasprintf("cannot write %s: %s", path, strerror(bad));
		errno = bad;
		return -1;
	}
	return 0;
}

int leap_copy_file(const char *from, const char *to, char **err)
{
	size_t n = 0;
	char *data = leap_read_file(from, &n, err);
	if (!data)
		return -1;
	int rc = leap_write_file(to, data, n, err);
	free(data);
	return rc;
}

int leap_mkdirs_mode(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, mode) && errno != EEXIST) {
				free(p);
				return -1;
			}
			*s = '/';
		}
	int r = mkdir(p, mode) && errno != EEXIST ? -1 : 0;
	free(p);
	return r;
}

int leap_mkdirs(const char *path)
{
	return leap_mkdirs_mode(path, 0755);
}

void leap_remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p = xasprintf("%s/%s", path, e->d_name);
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				leap_remove_tree(p);
			else
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

char *leap_find_program(const char *name)
{
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? realpath(name, NULL) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *e = strchr(path, ':');
		size_t n = e ? (size_t)(e - path) : strlen(path);
		char *p = xasprintf("%.*s/%s", (int)n, n ? path : ".", name);
		if (access(p, X_OK) == 0) {
			char *real = realpath(p, NULL);
			free(p);
			return real;
		}
		free(p);
		path += n + (e ? 1 : 0);
	}
	return NULL;
}
