/* lines.h - a file that records are appended to as whole lines. */
#ifndef LEAP_LINES_H
#define LEAP_LINES_H

#include "core/util.h"

/* A file that records are appended to as whole lines: each write(2) holds whole lines only
 * (the file is opened with O_APPEND), so several writers can share it. */
struct leap_lines {
	int fd;
	const char *path;
	struct leap_buf buf;
	long written;
};

/* Opens `path` for appending (created 0644 when missing). Dies with a message on failure. */
void leap_lines_open(struct leap_lines *f, const char *path);
/* Queues line[0..len) (which must end in '\n'); writes out when 64 KiB are queued. Dies with
 * a message on a write error. */
void leap_lines_add(struct leap_lines *f, const char *line, size_t len);
/* Writes out what is queued. Dies with a message on a write error. */
void leap_lines_flush(struct leap_lines *f);
/* Writes out and closes. Returns LEAP_EXIT_OK, or LEAP_EXIT_FATAL after a message. */
int leap_lines_close(struct leap_lines *f);

#endif
