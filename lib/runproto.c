/* runproto.c - arena layout and exact reads/writes of the runner protocol (runproto.h). */
#include <errno.h>
#include <unistd.h>

#include "runproto.h"
#include "banned.h"

/* Adds n to *off with 64-byte alignment; returns -1 on overflow. */
static int take(uint64_t *off, uint64_t n, uint64_t *at)
{
	uint64_t a = (*off + 63) & ~(uint64_t)63;
	if (a < *off || a + n < a)
		return -1;
	*at = a;
	*off = a + n;
	return 0;
}

uint64_t leap_run_layout(const struct leap_run_param *p, uint32_t nparams, uint32_t nsets, uint64_t *in,
			 uint64_t *out, uint64_t *after)
{
	uint64_t off = 0, at;
	for (uint32_t s = 0; s < nsets; s++)
		for (uint32_t i = 0; i < nparams; i++) {
			size_t k = (size_t)s * nparams + i;
			uint64_t b = p[i].kind == LEAP_RUN_K_SCALAR ? 0 : p[i].bytes;
			if (take(&off, b, &at))
				return 0;
			if (in)
				in[k] = at;
			if (take(&off, p[i].kind == LEAP_RUN_K_IN ? 0 : b, &at))
				return 0;
			if (out)
				out[k] = at;
			if (take(&off, p[i].kind == LEAP_RUN_K_IN ? b : 0, &at))
				return 0;
			if (after)
				after[k] = at;
		}
	return off ? off : 64;
}

int leap_read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int leap_write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}
