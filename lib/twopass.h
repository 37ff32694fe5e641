/* twopass.h - read regular-file inputs twice: summarise every record, then write each in input order. */
#ifndef LEAP_TWOPASS_H
#define LEAP_TWOPASS_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "group.h"
#include "gstream.h"
#include "jsonl.h"

/* The tag of a record that takes no part (or whose first-pass summary does not hold). */
#define LEAP_TWOPASS_NONE UINT32_MAX

/* What a program does in each pass. `arg` is passed back to every callback. */
struct leap_twopass_ops {
	/* First pass, a valid record with a group key (*key; m->raw is NULL). Returns the
	 * program's tag for the record (below LEAP_TWOPASS_NONE), or LEAP_TWOPASS_NONE when the
	 * record takes no part. */
	uint32_t (*summarise)(void *arg, const struct leap_member *m, const struct leap_buf *key);
	/* Between the passes: `records` records were read. */
	void (*between)(void *arg, long records);
	/* Second pass, the fast path: record `seq` has the same length as in the first pass,
	 * where it scanned as read and got `tag` (not NONE); it is not scanned again. raw[0..len)
	 * is its text, has_key whether it holds the member the program appends, file:line its
	 * position for messages. */
	void (*put)(void *arg, long seq, uint32_t tag, const char *raw, size_t len, int has_key, const char *file,
		    long line);
	/* Second pass, every other valid record, scanned again by leap_member_line (*m; *key and
	 * has_group as leap_member_next; the driver clears m afterwards). tag is the first pass's
	 * tag, LEAP_TWOPASS_NONE when the record took no part; `changed` is 1 when the record is
	 * not the one the first pass read (the input grew, or the line's length changed). A line
	 * that is not a JSON object does not come here: the driver writes its error record. */
	void (*other)(void *arg, long seq, uint32_t tag, int changed, struct leap_member *m, const struct leap_buf *key,
		      int has_group);
};

/* Duplicates met by a program's first pass (lib/group.h): the record numbers and their error
 * messages, handed back in the second pass, which asks in increasing record order. */
struct leap_twopass_dups {
	struct leap_twopass_dup {
		long seq;
		char *msg;
	} *v;
	size_t n, cap, next;
};

/* Notes that record `seq` is a duplicate; takes over msg (from leap_dup_message). */
void leap_twopass_dup_add(struct leap_twopass_dups *d, long seq, char *msg);

/* Orders the notes by record number (needed only when they were not added in order). */
void leap_twopass_dup_sort(struct leap_twopass_dups *d);

/* The message of record `seq` when it is a duplicate, else NULL. Records are asked about in
 * increasing order. */
const char *leap_twopass_dup_get(struct leap_twopass_dups *d, long seq);

void leap_twopass_dup_free(struct leap_twopass_dups *d);

/* 1 when every input (files, or standard input when nfiles is 0 or a file is "-") can be
 * read twice: regular files, standard input named at most once. *off receives standard
 * input's current offset. */
int leap_inputs_seekable(int nfiles, char *const *files, off_t *off);

/* Before a second leap_in pass over inputs leap_inputs_seekable accepted: puts standard
 * input back at `off` when it is one of them. Dies with a message when it cannot. */
void leap_inputs_rewind(int nfiles, char *const *files, off_t off);

/* Reads the inputs (files[0..nfiles), standard input when nfiles is 0; inputs that
 * leap_inputs_seekable accepted, `off` its offset) twice, with leap_in (output flushed to
 * stdout before blocking reads). The first pass scans every record (validating it) and keeps
 * 8 bytes per record: its length and the program's tag. The second pass re-reads each line
 * and hands a record that is unchanged to ops->put without scanning it again; the other
 * valid records go through ops->other, and a line that is not a JSON object becomes an error
 * record on io->out (counted in io->errors). Each record of the second pass is counted in
 * io->records and the progress line updated after it. `own` is the member the program
 * appends. Returns the number of inputs that could not be opened (reported). Dies with a
 * message when standard input cannot be rewound. */
int leap_twopass(int nfiles, char *const *files, off_t off, const char *own, const struct leap_twopass_ops *ops,
		 void *arg, const struct leap_gstream_io *io);

#endif
