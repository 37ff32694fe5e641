/* files.h - whole files: read one, write one, copy one, make a directory's parents, remove a
 * tree leap made. */
#ifndef LEAP_FILES_H
#define LEAP_FILES_H

#include <stddef.h>
#include <sys/types.h>

struct leap_buf; /* util.h */

/* Reads a whole file into a new NUL-terminated string (*len set). NULL with *err on error. */
char *leap_read_file(const char *path, size_t *len, char **err);

/* Appends everything left to read on fd (until its end) to b, again after EINTR. Returns 0, or
 * -1 with errno set (what was read stays in b). */
int leap_read_fd(int fd, struct leap_buf *b);

/* Writes n bytes of data to `path` (created or truncated, mode 0644). Returns 0, or -1 with
 * errno set and, when err is not NULL, a new message in *err. */
int leap_write_file(const char *path, const char *data, size_t n, char **err);

/* Copies file `from` to `to`. Returns 0, or -1 with a new message in *err. */
int leap_copy_file(const char *from, const char *to, char **err);

/* Creates a directory and its parents with `mode` (less the umask); returns 0 or -1 with errno
 * set. */
int leap_mkdirs_mode(const char *path, mode_t mode);

/* leap_mkdirs_mode with 0755. */
int leap_mkdirs(const char *path);

/* rm -r of a directory this process made; links are removed, never followed. Best effort. */
void leap_remove_tree(const char *path);

/* Searches PATH for `name` (or checks it when it holds a '/'). Newly allocated absolute
 * path, or NULL. (Here, below every module that runs programs, so that the backends' rows can
 * name their compilers without calling up into the compiler.) */
char *leap_find_program(const char *name);

#endif
