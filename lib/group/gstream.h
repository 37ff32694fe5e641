/* gstream.h - the group-stream driver of leap-rank, leap-prune and leap-advantage. */
#ifndef LEAP_GSTREAM_H
#define LEAP_GSTREAM_H

#include <jansson.h>

#include "group.h"
#include "core/jsonl.h"
#include "core/progress.h"

/* The reason a record with neither `group` nor `task` takes no part: one message for every
 * program. */
#define LEAP_NO_GROUP "the record has neither 'group' nor 'task'"

/* What a program does with the records of a stream. `arg` is passed back to every callback.
 * Each callback that writes a record as an error counts it in *errors itself. */
struct leap_gstream_ops {
	/* A line that is not a JSON object: `bad` is its error record, which the callback
	 * writes and frees. NULL: the driver writes it to io->out and counts it in io->errors. */
	void (*bad)(void *arg, json_t *bad);
	/* A valid record with no group key (`why` is LEAP_NO_GROUP): the callback writes it and
	 * clears m. */
	void (*ungrouped)(void *arg, struct leap_member *m, const char *why);
	/* A valid record of group `key`, whose open group (NULL when none) is `open`: returns
	 * -1 when the callback has written the record and cleared m (it takes no part, or is
	 * handled one at a time); otherwise the unit (0 or 1) it counts toward its group, with
	 * *want set to the group's target (0 when unknown): the driver then adds it. */
	int (*admit)(void *arg, const struct leap_group *open, const char *key, struct leap_member *m, long *want);
	/* A group taken out of the grouper: complete (at_eof 0), or left open at the end of
	 * input (at_eof 1). The callback owns it and frees it with leap_group_free. */
	void (*group)(void *arg, struct leap_group *grp, int at_eof);
};

/* Where the driver counts and writes: records read (incremented here), errors (by the
 * callbacks, and here for a bad line when ops->bad is NULL), the progress line updated after
 * each record, and the output of bad lines when ops->bad is NULL. */
struct leap_gstream_io {
	long *records;
	long *errors;
	struct leap_progress *progress;
	struct leap_out *out;
};

/* Reads files[0..nfiles) (standard input when nfiles is 0) with leap_in, output flushed to
 * stdout before blocking reads, scanning each record with leap_member_next (`own` is the
 * member the program appends), and hands every record to ops as described above; at the end
 * of input the groups still open go to ops->group in order of first arrival. Returns the
 * number of inputs that could not be opened (reported). */
int leap_gstream(int nfiles, char *const *files, const char *own, const struct leap_gstream_ops *ops, void *arg,
		 const struct leap_gstream_io *io);

#endif
