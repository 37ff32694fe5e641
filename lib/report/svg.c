/* svg.c - small self-contained SVG bar charts (no scripts, no external resources). */
/*
 * leap-report --plot writes charts a reader opens anywhere (a browser, a CI artifact, a paper's
 * draft), so they are SVG written by hand: no plotting library to install, no script or
 * external resource in the file, and every label escaped, since task names come from records.
 * Only grouped bar charts are drawn, the one kind the report needs, with axes rounded to a
 * readable step (leap_svg_axis).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svg.h"
#include "core/util.h"
#include "core/banned.h"

static const char *const colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948"};

static void esc(struct leap_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			leap_buf_adds(b, "&lt;");
			break;
		case '>':
			leap_buf_adds(b, "&gt;");
			break;
		case '&':
			leap_buf_adds(b, "&amp;");
			break;
		case '"':
			leap_buf_adds(b, "&quot;");
			break;
		default:
			leap_buf_add(b, s, 1);
		}
	}
}

double leap_svg_axis(double top, double cap, int whole, double *step)
{
	if (!(top > 0) || !isfinite(top))
		top = cap > 0 ? cap : 1;
	double raw = top / 5, p = pow(10, floor(log10(raw)));
	static const double nice[] = {1, 2, 2.5, 5, 10};
	double st = 10 * p;
	for (size_t i = 0; i < sizeof nice / sizeof nice[0]; i++)
		if (nice[i] * p >= raw * (1 - 1e-9) && !(whole && nice[i] * p != floor(nice[i] * p))) {
			st = nice[i] * p;
			break;
		}
	double ymax = ceil(top / st - 1e-9) * st;
	if (cap > 0 && ymax > cap)
		ymax = cap;
	*step = st;
	return ymax;
}

/* The grid, the y-axis ticks and the two axis titles. */
static void axes(struct leap_buf *b, const struct leap_svg_chart *c, double W, double H, double L, double R,
		 double T, double ph, double ymax, double step)
{
	for (int k = 0; k * step <= ymax * (1 + 1e-9); k++) {
		double v = k * step, y = T + ph - ph * v / ymax;
		char num[LEAP_DOUBLE_BUF];
		snprintf(num, sizeof num, "%.6g", v);
		leap_buf_addf(b, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				 "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			      L, W - R, y, y, L - 6, y + 4, num);
	}
	leap_buf_addf(b, "<text class=\"ytitle\" transform=\"translate(16 %g) rotate(-90)\" text-anchor=\"middle\">", T + ph / 2);
	esc(b, c->ylabel);
	leap_buf_adds(b, "</text>\n");
	leap_buf_addf(b, "<text class=\"xtitle\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">", L + (W - L - R) / 2, H - 8);
	esc(b, c->xlabel);
	leap_buf_adds(b, "</text>\n");
}

/* The bars and the category labels (all of them: smaller and steeper when there are many). */
static void bars(struct leap_buf *b, const struct leap_svg_chart *c, double L, double T, double pw, double ph,
		 double ymax)
{
	size_t n = c->n, ns = c->ns ? c->ns : 1;
	double slot = n ? pw / (double)n : pw, bw = slot * 0.8 / (double)ns;
	int small = n > 12, angle = n > 6 ? -50 : 0;
	for (size_t i = 0; i < n; i++) {
		double x0 = L + slot * (double)i + slot * 0.1;
		for (size_t s = 0; s < c->ns; s++) {
			double v = c->series[s].v[i];
			if (!isfinite(v))
				continue;
			double h = fmin(fmax(v, 0) / ymax, 1) * ph;
			char num[LEAP_DOUBLE_BUF];
			leap_buf_addf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
				      x0 + bw * (double)s, T + ph - h, bw, h, colors[s % 6]);
			esc(b, c->series[s].name);
			leap_buf_addf(b, ": %s</title></rect>\n", leap_fmt_double(num, v));
		}
		double cx = x0 + slot * 0.4, ly = T + ph + 14;
		if (angle)
			leap_buf_addf(b, "<text class=\"category\" x=\"%.1f\" y=\"%g\" font-size=\"%d\" text-anchor=\"end\" "
					 "transform=\"rotate(%d %.1f %g)\">",
				      cx, ly, small ? 10 : 12, angle, cx, ly);
		else
			leap_buf_addf(b, "<text class=\"category\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">", cx, ly + 2);
		esc(b, c->labels[i]);
		leap_buf_adds(b, "</text>\n");
	}
}

int leap_svg_bars(const char *path, const struct leap_svg_chart *c, char **err)
{
	size_t longest = 0;
	for (size_t i = 0; i < c->n; i++)
		longest = strlen(c->labels[i]) > longest ? strlen(c->labels[i]) : longest;
	/* room under the axis for the labels (rotated when many: about 4.5 px of height a
	 * character) and the axis title */
	const double L = 70, R = 20, T = 56, ph = 264;
	const double B = c->n > 6 && !c->empty ? fmax(80, 44 + 4.5 * (double)longest) : 56, H = T + ph + B;
	const double W = fmax(720, L + R + 22.0 * (double)c->n);
	double top = 0;
	for (size_t s = 0; s < c->ns; s++)
		for (size_t i = 0; i < c->n; i++)
			if (isfinite(c->series[s].v[i]) && c->series[s].v[i] > top)
				top = c->series[s].v[i];
	double step, ymax = leap_svg_axis(top, c->ycap, c->counts, &step);
	double pw = W - L - R;
	struct leap_buf b = {0};
	leap_buf_addf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
			  "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		      W, H, W, H);
	leap_buf_addf(&b, "<text x=\"%g\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", L);
	esc(&b, c->title);
	leap_buf_adds(&b, "</text>\n");
	axes(&b, c, W, H, L, R, T, ph, ymax, step);
	if (!c->empty) {
		bars(&b, c, L, T, pw, ph, ymax);
	} else {
		leap_buf_addf(&b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\" fill=\"#666\" font-size=\"15\">",
			      L + pw / 2, T + ph / 2);
		esc(&b, c->empty);
		leap_buf_adds(&b, "</text>\n");
	}
	leap_buf_addf(&b, "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#333\"/>\n", L, W - R, T + ph, T + ph);
	for (size_t s = 0; s < c->ns && c->ns > 1; s++) {
		double x = L + 170.0 * (double)s;
		leap_buf_addf(&b, "<rect x=\"%g\" y=\"36\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%g\" y=\"45\">", x,
			      colors[s % 6], x + 14);
		esc(&b, c->series[s].name);
		leap_buf_adds(&b, "</text>\n");
	}
	leap_buf_adds(&b, "</svg>\n");

	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	FILE *fp = fopen(tmp, "w");
	int rc = 0, bad = !fp;
	if (fp) {
		bad = fwrite(b.s, 1, b.len, fp) != b.len;
		if (fclose(fp) != 0)
			bad = 1;
	}
	if (bad) {
		*err = xasprintf("%s: %s", tmp, strerror(errno));
		rc = -1;
		unlink(tmp);
	} else if (rename(tmp, path)) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		unlink(tmp);
		rc = -1;
	}
	free(tmp);
	leap_buf_free(&b);
	return rc;
}
