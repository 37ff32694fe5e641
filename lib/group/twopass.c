/* twopass.c - read regular-file inputs twice: summarise every record, then write each in input order. */
/*
 * leap-rank and leap-advantage need a whole group before they can write any of its records,
 * and the output must keep input order. Holding the records would make memory grow with the
 * input; when the input is regular files, reading them twice costs only time. The first pass
 * keeps a tag and a length per record (the program's summary lives in its own tables); the
 * second writes each record as it comes, scanning again only a line the first pass could not
 * take as read, or whose length changed, so that memory grows with the count of records, not
 * their size. The duplicate rule is applied here, once for both programs, as the first pass
 * reads: a record of a (group, sample, turn) already read takes no part, and the second pass
 * writes it as an error record naming the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "twopass.h"
#include "core/banned.h"

/* What the first pass keeps of a record: 8 bytes. */
struct seen {
	uint32_t len; /* the line's length, bit 31 set when it holds `own`; 0: no fast path */
	uint32_t tag;
};

#define HAS_KEY 0x80000000u
#define LEN_MASK 0x7fffffffu

void leap_twopass_dup_add(struct leap_twopass_dups *d, long seq, char *msg)
{
	xgrow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v));
	d->v[d->n].seq = seq;
	d->v[d->n].msg = msg;
	d->n++;
}

const char *leap_twopass_dup_get(struct leap_twopass_dups *d, long seq)
{
	while (d->next < d->n && d->v[d->next].seq < seq)
		d->next++;
	return d->next < d->n && d->v[d->next].seq == seq ? d->v[d->next].msg : NULL;
}

void leap_twopass_dup_free(struct leap_twopass_dups *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].msg);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* The first pass's record of where each (group, sample, turn) taking part was first read. */
struct firsts {
	struct leap_hmap keys; /* "group\x1fsample\x1fturn" -> index + 1 in `at` */
	struct first_at {
		const char *file;
		long line;
	} *at;
	size_t n, cap;
	struct leap_buf key;
	struct leap_twopass_dups dups;
};

/* 1 (noted in f->dups) when m, of group `group`, is a second record of its (group, sample,
 * turn); else notes where it was read and returns 0. */
static int first_pass_dup(struct firsts *f, const char *group, const struct leap_member *m)
{
	if (m->sample < 0) /* never a duplicate (leap_is_dup) */
		return 0;
	char num[48];
	int k = snprintf(num, sizeof num, "\x1f%ld\x1f%ld", m->sample, m->turn);
	leap_buf_reset(&f->key);
	leap_buf_add(&f->key, group, strlen(group));
	leap_buf_add(&f->key, num, (size_t)k);
	int added;
	void **slot = leap_hmap_put(&f->keys, f->key.s, f->key.len, &added);
	if (!added) {
		const struct first_at *a = &f->at[(uintptr_t)*slot - 1];
		leap_twopass_dup_add(&f->dups, m->seq, leap_dup_message(group, m->sample, m->turn, a->file, a->line));
		return 1;
	}
	xgrow((void **)&f->at, &f->cap, f->n + 1, sizeof(*f->at));
	f->at[f->n] = (struct first_at){m->file, m->line};
	*slot = (void *)(uintptr_t)++f->n;
	return 0;
}

/* The first pass's tag of valid record m (LEAP_TWOPASS_NONE when it takes no part). */
static uint32_t first_pass_tag(const struct leap_twopass_ops *ops, void *arg, struct firsts *f,
			       const struct leap_member *m, const struct leap_buf *key, int has_group)
{
	if (!has_group || (ops->takes_part && !ops->takes_part(arg, m)) || first_pass_dup(f, key->s, m))
		return LEAP_TWOPASS_NONE;
	return ops->summarise(arg, m, key);
}

/* Second pass, a record scanned again (tag: the first pass's, NONE when it changed): written
 * with what it took part as, or with the reason it takes none. */
static void second_pass_other(const struct leap_twopass_ops *ops, void *arg, struct leap_twopass_dups *dups,
			      long seq, uint32_t tag, int changed, struct leap_member *m, int has_group)
{
	const char *why = ops->refuse ? ops->refuse(arg, m, has_group) : NULL;
	if (!why && !has_group)
		why = LEAP_NO_GROUP;
	if (!why && changed)
		why = "the input changed between the two passes";
	if (!why)
		why = leap_twopass_dup_get(dups, seq);
	if (!why && tag == LEAP_TWOPASS_NONE)
		why = ops->lost;
	if (why)
		ops->put_refused(arg, m, why);
	else
		ops->put(arg, seq, tag, m->raw, m->len, m->has_key, m->file, m->line);
}

int leap_twopass(int nfiles, char *const *files, off_t off, const char *own, const struct leap_twopass_ops *ops,
		 void *arg, const struct leap_gstream_io *io)
{
	struct firsts f = {0};
	struct seen *seen = NULL;
	size_t cap = 0;
	long n = 0;
	struct leap_buf key = {0};
	struct leap_member m;
	json_t *bad;
	int has_group, as_read;
	struct leap_in in;
	leap_in_init(&in, nfiles, files, stdout);
	in.quiet = 1; /* the second pass reports what is wrong with the input */
	while (leap_in_next_line(&in) != LEAP_READ_EOF) {
		struct seen s = {0, LEAP_TWOPASS_NONE};
		enum leap_read r = leap_member_line(&in, n, own, &m, &key, &has_group, &bad, 0, &as_read);
		if (r == LEAP_READ_BAD) {
			json_decref(bad);
		} else {
			s.tag = first_pass_tag(ops, arg, &f, &m, &key, has_group);
			if (as_read && s.tag != LEAP_TWOPASS_NONE && in.len > 0 && in.len <= LEN_MASK)
				s.len = (uint32_t)in.len | (m.has_key ? HAS_KEY : 0);
			leap_member_clear(&m);
		}
		xgrow((void **)&seen, &cap, (size_t)n + 1, sizeof(*seen));
		seen[n++] = s;
	}
	leap_in_close(&in);
	leap_hmap_free(&f.keys);
	free(f.at);
	leap_buf_free(&f.key);
	ops->between(arg, n);

	leap_inputs_rewind(nfiles, files, off);
	leap_in_init(&in, nfiles, files, stdout);
	long seq = 0;
	while (leap_in_next_line(&in) != LEAP_READ_EOF) {
		const struct seen *s = seq < n ? &seen[seq] : NULL;
		(*io->records)++;
		if (s && s->len && (s->len & LEN_MASK) == in.len) {
			ops->put(arg, seq, s->tag, in.buf, in.len, !!(s->len & HAS_KEY), in.name, in.line);
		} else {
			/* scanned again: a record the first pass could not take as read, one that takes
			 * no part, or one that changed */
			int changed = !s || (s->len && (s->len & LEN_MASK) != in.len);
			enum leap_read r = leap_member_line(&in, seq, own, &m, &key, &has_group, &bad, 1, NULL);
			if (r == LEAP_READ_BAD) {
				leap_out_write(io->out, bad);
				json_decref(bad);
				(*io->errors)++;
			} else {
				second_pass_other(ops, arg, &f.dups, seq, s && !changed ? s->tag : LEAP_TWOPASS_NONE,
						  changed, &m, has_group);
				leap_member_clear(&m);
			}
		}
		leap_progress_update(io->progress, *io->records, *io->errors);
		seq++;
	}
	int open_failed = in.open_failed;
	leap_in_close(&in);
	leap_buf_free(&key);
	leap_twopass_dup_free(&f.dups);
	free(seen);
	return open_failed;
}

int leap_inputs_seekable(int nfiles, char *const *files, off_t *off)
{
	struct stat st;
	int stdin_uses = nfiles == 0;
	for (int i = 0; i < nfiles; i++) {
		if (!strcmp(files[i], "-")) {
			stdin_uses++;
			continue;
		}
		if (stat(files[i], &st) || !S_ISREG(st.st_mode))
			return 0;
	}
	if (stdin_uses > 1)
		return 0;
	if (stdin_uses) {
		if (fstat(STDIN_FILENO, &st) || !S_ISREG(st.st_mode))
			return 0;
		*off = lseek(STDIN_FILENO, 0, SEEK_CUR);
		if (*off < 0)
			return 0;
	}
	return 1;
}

void leap_inputs_rewind(int nfiles, char *const *files, off_t off)
{
	int uses_stdin = nfiles == 0;
	for (int i = 0; i < nfiles; i++)
		uses_stdin |= !strcmp(files[i], "-");
	if (uses_stdin) {
		clearerr(stdin);
		if (fseeko(stdin, off, SEEK_SET))
			leap_die_errno("<stdin>: cannot read it a second time");
	}
}
