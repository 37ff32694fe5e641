/* lines.c - a file that records are appended to as whole lines (O_APPEND). */
/*
 * leap-prune's done file may be shared by several writers and read while it grows, so a
 * reader must never see half a record: lines are queued and written only whole, with
 * O_APPEND, and the queue is flushed at 64 KiB and whenever the program asks (after each
 * group).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/fdio.h"
#include "lines.h"
#include "core/banned.h"

void leap_lines_open(struct leap_lines *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (f->fd < 0)
		leap_die_errno("%s", path);
}

void leap_lines_flush(struct leap_lines *f)
{
	if (f->buf.len && leap_write_full(f->fd, f->buf.s, f->buf.len))
		leap_die_errno("%s: write error", f->path);
	leap_buf_reset(&f->buf);
}

void leap_lines_add(struct leap_lines *f, const char *line, size_t len)
{
	if (f->buf.len && f->buf.len + len > 65536)
		leap_lines_flush(f);
	leap_buf_add(&f->buf, line, len);
	f->written++;
	if (f->buf.len >= 65536)
		leap_lines_flush(f);
}

int leap_lines_close(struct leap_lines *f)
{
	leap_lines_flush(f);
	leap_buf_free(&f->buf);
	if (f->fd >= 0 && close(f->fd) < 0) {
		leap_warn_errno("%s: close", f->path);
		f->fd = -1;
		return LEAP_EXIT_FATAL;
	}
	f->fd = -1;
	return LEAP_EXIT_OK;
}
