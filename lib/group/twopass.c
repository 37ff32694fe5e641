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

/* The duplicate rule's state. The first pass keeps, for each (group, sample, turn) that takes
 * part, the record that was read first: the group interned once (a string per group), and a
 * 24-byte entry of an open-addressed table keyed by (group number, sample, turn). A duplicate
 * is noted as a pair of record numbers; where its first was read (file:line, for the message)
 * is taken in the second pass, which meets the first before the duplicate. So the rule adds
 * about 24 to 48 bytes to the 8 a record otherwise costs (a string key and a position per
 * record had made leap-rank's two passes take 70% more memory and 5% more time than when each
 * program kept the rule in its own tables). */
struct firsts {
	struct leap_hmap groups; /* group key -> its number + 1 */
	uint32_t ngroups;
	struct first {
		long sample, turn;
		uint32_t group;
		uint32_t seq; /* the first record's number + 1; 0: an empty entry */
	} *tab;
	size_t cap, n; /* cap: 0 or a power of two, kept at least twice n */
	struct dup {
		long seq, first; /* a duplicate and the record it repeats */
	} *dups;
	size_t ndups, capdups, next;
	struct at {
		long seq; /* a record some duplicate repeats, in increasing order */
		const char *file;
		long line;
	} *at;
	size_t nat, atnext;
};

static size_t first_hash(uint32_t group, long sample, long turn)
{
	uint64_t h = (uint64_t)group * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)sample + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= ((uint64_t)turn + 0x85ebca77c2b2ae63ull) * 0x94d049bb133111ebull;
	return (size_t)(h ^ (h >> 31));
}

/* The entry of (group, sample, turn): its own, or the empty one where it would go. */
static struct first *first_slot(struct first *tab, size_t cap, uint32_t group, long sample, long turn)
{
	size_t i = first_hash(group, sample, turn) & (cap - 1);
	while (tab[i].seq && (tab[i].group != group || tab[i].sample != sample || tab[i].turn != turn))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static void firsts_grow(struct firsts *f)
{
	size_t cap = f->cap ? f->cap * 2 : 1024;
	struct first *tab = xcalloc(cap, sizeof(*tab));
	for (size_t i = 0; i < f->cap; i++)
		if (f->tab[i].seq)
			*first_slot(tab, cap, f->tab[i].group, f->tab[i].sample, f->tab[i].turn) = f->tab[i];
	free(f->tab);
	f->tab = tab;
	f->cap = cap;
}

/* 1 (noted in f->dups) when m, of group `group`, is a second record of its (group, sample,
 * turn); else notes it as the first and returns 0. */
static int first_pass_dup(struct firsts *f, const struct leap_buf *group, const struct leap_member *m)
{
	if (m->sample < 0) /* never a duplicate (leap_is_dup) */
		return 0;
	int added;
	void **g = leap_hmap_put(&f->groups, group->s, group->len, &added);
	if (added) {
		if (f->ngroups >= UINT32_MAX - 1)
			leap_die("more than %u groups", (unsigned)(UINT32_MAX - 1));
		*g = (void *)(uintptr_t)++f->ngroups;
	}
	uint32_t gn = (uint32_t)((uintptr_t)*g - 1);
	if (2 * (f->n + 1) > f->cap)
		firsts_grow(f);
	struct first *e = first_slot(f->tab, f->cap, gn, m->sample, m->turn);
	if (e->seq) {
		xgrow((void **)&f->dups, &f->capdups, f->ndups + 1, sizeof(*f->dups));
		f->dups[f->ndups++] = (struct dup){m->seq, (long)e->seq - 1};
		return 1;
	}
	if (m->seq >= (long)UINT32_MAX - 1)
		leap_die("more than %u records", (unsigned)(UINT32_MAX - 1));
	*e = (struct first){m->sample, m->turn, gn, (uint32_t)m->seq + 1};
	f->n++;
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	long x = ((const struct at *)a)->seq, y = ((const struct at *)b)->seq;
	return (x > y) - (x < y);
}

/* Between the passes: the table goes; the records that duplicates repeat, once each, in order. */
static void firsts_between(struct firsts *f)
{
	leap_hmap_free(&f->groups);
	free(f->tab);
	f->tab = NULL;
	f->at = xcalloc(f->ndups ? f->ndups : 1, sizeof(*f->at));
	for (size_t i = 0; i < f->ndups; i++)
		f->at[i].seq = f->dups[i].first;
	qsort(f->at, f->ndups, sizeof(*f->at), by_seq);
	for (size_t i = 0; i < f->ndups; i++)
		if (!f->nat || f->at[f->nat - 1].seq != f->at[i].seq)
			f->at[f->nat++] = f->at[i];
}

/* Second pass, record `seq` read at file:line: kept when a duplicate repeats it. */
static void firsts_note(struct firsts *f, long seq, const char *file, long line)
{
	while (f->atnext < f->nat && f->at[f->atnext].seq < seq)
		f->atnext++;
	if (f->atnext < f->nat && f->at[f->atnext].seq == seq) {
		f->at[f->atnext].file = file;
		f->at[f->atnext].line = line;
	}
}

/* Second pass: the message of record `seq` of group `group` when the first pass found it a
 * duplicate (the caller frees it), else NULL. Records are asked about in increasing order. */
static char *firsts_dup(struct firsts *f, long seq, const char *group, const struct leap_member *m)
{
	while (f->next < f->ndups && f->dups[f->next].seq < seq)
		f->next++;
	if (f->next >= f->ndups || f->dups[f->next].seq != seq)
		return NULL;
	struct at key = {.seq = f->dups[f->next].first};
	const struct at *a = bsearch(&key, f->at, f->nat, sizeof(*f->at), by_seq);
	return leap_dup_message(group, m->sample, m->turn, a && a->file ? a->file : "?", a ? a->line : 0);
}

static void firsts_free(struct firsts *f)
{
	leap_hmap_free(&f->groups);
	free(f->tab);
	free(f->dups);
	free(f->at);
	memset(f, 0, sizeof(*f));
}

/* The first pass's tag of valid record m (LEAP_TWOPASS_NONE when it takes no part). */
static uint32_t first_pass_tag(const struct leap_twopass_ops *ops, void *arg, struct firsts *f,
			       const struct leap_member *m, const struct leap_buf *key, int has_group)
{
	if (!has_group || (ops->takes_part && !ops->takes_part(arg, m)) || first_pass_dup(f, key, m))
		return LEAP_TWOPASS_NONE;
	return ops->summarise(arg, m, key);
}

/* Second pass, a record scanned again (tag: the first pass's, NONE when it changed): written
 * with what it took part as, or with the reason it takes none. */
static void second_pass_other(const struct leap_twopass_ops *ops, void *arg, struct firsts *f, long seq,
			      uint32_t tag, int changed, struct leap_member *m, const struct leap_buf *key,
			      int has_group)
{
	const char *why = ops->refuse ? ops->refuse(arg, m, has_group) : NULL;
	char *dup = NULL;
	if (!why && !has_group)
		why = LEAP_NO_GROUP;
	if (!why && changed)
		why = "the input changed between the two passes";
	if (!why)
		why = dup = firsts_dup(f, seq, key->s, m);
	if (!why && tag == LEAP_TWOPASS_NONE)
		why = ops->lost;
	if (why)
		ops->put_refused(arg, m, why);
	else
		ops->put(arg, seq, tag, m->raw, m->len, m->has_key, m->file, m->line);
	free(dup);
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
	firsts_between(&f);
	ops->between(arg, n);

	leap_inputs_rewind(nfiles, files, off);
	leap_in_init(&in, nfiles, files, stdout);
	long seq = 0;
	while (leap_in_next_line(&in) != LEAP_READ_EOF) {
		const struct seen *s = seq < n ? &seen[seq] : NULL;
		(*io->records)++;
		firsts_note(&f, seq, in.name, in.line);
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
				second_pass_other(ops, arg, &f, seq, s && !changed ? s->tag : LEAP_TWOPASS_NONE,
						  changed, &m, &key, has_group);
				leap_member_clear(&m);
			}
		}
		leap_progress_update(io->progress, *io->records, *io->errors);
		seq++;
	}
	int open_failed = in.open_failed;
	leap_in_close(&in);
	leap_buf_free(&key);
	firsts_free(&f);
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
