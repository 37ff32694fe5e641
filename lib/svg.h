/* svg.h - small self-contained SVG bar charts (no scripts, no external resources). */
#ifndef LEAP_SVG_H
#define LEAP_SVG_H

#include <stddef.h>

struct leap_svg_series {
	const char *name;
	const double *v; /* one value per category; non-finite values draw no bar */
};

/* Writes a grouped bar chart of `ns` series over `n` categories to `path` (atomically: a
 * temporary file renamed into place). ymax <= 0 scales to the largest value. Returns 0, or -1
 * with a new message in *err. */
int leap_svg_bars(const char *path, const char *title, const char *ylabel, size_t n, const char *const *labels,
		  size_t ns, const struct leap_svg_series *series, double ymax, char **err);

#endif
