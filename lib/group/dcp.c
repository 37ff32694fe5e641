/* dcp.c - leap-prune's decision on one group: the gate, each record's decision, a re-run's records. */
#include <stdlib.h>

#include "dcp.h"
#include "core/record.h"
#include "core/util.h"
#include "core/banned.h"

struct leap_gate leap_dcp_gate(const struct leap_prune_opts *o, const struct leap_group *grp, long *n_fail)
{
	long n = (long)grp->n, n_cat = 0;
	const struct leap_member *carrier = NULL;
	*n_fail = 0;
	for (size_t i = 0; i < grp->n; i++) {
		int st = grp->m[i].status;
		if (st != LEAP_ST_PASS) {
			(*n_fail)++;
			if (o->catastrophic & (1u << st))
				n_cat++;
		}
		if (!carrier && grp->m[i].gate >= 0)
			carrier = &grp->m[i];
	}
	enum leap_verdict v = leap_prune_gate(o, n, *n_fail, n_cat, carrier ? carrier->gate : -1);
	if (carrier && !o->regate)
		return (struct leap_gate){v, carrier->gate_turn, carrier->gate_fail, carrier->gate_n};
	return (struct leap_gate){v, grp->m[0].turn, *n_fail, n};
}

long leap_dcp_decide(const struct leap_prune_opts *o, const struct leap_group *grp, enum leap_verdict v,
		     const char **reason, int *expand)
{
	long n_expand = 0;
	for (size_t i = 0; i < grp->n; i++) {
		const struct leap_member *m = &grp->m[i];
		reason[i] = NULL;
		if (m->in_done)
			expand[i] = !m->final; /* the earlier run's decision */
		else
			reason[i] = leap_prune_reason(o, v, m->status, m->turn, m->speedup, &expand[i]);
		n_expand += expand[i];
	}
	return n_expand;
}

/* Says that `kept` records of grp (the first at first's file:line) stand as an earlier run
 * decided them. */
static void say_kept(const struct leap_group *grp, long kept, const struct leap_rerun_entry *first)
{
	leap_warn("group '%s', turn %ld: %ld record%s decided by an earlier run (%s:%ld%s); %s decision%s "
		  "stand%s and %s not written again", grp->key, grp->m[0].turn, kept, kept == 1 ? " was" : "s were",
		  first->file, first->line, kept == 1 ? "" : " and on", kept == 1 ? "its" : "their", kept == 1 ? "" : "s",
		  kept == 1 ? "s" : "", kept == 1 ? "is" : "are");
}

long leap_dcp_take_rerun(struct leap_rerun *r, struct leap_group *grp, leap_dcp_dup_fn *dup, void *arg)
{
	if (!r || !r->usable)
		return 0;
	struct leap_buf key = {0};
	size_t k = 0;
	long kept = 0;
	const struct leap_rerun_entry *first = NULL;
	for (size_t i = 0; i < grp->n; i++) {
		struct leap_member *m = &grp->m[i];
		const struct leap_rerun_entry *e = leap_rerun_find(r, grp->key, m->sample, m->turn);
		if (e && e->this_run) {
			dup(arg, grp->key, m, e->file, e->line);
			continue;
		}
		if (e) {
			char *text = leap_rerun_line(r, e);
			struct leap_member d;
			int has_group;
			if (!leap_member_scan_text(&d, text, e->len, e->file, e->line, m->seq, "prune", &key, &has_group)) {
				d.in_done = 1;
				leap_member_clear(m);
				*m = d;
				kept++;
				first = first ? first : e;
			}
			free(text);
		}
		grp->m[k++] = *m;
	}
	grp->n = k;
	leap_buf_free(&key);
	if (kept)
		say_kept(grp, kept, first);
	return kept;
}
