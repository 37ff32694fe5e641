/* svg.h - small self-contained SVG bar charts (no scripts, no external resources). */
#ifndef LEAP_SVG_H
#define LEAP_SVG_H

#include <stddef.h>

struct leap_svg_series {
	const char *name;
	const double *v; /* one value per category; non-finite values draw no bar */
};

/* A grouped bar chart: `ns` series over `n` categories. */
struct leap_svg_chart {
	const char *title;    /* what is shown, with n and the backend */
	const char *xlabel;   /* the x-axis title: what the categories are */
	const char *ylabel;   /* the y-axis title: what a bar measures */
	size_t n;
	const char *const *labels; /* n category labels, every one drawn */
	size_t ns;
	const struct leap_svg_series *series;
	double ycap;          /* > 0: the axis never goes above it (1 for shares) */
	int counts;           /* the values are counts: whole-number ticks */
	const char *empty;    /* when not NULL: no bars, this text instead ("no timing data") */
};

/* The top of a y axis over data up to `top`: a whole number of ticks of 1, 2, 2.5 or 5 times
 * a power of ten, about five of them, so the axis ends within a quarter above the data; at
 * most `cap` when cap > 0; whole-number ticks when `whole` (counts). *step receives the tick
 * spacing. */
double leap_svg_axis(double top, double cap, int whole, double *step);

/* Writes the chart to `path` (atomically: a temporary file renamed into place). Returns 0, or
 * -1 with a new message in *err. */
int leap_svg_bars(const char *path, const struct leap_svg_chart *c, char **err);

#endif
