/* gstream.c - the group-stream driver: one main loop for the programs that decide by group. */
/*
 * leap-rank, leap-prune and leap-advantage read the same way when the input is a pipe (or
 * --group-size is given): scan a record, write an error record for a bad line, set aside a
 * record with no group, feed the rest to the grouper and hand each group over as soon as it
 * is complete, then the groups left open at the end of input. The programs differ only in
 * what a record takes part with and what they do with a group, so those are callbacks and
 * the loop is written once: a fix to reading, counting or the end-of-input order lands in
 * all three.
 */
#include <stddef.h>

#include "gstream.h"
#include "core/jsonl.h"
#include "core/util.h"
#include "core/banned.h"

int leap_gstream(int nfiles, char *const *files, const char *own, const struct leap_gstream_ops *ops, void *arg,
		 const struct leap_gstream_io *io)
{
	struct leap_in in;
	leap_in_init(&in, nfiles, files, stdout);
	struct leap_grouper groups;
	leap_grouper_init(&groups);
	struct leap_buf key = {0};
	struct leap_member m;
	json_t *bad;
	int has_group;
	enum leap_read r;
	while ((r = leap_member_next(&in, *io->records, own, &m, &key, &has_group, &bad)) != LEAP_READ_EOF) {
		(*io->records)++;
		long want = 0;
		int unit;
		if (r == LEAP_READ_BAD && ops->bad) {
			ops->bad(arg, bad);
		} else if (r == LEAP_READ_BAD) {
			leap_out_write(io->out, bad);
			json_decref(bad);
			(*io->errors)++;
		} else if (!has_group) {
			ops->ungrouped(arg, &m, LEAP_NO_GROUP);
		} else if ((unit = ops->admit(arg, leap_grouper_get(&groups, key.s), key.s, &m, &want)) >= 0) {
			struct leap_group *grp = leap_grouper_add(&groups, key.s, &m, unit, want);
			if (grp)
				ops->group(arg, grp, 0);
		}
		leap_progress_update(io->progress, *io->records, *io->errors);
	}
	leap_buf_free(&key);
	struct leap_group *grp;
	while ((grp = leap_grouper_pop(&groups)))
		ops->group(arg, grp, 1);
	leap_grouper_free(&groups);
	int open_failed = in.open_failed;
	leap_in_close(&in);
	return open_failed;
}
