/* fdio.c - reading and writing exactly n bytes on a descriptor (fdio.h). */
/*
 * A read or a write may move fewer bytes than asked (a pipe, a socket, a signal in between)
 * or fail with EINTR, and each caller that loops over that by hand is a place to get it
 * wrong once. This is the one loop: the runner protocol's messages, the files leap writes,
 * the done file's lines and the sandbox's transfers under a deadline all go through it. It
 * depends on nothing else of leap, so the runners (which link no libleap) build it too; a
 * caller that must wait under a deadline passes its own wait function rather than this file
 * knowing about deadlines or signals.
 */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "fdio.h"
#include "banned.h"

int leap_fd_move(int fd, int writing, void *buf, size_t n, leap_fd_wait_fn *wait, void *arg)
{
	char *p = buf;
	while (n) {
		if (wait) {
			int w = wait(arg, fd, writing ? POLLOUT : POLLIN);
			if (w)
				return w;
		}
		ssize_t r = writing ? write(fd, p, n) : read(fd, p, n);
		if (r < 0 && (errno == EINTR || (wait && errno == EAGAIN)))
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int leap_read_full(int fd, void *buf, size_t n)
{
	return leap_fd_move(fd, 0, buf, n, NULL, NULL);
}

int leap_write_full(int fd, const void *buf, size_t n)
{
	return leap_fd_move(fd, 1, (void *)buf, n, NULL, NULL);
}
