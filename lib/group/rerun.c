/* rerun.c - leap-prune's done file as it was at start: which (group, sample, turn) it decided. */
/*
 * Why leap-prune looks records up in its done file: rerun.h. The file may be large and is only
 * read for a turn that needs it: its size at start bounds what is read (what this run appends
 * is never mistaken for an earlier run's), each turn's keys are indexed on first use, and an
 * entry holds the record's offset and length rather than its text, read back only when an
 * earlier decision is reused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "group.h"
#include "rerun.h"
#include "core/util.h"
#include "core/banned.h"

void leap_rerun_init(struct leap_rerun *r, const char *path, int fd)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	struct stat st;
	if (fstat(fd, &st))
		leap_die_errno("%s", path);
	r->usable = S_ISREG(st.st_mode);
	r->limit = st.st_size;
}

/* The key of (group, sample, turn) into b. */
static void make_key(struct leap_buf *b, const char *group, long sample, long turn)
{
	leap_buf_reset(b);
	leap_buf_addf(b, "%s\x1f%ld\x1f%ld", group, sample, turn);
}

/* Adds the done file's records of `turn` (those before r->limit) to the index. */
static void index_turn(struct leap_rerun *r, long turn)
{
	FILE *fp = fopen(r->path, "r");
	if (!fp)
		leap_die_errno("%s: cannot read the done file to find records of an earlier run", r->path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	off_t off = 0;
	long lineno = 0;
	struct leap_buf group = {0}, key = {0};
	while (off < r->limit && (got = getline(&line, &cap, fp)) > 0) {
		off_t here = off;
		off += got;
		lineno++;
		size_t len = (size_t)got;
		if (line[len - 1] == '\n')
			len--;
		struct leap_member m;
		int has_group;
		if (leap_member_scan_text(&m, line, len, r->path, lineno, 0, NULL, &group, &has_group))
			continue;
		if (has_group && !m.has_error && m.sample >= 0 && m.turn == turn) {
			make_key(&key, group.s, m.sample, turn);
			int added;
			void **slot = leap_hmap_put(&r->keys, key.s, key.len, &added);
			if (added) {
				struct leap_rerun_entry *e = xcalloc(1, sizeof(*e));
				*e = (struct leap_rerun_entry){here, len, 0, r->path, lineno};
				*slot = e;
			}
		}
		leap_member_clear(&m);
	}
	if (ferror(fp))
		leap_die_errno("%s: read error", r->path);
	fclose(fp);
	free(line);
	leap_buf_free(&group);
	leap_buf_free(&key);
	xgrow((void **)&r->turns, &r->capturns, r->nturns + 1, sizeof(*r->turns));
	r->turns[r->nturns++] = turn;
}

const struct leap_rerun_entry *leap_rerun_find(struct leap_rerun *r, const char *group, long sample, long turn)
{
	if (!r->usable || sample < 0)
		return NULL;
	size_t i = 0;
	while (i < r->nturns && r->turns[i] != turn)
		i++;
	if (i == r->nturns)
		index_turn(r, turn);
	struct leap_buf key = {0};
	make_key(&key, group, sample, turn);
	const struct leap_rerun_entry *e = leap_hmap_get(&r->keys, key.s, key.len);
	leap_buf_free(&key);
	return e;
}

void leap_rerun_note(struct leap_rerun *r, const char *group, long sample, long turn, const char *file, long line)
{
	if (!r->usable || sample < 0)
		return;
	struct leap_buf key = {0};
	make_key(&key, group, sample, turn);
	int added;
	void **slot = leap_hmap_put(&r->keys, key.s, key.len, &added);
	if (added) {
		struct leap_rerun_entry *e = xcalloc(1, sizeof(*e));
		*e = (struct leap_rerun_entry){0, 0, 1, file, line};
		*slot = e;
	}
	leap_buf_free(&key);
}

char *leap_rerun_line(const struct leap_rerun *r, const struct leap_rerun_entry *e)
{
	FILE *fp = fopen(r->path, "r");
	if (!fp)
		leap_die_errno("%s", r->path);
	char *s = xmalloc(e->len + 1);
	if (fseeko(fp, e->off, SEEK_SET) || fread(s, 1, e->len, fp) != e->len)
		leap_die("%s: cannot read line %ld again (was the done file changed?)", r->path, e->line);
	s[e->len] = '\0';
	fclose(fp);
	return s;
}

void leap_rerun_free(struct leap_rerun *r)
{
	leap_hmap_free_with(&r->keys, free);
	free(r->turns);
	memset(r, 0, sizeof(*r));
}
