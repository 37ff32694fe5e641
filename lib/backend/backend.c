/* backend.c - the table of backends: lookup by name, index or extension, and the defaults. */
/*
 * The one place that lists the backends (backend.h says what a row holds). The order of the
 * table is the order of preference when no --backend is given (leap_backend_default): the
 * first row that is usable here wins, so a device backend comes before cpu, which is always
 * usable.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "core/banned.h"

static const struct leap_backend_ops *const table[LEAP_NBACKENDS] = {
	[LEAP_BACKEND_CUDA] = &leap_backend_cuda,
	[LEAP_BACKEND_CPU] = &leap_backend_cpu,
};

const struct leap_backend_ops *leap_backend_of(enum leap_backend b)
{
	return table[(unsigned)b < LEAP_NBACKENDS ? b : leap_backend_record_default()];
}

int leap_backend_has(enum leap_backend b, unsigned flags)
{
	return (table[b]->flags & flags) == flags;
}

int leap_backend_parse(const char *s, enum leap_backend *b)
{
	for (int i = 0; s && i < LEAP_NBACKENDS; i++)
		if (!strcmp(s, table[i]->name)) {
			*b = (enum leap_backend)i;
			return 0;
		}
	return -1;
}

const struct leap_backend_ops *leap_backend_find(const char *name)
{
	enum leap_backend b;
	return leap_backend_parse(name, &b) ? NULL : table[b];
}

const char *leap_backend_name(enum leap_backend b)
{
	return leap_backend_of(b)->name;
}

int leap_backend_by_ext(const char *file, enum leap_backend *b)
{
	const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');
	if (!dot || (slash && dot < slash))
		return -1;
	for (int i = 0; i < LEAP_NBACKENDS; i++)
		if (!strcmp(dot + 1, table[i]->ext)) {
			*b = (enum leap_backend)i;
			return 0;
		}
	return -1;
}

enum leap_backend leap_backend_record_default(void)
{
	return LEAP_BACKEND_CUDA; /* records from before the cpu backend name none */
}

enum leap_backend leap_backend_reference(void)
{
	return LEAP_BACKEND_CPU;
}

enum leap_backend leap_backend_default(char *said, size_t n)
{
	char why[200] = ""; /* the last refusal: why the backend chosen is not a better one */
	for (int i = 0; i < LEAP_NBACKENDS; i++) {
		char own[200] = "";
		const struct leap_backend_ops *be = table[i];
		if (be->usable && !be->usable(own, sizeof own)) {
			snprintf(why, sizeof why, "%s", own);
			continue;
		}
		snprintf(said, n, "no --backend given: using %s (%s)", be->name, be->usable ? own : why);
		return (enum leap_backend)i;
	}
	return leap_backend_reference(); /* not reached: cpu is always usable */
}
