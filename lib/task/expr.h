/* expr.h - integer size expressions over a task's scalar parameters ("rows*cols", "(n+1)/2"). */
#ifndef LEAP_EXPR_H
#define LEAP_EXPR_H

#include <stddef.h>
#include <stdint.h>

/* Grammar (64-bit signed integers, C precedence, '/' and '%' truncate toward zero):
 *   expr  := term (('+' | '-') term)*
 *   term  := unary (('*' | '/' | '%') unary)*
 *   unary := '-' unary | atom
 *   atom  := NUMBER | NAME | ('min' | 'max' | 'cdiv') '(' expr ',' expr ')' | '(' expr ')'
 * cdiv(a, b) is the ceiling of a/b. Names are resolved when the expression is compiled. */
struct leap_expr;

/* Resolves a variable name (n bytes at name) to an index >= 0, or returns -1 if unknown. */
typedef int (*leap_expr_lookup)(const char *name, size_t n, void *arg);

/* Compiles `src`. Returns the expression, or NULL with a newly allocated message in *err
 * (e.g. "unknown name 'm' at column 3"). */
struct leap_expr *leap_expr_compile(const char *src, leap_expr_lookup lookup, void *arg, char **err);

/* Evaluates with vars[i] the value of variable index i. Returns 0 and sets *out, or -1 with a
 * newly allocated message in *err on division by zero or overflow. */
int leap_expr_eval(const struct leap_expr *e, const int64_t *vars, int64_t *out, char **err);

/* The source text the expression was compiled from. */
const char *leap_expr_source(const struct leap_expr *e);

/* Calls fn for each distinct variable index used (for dependency checks). */
void leap_expr_vars(const struct leap_expr *e, void (*fn)(int idx, void *arg), void *arg);

void leap_expr_free(struct leap_expr *e);

#endif
