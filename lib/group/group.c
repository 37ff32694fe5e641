/* group.c - streaming GRPO groups: collect records by group key, hand a group over once complete. */
/*
 * A rollout's records arrive interleaved from many groups, and a group can be decided only when
 * it is complete; holding the whole stream would make memory grow with the run. So only open
 * groups are held (keyed in hmap.c, and listed in order of first arrival so that the groups
 * left open at the end of input come out in a stable order), and a group is handed over and
 * forgotten the moment its count is reached. The duplicate rule (a second record of one
 * (group, sample, turn)) is here, where the members of a group are known.
 */
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "core/banned.h"

void leap_grouper_init(struct leap_grouper *g)
{
	memset(g, 0, sizeof(*g));
}

/* Unlinks `grp` from the table and the arrival list. */
static void unlink_group(struct leap_grouper *g, struct leap_group *grp)
{
	leap_hmap_del(&g->map, grp->key, strlen(grp->key));
	if (grp->prev)
		grp->prev->next = grp->next;
	else
		g->head = grp->next;
	if (grp->next)
		grp->next->prev = grp->prev;
	else
		g->tail = grp->prev;
	grp->prev = grp->next = NULL;
}

struct leap_group *leap_grouper_add(struct leap_grouper *g, const char *key, struct leap_member *m, int unit,
				    long want)
{
	int added;
	void **slot = leap_hmap_put(&g->map, key, strlen(key), &added);
	struct leap_group *grp = *slot;
	if (added) {
		grp = xcalloc(1, sizeof(*grp));
		grp->key = xstrdup(key);
		*slot = grp;
		grp->prev = g->tail;
		if (g->tail)
			g->tail->next = grp;
		else
			g->head = grp;
		g->tail = grp;
	}
	xgrow((void **)&grp->m, &grp->cap, grp->n + 1, sizeof(*grp->m));
	grp->m[grp->n++] = *m;
	memset(m, 0, sizeof(*m));
	grp->units += unit ? 1 : 0;
	if (want > grp->want)
		grp->want = want;
	if (grp->want > 0 && grp->units >= grp->want) {
		unlink_group(g, grp);
		return grp;
	}
	return NULL;
}

struct leap_group *leap_grouper_get(const struct leap_grouper *g, const char *key)
{
	return leap_hmap_get(&g->map, key, strlen(key));
}

int leap_is_dup(long sample, long turn, long first_sample, long first_turn)
{
	return sample >= 0 && sample == first_sample && turn == first_turn;
}

long leap_group_find_dup(const struct leap_group *grp, const struct leap_member *m)
{
	if (m->sample < 0) /* never a duplicate: no need to look */
		return -1;
	for (size_t i = 0; i < grp->n; i++)
		if (leap_is_dup(m->sample, m->turn, grp->m[i].sample, grp->m[i].turn))
			return (long)i;
	return -1;
}

char *leap_dup_message(const char *group, long sample, long turn, const char *file, long line)
{
	return xasprintf("a second record of group '%s', sample %ld, turn %ld (the first is %s:%ld); it takes no "
			 "part", group, sample, turn, file, line);
}

int leap_group_mark_dup(const struct leap_group *open, const char *group, struct leap_member *m)
{
	long i = open ? leap_group_find_dup(open, m) : -1;
	if (i < 0)
		return 0;
	m->note = leap_dup_message(group, m->sample, m->turn, open->m[i].file, open->m[i].line);
	m->skip = m->note;
	leap_warn("%s:%ld: %s", m->file, m->line, m->skip);
	return 1;
}

struct leap_group *leap_grouper_pop(struct leap_grouper *g)
{
	struct leap_group *grp = g->head;
	if (grp)
		unlink_group(g, grp);
	return grp;
}

struct tkey {
	long sample;
	size_t i;
};

/* qsort order of trajectory keys: by sample, then by arrival. */
static int cmp_tkey(const void *a, const void *b)
{
	const struct tkey *x = a, *y = b;
	if (x->sample != y->sample)
		return x->sample < y->sample ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

size_t leap_group_trajectories(const struct leap_group *grp, size_t *traj)
{
	size_t n = grp->n;
	struct tkey *k = xcalloc(n ? n : 1, sizeof(*k));
	for (size_t i = 0; i < n; i++) {
		/* a member without a sample gets a key of its own, below every real sample */
		k[i].sample = grp->m[i].sample >= 0 ? grp->m[i].sample : -1 - (long)i;
		k[i].i = i;
	}
	qsort(k, n, sizeof(*k), cmp_tkey);
	/* first[i]: the first-arrived member of i's trajectory */
	size_t *first = xcalloc(n ? n : 1, sizeof(*first));
	for (size_t j = 0; j < n; j++)
		first[k[j].i] = (j > 0 && k[j - 1].sample == k[j].sample) ? first[k[j - 1].i] : k[j].i;
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		traj[i] = first[i] == i ? count++ : traj[first[i]];
	free(first);
	free(k);
	return count;
}

void leap_group_free(struct leap_group *grp)
{
	if (!grp)
		return;
	for (size_t i = 0; i < grp->n; i++)
		leap_member_clear(&grp->m[i]);
	free(grp->m);
	free(grp->key);
	free(grp);
}

void leap_grouper_free(struct leap_grouper *g)
{
	struct leap_group *grp;
	while ((grp = leap_grouper_pop(g)))
		leap_group_free(grp);
	leap_hmap_free(&g->map);
	memset(g, 0, sizeof(*g));
}
