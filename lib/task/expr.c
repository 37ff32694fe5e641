/* expr.c - integer size expressions over a task's scalar parameters ("rows*cols", "(n+1)/2"). */
/*
 * A task states its buffers' sizes as expressions over its scalars ("rows*cols", "cdiv(n,
 * 256)"), so that one task fits every size it lists or draws. An expression is parsed once, by
 * recursive descent into a small postfix program with its names resolved, and evaluated per case
 * and per drawn size without parsing again. Arithmetic is on 64-bit integers, and overflow or a
 * division by zero is an error naming the expression, never a wrapped size: a size too small
 * would let a kernel write past its buffer.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "core/util.h"
#include "core/banned.h"

enum op { OP_CONST, OP_VAR, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_NEG, OP_MIN, OP_MAX, OP_CDIV };

struct ins {
	enum op op;
	int64_t v; /* constant value or variable index */
};

struct leap_expr {
	char *src;
	struct ins *code; /* postfix program */
	size_t n, cap;
	size_t depth;     /* evaluation stack size needed */
};

enum { MAX_NESTING = 64 };

struct parser {
	const char *s, *p;
	struct leap_expr *e;
	leap_expr_lookup lookup;
	void *arg;
	char *err;
	int nesting;
	size_t sp, maxsp;
};

static void emit(struct parser *ps, enum op op, int64_t v)
{
	xgrow((void **)&ps->e->code, &ps->e->cap, ps->e->n + 1, sizeof(struct ins));
	ps->e->code[ps->e->n++] = (struct ins){op, v};
	if (op == OP_CONST || op == OP_VAR) {
		if (++ps->sp > ps->maxsp)
			ps->maxsp = ps->sp;
	} else if (op != OP_NEG) {
		ps->sp--;
	}
}

static int fail(struct parser *ps, const char *fmt, const char *what, size_t n)
{
	if (!ps->err)
		ps->err = xasprintf(fmt, (int)n, what, (int)(ps->p - ps->s) + 1);
	return -1;
}

static void skip(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static int expr(struct parser *ps);

static int atom(struct parser *ps)
{
	skip(ps);
	const char *p = ps->p;
	if (isdigit((unsigned char)*p)) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (errno || isalpha((unsigned char)*end) || *end == '_' || *end == '.')
			return fail(ps, "bad number '%.*s' at column %d", p, (size_t)(end - p) + 1);
		ps->p = end;
		emit(ps, OP_CONST, v);
		return 0;
	}
	if (isalpha((unsigned char)*p) || *p == '_') {
		const char *q = p;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		size_t n = (size_t)(q - p);
		ps->p = q;
		skip(ps);
		if (*ps->p == '(') {
			enum op op;
			if (n == 3 && !memcmp(p, "min", 3))
				op = OP_MIN;
			else if (n == 3 && !memcmp(p, "max", 3))
				op = OP_MAX;
			else if (n == 4 && !memcmp(p, "cdiv", 4))
				op = OP_CDIV;
			else {
				ps->p = p;
				return fail(ps, "unknown function '%.*s' at column %d", p, n);
			}
			ps->p++;
			if (expr(ps))
				return -1;
			skip(ps);
			if (*ps->p != ',')
				return fail(ps, "expected ',' in '%.*s(...)' at column %d", p, n);
			ps->p++;
			if (expr(ps))
				return -1;
			skip(ps);
			if (*ps->p != ')')
				return fail(ps, "expected ')' after '%.*s(...' at column %d", p, n);
			ps->p++;
			emit(ps, op, 0);
			return 0;
		}
		int idx = ps->lookup ? ps->lookup(p, n, ps->arg) : -1;
		if (idx < 0) {
			ps->p = p;
			return fail(ps, "unknown name '%.*s' at column %d", p, n);
		}
		emit(ps, OP_VAR, idx);
		return 0;
	}
	if (*p == '(') {
		ps->p++;
		if (expr(ps))
			return -1;
		skip(ps);
		if (*ps->p != ')')
			return fail(ps, "expected ')'%.*s at column %d", "", 0);
		ps->p++;
		return 0;
	}
	if (!*p)
		return fail(ps, "unexpected end of expression%.*s at column %d", "", 0);
	return fail(ps, "unexpected '%.*s' at column %d", p, 1);
}

static int unary(struct parser *ps)
{
	skip(ps);
	if (*ps->p == '-') {
		ps->p++;
		if (++ps->nesting > MAX_NESTING)
			return fail(ps, "expression nested too deeply%.*s at column %d", "", 0);
		int r = unary(ps);
		ps->nesting--;
		if (r)
			return -1;
		emit(ps, OP_NEG, 0);
		return 0;
	}
	return atom(ps);
}

static int term(struct parser *ps)
{
	if (unary(ps))
		return -1;
	for (;;) {
		skip(ps);
		char c = *ps->p;
		if (c != '*' && c != '/' && c != '%')
			return 0;
		ps->p++;
		if (unary(ps))
			return -1;
		emit(ps, c == '*' ? OP_MUL : c == '/' ? OP_DIV : OP_MOD, 0);
	}
}

static int expr(struct parser *ps)
{
	if (++ps->nesting > MAX_NESTING)
		return fail(ps, "expression nested too deeply%.*s at column %d", "", 0);
	if (term(ps))
		return -1;
	for (;;) {
		skip(ps);
		char c = *ps->p;
		if (c != '+' && c != '-') {
			ps->nesting--;
			return 0;
		}
		ps->p++;
		if (term(ps))
			return -1;
		emit(ps, c == '+' ? OP_ADD : OP_SUB, 0);
	}
}

struct leap_expr *leap_expr_compile(const char *src, leap_expr_lookup lookup, void *arg, char **err)
{
	struct leap_expr *e = xcalloc(1, sizeof(*e));
	struct parser ps = {.s = src, .p = src, .e = e, .lookup = lookup, .arg = arg};
	if (expr(&ps) == 0) {
		skip(&ps);
		if (*ps.p)
			fail(&ps, "unexpected '%.*s' at column %d", ps.p, 1);
	}
	if (ps.err) {
		*err = ps.err;
		leap_expr_free(e);
		return NULL;
	}
	e->src = xstrdup(src);
	e->depth = ps.maxsp;
	return e;
}

static int64_t floordiv_ceil(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) == (b < 0)))
		q++;
	return q;
}

int leap_expr_eval(const struct leap_expr *e, const int64_t *vars, int64_t *out, char **err)
{
	int64_t small[32] = {0};
	int64_t *st = e->depth <= 32 ? small : xmalloc(e->depth * sizeof(int64_t));
	size_t sp = 0;
	int rc = 0;
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		const struct ins *in = &e->code[i];
		int64_t a, b, r = 0;
		switch (in->op) {
		case OP_CONST:
			st[sp++] = in->v;
			continue;
		case OP_VAR:
			st[sp++] = vars[in->v];
			continue;
		case OP_NEG:
			if (st[sp - 1] == INT64_MIN)
				rc = -1;
			else
				st[sp - 1] = -st[sp - 1];
			continue;
		default:
			break;
		}
		b = st[--sp];
		a = st[sp - 1];
		switch (in->op) {
		case OP_ADD:
			rc = __builtin_add_overflow(a, b, &r) ? -1 : 0;
			break;
		case OP_SUB:
			rc = __builtin_sub_overflow(a, b, &r) ? -1 : 0;
			break;
		case OP_MUL:
			rc = __builtin_mul_overflow(a, b, &r) ? -1 : 0;
			break;
		case OP_DIV:
		case OP_MOD:
		case OP_CDIV:
			if (b == 0) {
				*err = xasprintf("division by zero in '%s'", e->src);
				rc = -2;
				break;
			}
			if (a == INT64_MIN && b == -1) {
				rc = -1;
				break;
			}
			r = in->op == OP_DIV ? a / b : in->op == OP_MOD ? a % b : floordiv_ceil(a, b);
			break;
		case OP_MIN:
			r = a < b ? a : b;
			break;
		case OP_MAX:
			r = a > b ? a : b;
			break;
		default:
			break;
		}
		st[sp - 1] = r;
	}
	if (rc == -1)
		*err = xasprintf("integer overflow in '%s'", e->src);
	else if (rc == 0)
		*out = st[0];
	if (st != small)
		free(st);
	return rc ? -1 : 0;
}

const char *leap_expr_source(const struct leap_expr *e)
{
	return e->src;
}

void leap_expr_vars(const struct leap_expr *e, void (*fn)(int idx, void *arg), void *arg)
{
	for (size_t i = 0; i < e->n; i++) {
		if (e->code[i].op != OP_VAR)
			continue;
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			if (e->code[j].op == OP_VAR && e->code[j].v == e->code[i].v)
				seen = 1;
		if (!seen)
			fn((int)e->code[i].v, arg);
	}
}

void leap_expr_free(struct leap_expr *e)
{
	if (!e)
		return;
	free(e->src);
	free(e->code);
	free(e);
}
