/* twopass.h - read regular-file inputs twice: summarise every record, then write each in input order. */
#ifndef LEAP_TWOPASS_H
#define LEAP_TWOPASS_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "group.h"
#include "gstream.h"
#include "core/jsonl.h"

/* The tag of a record that takes no part (or whose first-pass summary does not hold). */
#define LEAP_TWOPASS_NONE UINT32_MAX

/* What a program does in each pass. `arg` is passed back to every callback. The driver
 * itself applies the duplicate rule (lib/group/group.h) to the records that take part, and says
 * why a record of the second pass takes no part when the reason is not the program's: it has
 * no group, the input changed, it is a duplicate. */
struct leap_twopass_ops {
	/* First pass, a valid record with a group: 1 when it takes part (NULL: every one does).
	 * Only records that take part count for the duplicate rule. */
	int (*takes_part)(void *arg, const struct leap_member *m);
	/* First pass, a record that takes part and is no duplicate, with its group key (*key;
	 * m->raw is NULL). Returns the program's tag for the record (below LEAP_TWOPASS_NONE). */
	uint32_t (*summarise)(void *arg, const struct leap_member *m, const struct leap_buf *key);
	/* Between the passes: `records` records were read. */
	void (*between)(void *arg, long records);
	/* Second pass, a record that took part as `tag`: raw[0..len) is its text, has_key
	 * whether it holds the member the program appends, file:line its position for messages.
	 * A record the first pass took as read and whose length is the same is not scanned
	 * again. */
	void (*put)(void *arg, long seq, uint32_t tag, const char *raw, size_t len, int has_key, const char *file,
		    long line);
	/* Second pass, a record scanned again (*m, has_group as leap_member_next): the program's
	 * reason it takes no part, or NULL (NULL: none of the program's own; no group, a change of
	 * the input and the duplicate rule are the driver's). */
	const char *(*refuse)(void *arg, struct leap_member *m, int has_group);
	/* Second pass, writes record *m, which takes no part, for reason `why` (counted as an
	 * error by the program; the driver clears m afterwards). A line that is not a JSON object
	 * does not come here: the driver writes its error record. */
	void (*put_refused)(void *arg, struct leap_member *m, const char *why);
	/* The reason for a record that took no part in the first pass but would now, its line's
	 * length the same (the input changed between the passes). */
	const char *lost;
};

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
 * 8 bytes per record, its length and the program's tag, and for the duplicate rule which
 * record each (group, sample, turn) that takes part was first read in (about 24 to 48 bytes). The second pass re-reads each line
 * and hands a record that is unchanged to ops->put without scanning it again; the other
 * valid records are scanned again and go to ops->put or, with the reason, ops->put_refused,
 * and a line that is not a JSON object becomes an error record on io->out (counted in
 * io->errors). Each record of the second pass is counted in
 * io->records and the progress line updated after it. `own` is the member the program
 * appends. Returns the number of inputs that could not be opened (reported). Dies with a
 * message when standard input cannot be rewound. */
int leap_twopass(int nfiles, char *const *files, off_t off, const char *own, const struct leap_twopass_ops *ops,
		 void *arg, const struct leap_gstream_io *io);

#endif
