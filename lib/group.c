/* group.c - streaming GRPO groups: collect records by group key, hand a group over once complete. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "group.h"
#include "jsonl.h"
#include "record.h"
#include "scan.h"
#include "banned.h"

/* FNV-1a over a NUL-terminated string. */
static size_t hash_str(const char *s)
{
	size_t h = (size_t)14695981039346656037ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= (size_t)1099511628211ULL;
	}
	return h;
}

void leap_grouper_init(struct leap_grouper *g)
{
	memset(g, 0, sizeof(*g));
}

/* Doubles the bucket array once there is more than one group per bucket. */
static void grow(struct leap_grouper *g)
{
	size_t nb = g->nbuckets ? g->nbuckets * 2 : 64;
	struct leap_group **b = xcalloc(nb, sizeof(*b));
	for (size_t i = 0; i < g->nbuckets; i++) {
		struct leap_group *p = g->buckets[i], *next;
		for (; p; p = next) {
			next = p->hnext;
			p->hnext = b[p->hash & (nb - 1)];
			b[p->hash & (nb - 1)] = p;
		}
	}
	free(g->buckets);
	g->buckets = b;
	g->nbuckets = nb;
}

/* Unlinks `grp` from the hash table and the arrival list. */
static void unlink_group(struct leap_grouper *g, struct leap_group *grp)
{
	struct leap_group **pp = &g->buckets[grp->hash & (g->nbuckets - 1)];
	while (*pp != grp)
		pp = &(*pp)->hnext;
	*pp = grp->hnext;
	if (grp->prev)
		grp->prev->next = grp->next;
	else
		g->head = grp->next;
	if (grp->next)
		grp->next->prev = grp->prev;
	else
		g->tail = grp->prev;
	grp->prev = grp->next = grp->hnext = NULL;
	g->count--;
}

struct leap_group *leap_grouper_add(struct leap_grouper *g, const char *key, struct leap_member *m, int unit,
				    long want)
{
	struct leap_group *grp = leap_grouper_get(g, key);
	if (!grp) {
		size_t h = hash_str(key);
		if (g->count >= g->nbuckets)
			grow(g);
		grp = xcalloc(1, sizeof(*grp));
		grp->key = xstrdup(key);
		grp->hash = h;
		grp->hnext = g->buckets[h & (g->nbuckets - 1)];
		g->buckets[h & (g->nbuckets - 1)] = grp;
		grp->prev = g->tail;
		if (g->tail)
			g->tail->next = grp;
		else
			g->head = grp;
		g->tail = grp;
		g->count++;
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
	if (!g->nbuckets)
		return NULL;
	size_t h = hash_str(key);
	for (struct leap_group *grp = g->buckets[h & (g->nbuckets - 1)]; grp; grp = grp->hnext)
		if (grp->hash == h && !strcmp(grp->key, key))
			return grp;
	return NULL;
}

long leap_group_find_dup(const struct leap_group *grp, const struct leap_member *m)
{
	if (m->sample < 0)
		return -1;
	for (size_t i = 0; i < grp->n; i++)
		if (grp->m[i].sample == m->sample && grp->m[i].turn == m->turn)
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

enum { K_GROUP, K_TASK, K_SAMPLE, K_TURN, K_STATUS, K_TOKENS, K_BENCH, K_PRUNE, K_REWARD, K_RANK, K_GSIZE,
       K_DCP, K_ERROR, K_OWN, K_N };

/* Fills the carried DCP gate of m from the `dcp` object (leap-prune's next-turn records). */
static void scan_gate(struct leap_member *m, struct leap_span dcp)
{
	static const char *const verdicts[] = {"easy", "hopeless", "expand"}; /* enum leap_verdict */
	long long v;
	m->gate = -1;
	if (!leap_span_is_object(dcp))
		return;
	struct leap_span name = leap_span_member(dcp, "verdict");
	for (int i = 0; i < 3; i++)
		if (leap_span_str_eq(name, verdicts[i]))
			m->gate = i;
	if (!leap_span_int(leap_span_member(dcp, "turn"), &v) && v >= 1 && v <= 0x7fffffffL)
		m->gate_turn = (long)v;
	if (!leap_span_int(leap_span_member(dcp, "n_fail"), &v) && v >= 0 && v <= 0x7fffffffL)
		m->gate_fail = (long)v;
	if (!leap_span_int(leap_span_member(dcp, "group_size"), &v) && v >= 0 && v <= 0x7fffffffL)
		m->gate_n = (long)v;
}

/* The speedup of a timing leap can trust: bench.speedup when bench.status is "ok" (a noisy or
 * suspicious timing, or one whose status is missing, carries no usable speed). */
static void scan_speed(struct leap_member *m, struct leap_span bench)
{
	double d;
	if (leap_span_num(leap_span_member(bench, "speedup"), &d) || !(d > 0))
		return;
	if (leap_span_str_eq(leap_span_member(bench, "status"), "ok"))
		m->speedup = d;
	else
		m->speed_unusable = 1;
}

/* leap_member_scan_text; the line is copied into m->raw only when `copy`. */
static int scan_text(struct leap_member *m, const char *text, size_t len, const char *file, long line, long seq,
		     const char *own, struct leap_buf *key, int *has_group, int copy)
{
	static const char *const names[K_N - 1] = {"group", "task",   "sample", "turn",       "status", "tokens", "bench",
						   "prune", "reward", "rank",   "group_size", "dcp",    "error"};
	const char *keys[K_N];
	memcpy(keys, names, sizeof(names));
	keys[K_OWN] = own ? own : "";
	struct leap_span sp[K_N];
	memset(m, 0, sizeof(*m));
	if (leap_scan_object(text, len, keys, own ? K_N : K_N - 1, sp))
		return -1;
	if (!own)
		sp[K_OWN] = (struct leap_span){NULL, 0};
	*has_group = !leap_span_str(sp[K_GROUP], key) || !leap_span_str(sp[K_TASK], key);
	/* a group key with a NUL byte cannot name a group */
	if (*has_group && memchr(key->s, '\0', key->len))
		*has_group = 0;
	m->raw = copy ? xstrndup(text, len) : NULL;
	m->len = len;
	m->file = file;
	m->line = line;
	m->seq = seq;
	long long v;
	m->sample = !leap_span_int(sp[K_SAMPLE], &v) && v >= 0 && v <= 0x7fffffffL ? (long)v : -1;
	m->turn = !leap_span_int(sp[K_TURN], &v) && v >= 1 && v <= 0x7fffffffL ? (long)v : 1;
	m->status = LEAP_ST_NONE;
	if (leap_span_is_string(sp[K_STATUS])) {
		static const char *const st[] = {"no_code", "compile_error", "runtime_error", "timeout", "mismatch",
						 "pass"};
		for (int i = 0; i < 6; i++)
			if (leap_span_str_eq(sp[K_STATUS], st[i]))
				m->status = i;
	}
	if (sp[K_TOKENS].p && sp[K_TOKENS].p[0] != '-' && !memchr(sp[K_TOKENS].p, '.', sp[K_TOKENS].n) &&
	    !memchr(sp[K_TOKENS].p, 'e', sp[K_TOKENS].n) && !memchr(sp[K_TOKENS].p, 'E', sp[K_TOKENS].n) &&
	    !leap_span_int(sp[K_TOKENS], &v) && v <= 0x7fffffffffffL) {
		m->has_tokens = 1;
		m->tokens = (long)v;
	}
	double d;
	scan_speed(m, sp[K_BENCH]);
	scan_gate(m, sp[K_DCP]);
	m->has_error = sp[K_ERROR].p != NULL;
	m->final = !leap_span_str_eq(leap_span_member(sp[K_PRUNE], "decision"), "expand");
	if (!leap_span_num(sp[K_REWARD], &d)) {
		m->has_reward = 1;
		m->reward = d;
	}
	if (leap_span_is_object(sp[K_RANK])) {
		if (!leap_span_num(leap_span_member(sp[K_RANK], "score"), &d)) {
			m->has_score = 1;
			m->score = d;
		}
		if (!leap_span_int(leap_span_member(sp[K_RANK], "turns"), &v) && v >= 1 && v <= 0x7fffffffL)
			m->turns = (long)v;
	}
	if (!leap_span_int(sp[K_GSIZE], &v) && v > 0 && v <= 0x7fffffffL)
		m->want = (long)v;
	m->has_key = sp[K_OWN].p != NULL;
	if (leap_span_is_string(sp[K_TASK])) {
		m->task_off = (size_t)(sp[K_TASK].p - text);
		m->task_len = sp[K_TASK].n;
	}
	return 0;
}

int leap_member_scan_text(struct leap_member *m, const char *text, size_t len, const char *file, long line,
			  long seq, const char *own, struct leap_buf *key, int *has_group)
{
	return scan_text(m, text, len, file, line, seq, own, key, has_group, 1);
}

/* leap_member_scan, copying the line only when `copy`. */
static int scan_in(struct leap_member *m, const struct leap_in *in, long seq, const char *own, struct leap_buf *key,
		   int *has_group, int copy)
{
	const char *raw = in->buf;
	size_t len = in->len;
	if (in->line == 1 && len >= 3 && !memcmp(raw, "\xef\xbb\xbf", 3))
		raw += 3, len -= 3;
	return scan_text(m, raw, len, in->name, in->line, seq, own, key, has_group, copy);
}

int leap_member_scan(struct leap_member *m, const struct leap_in *in, long seq, const char *own,
		     struct leap_buf *key, int *has_group)
{
	return scan_in(m, in, seq, own, key, has_group, 1);
}

enum leap_read leap_member_line(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				struct leap_buf *key, int *has_group, json_t **bad, int copy, int *as_read)
{
	*bad = NULL;
	if (as_read)
		*as_read = 0;
	if (!scan_in(m, in, seq, own, key, has_group, copy)) {
		if (as_read)
			*as_read = m->len == in->len; /* no byte-order mark was dropped */
		return LEAP_READ_RECORD;
	}
	json_t *rec;
	if (leap_in_parse(in, &rec) == LEAP_READ_BAD) {
		*bad = rec;
		return LEAP_READ_BAD;
	}
	/* jansson took what the scanner refused (a corner of the grammar): go on with
	 * jansson's own compact text of it */
	struct leap_buf text = {0};
	if (leap_json_append(&text, rec))
		leap_die("cannot serialise a record");
	json_decref(rec);
	if (scan_text(m, text.s, text.len, in->name, in->line, seq, own, key, has_group, copy))
		leap_die("internal error: %s:%ld: a record jansson wrote does not scan", in->name, in->line);
	leap_buf_free(&text);
	return LEAP_READ_RECORD;
}

/* leap_member_next, the line copied only when `copy`. */
static enum leap_read member_next(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				  struct leap_buf *key, int *has_group, json_t **bad, int copy)
{
	*bad = NULL;
	if (leap_in_next_line(in) == LEAP_READ_EOF)
		return LEAP_READ_EOF;
	return leap_member_line(in, seq, own, m, key, has_group, bad, copy, NULL);
}

enum leap_read leap_member_next(struct leap_in *in, long seq, const char *own, struct leap_member *m,
				struct leap_buf *key, int *has_group, json_t **bad)
{
	return member_next(in, seq, own, m, key, has_group, bad, 1);
}

enum leap_read leap_member_peek(struct leap_in *in, long seq, struct leap_member *m, struct leap_buf *key,
				int *has_group, json_t **bad)
{
	return member_next(in, seq, NULL, m, key, has_group, bad, 0);
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

void leap_member_clear(struct leap_member *m)
{
	free(m->raw);
	free(m->note);
	m->raw = NULL;
	m->note = NULL;
	m->len = 0;
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
	free(g->buckets);
	memset(g, 0, sizeof(*g));
}

/* 1 when the raw text may hold the key (as a quoted string anywhere); cheap and conservative. */
static int may_hold_key(const char *raw, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *p = raw, *end = raw + len;
	while (p < end && (p = memchr(p, '"', (size_t)(end - p)))) {
		if ((size_t)(end - p) >= kl + 2 && !memcmp(p + 1, key, kl) && p[kl + 1] == '"')
			return 1;
		p++;
	}
	return 0;
}

int leap_splice_line(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add)
{
	return leap_splice_line_known(b, raw, len, rec, add, -1);
}

int leap_splice_error(struct leap_buf *b, const char *raw, size_t len, const char *file, long line,
		      const char *message)
{
	json_t *add = json_pack("{s:{s:s,s:s,s:I,s:s}}", "error", "program", leap_prog(), "file", file, "line",
				(json_int_t)line, "message", message);
	if (!add)
		leap_die("out of memory");
	int r = leap_splice_line_known(b, raw, len, NULL, add, -1);
	json_decref(add);
	return r;
}

int leap_splice_line_known(struct leap_buf *b, const char *raw, size_t len, json_t *rec, const json_t *add,
			   int clash)
{
	const char *key;
	json_t *v;
	size_t start = 0, end = len;
	while (start < end && (raw[start] == ' ' || raw[start] == '\t'))
		start++;
	while (end > start && (raw[end - 1] == ' ' || raw[end - 1] == '\t'))
		end--;
	int fast = end - start >= 2 && raw[start] == '{' && raw[end - 1] == '}';
	if (fast && clash == 1)
		fast = 0;
	if (fast && clash == -1) {
		json_object_foreach((json_t *)add, key, v) {
			if (rec ? json_object_get(rec, key) != NULL : may_hold_key(raw, len, key))
				fast = 0;
		}
	}
	if (!fast) {
		json_t *own = NULL;
		if (!rec) {
			own = rec = json_loadb(raw, len, JSON_ALLOW_NUL, NULL);
			if (!json_is_object(rec)) {
				json_decref(own);
				return -1;
			}
		}
		json_object_update(rec, (json_t *)add);
		if (leap_json_append(b, rec))
			leap_die("cannot serialise a record");
		leap_buf_add(b, "\n", 1);
		json_decref(own);
		return 0;
	}
	/* Is the object empty? Only whitespace between the braces. */
	size_t i = start + 1;
	while (i < end - 1 && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r'))
		i++;
	int first = i == end - 1;
	leap_buf_add(b, raw + start, end - 1 - start);
	json_object_foreach((json_t *)add, key, v) {
		if (!first)
			leap_buf_add(b, ",", 1);
		first = 0;
		json_t *k = json_string(key);
		if (!k || leap_json_append(b, k))
			leap_die("cannot serialise a record");
		json_decref(k);
		leap_buf_add(b, ":", 1);
		if (leap_json_append(b, v))
			leap_die("cannot serialise a record");
	}
	leap_buf_add(b, "}\n", 2);
	return 0;
}

void leap_lines_open(struct leap_lines *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (f->fd < 0)
		leap_die_errno("%s", path);
}

void leap_lines_flush(struct leap_lines *f)
{
	size_t off = 0;
	while (off < f->buf.len) {
		ssize_t n = write(f->fd, f->buf.s + off, f->buf.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			leap_die_errno("%s: write error", f->path);
		off += (size_t)n;
	}
	leap_buf_reset(&f->buf);
}

void leap_lines_add(struct leap_lines *f, const char *line, size_t len)
{
	if (f->buf.len && f->buf.len + len > 65536)
		leap_lines_flush(f);
	leap_buf_add(&f->buf, line, len);
	f->written++;
	if (f->buf.len >= 65536)
		leap_lines_flush(f);
}

int leap_lines_close(struct leap_lines *f)
{
	leap_lines_flush(f);
	leap_buf_free(&f->buf);
	if (f->fd >= 0 && close(f->fd) < 0) {
		leap_warn_errno("%s: close", f->path);
		f->fd = -1;
		return LEAP_EXIT_FATAL;
	}
	f->fd = -1;
	return LEAP_EXIT_OK;
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
