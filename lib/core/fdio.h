/* fdio.h - reading and writing exactly n bytes on a descriptor, through EINTR and short counts. */
#ifndef LEAP_FDIO_H
#define LEAP_FDIO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Waits before each read or write of leap_fd_move until fd is ready for `events` (POLLIN or
 * POLLOUT). Returns 0 to go on, or a non-zero value that leap_fd_move returns at once (a
 * deadline passed, a signal to stop on). */
typedef int leap_fd_wait_fn(void *arg, int fd, short events);

/* Moves exactly n bytes through fd: reads them into buf, or with `writing` writes them from
 * buf, again after EINTR and after short counts. With `wait` (NULL: none), calls it before
 * each step and goes on after EAGAIN too (fd may be non-blocking). Returns 0; wait's non-zero
 * value; or -1 on an error (errno set) or the end of the data before n bytes. */
int leap_fd_move(int fd, int writing, void *buf, size_t n, leap_fd_wait_fn *wait, void *arg);

/* Reads/writes exactly n bytes, retrying on EINTR. Returns 0, or -1 (error or EOF). */
int leap_read_full(int fd, void *buf, size_t n);
int leap_write_full(int fd, const void *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
