/* svg.c - small self-contained SVG bar charts (no scripts, no external resources). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svg.h"
#include "util.h"
#include "banned.h"

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

/* A "nice" axis maximum: 1, 2 or 5 times a power of ten at or above v. */
static double axis_max(double v)
{
	if (!(v > 0))
		return 1;
	double p = pow(10, floor(log10(v)));
	for (int m = 1; m <= 10; m *= 2) {
		if (m == 4)
			m = 5;
		if (m * p >= v)
			return m * p;
	}
	return 10 * p;
}

int leap_svg_bars(const char *path, const char *title, const char *ylabel, size_t n, const char *const *labels,
		  size_t ns, const struct leap_svg_series *series, double ymax, char **err)
{
	const double W = 720, H = 400, L = 70, R = 20, T = 50, B = 80;
	double top = 0;
	for (size_t s = 0; s < ns; s++)
		for (size_t i = 0; i < n; i++)
			if (isfinite(series[s].v[i]) && series[s].v[i] > top)
				top = series[s].v[i];
	if (ymax <= 0)
		ymax = axis_max(top);
	struct leap_buf b = {0};
	leap_buf_addf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
			  "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		      W, H, W, H);
	leap_buf_addf(&b, "<text x=\"%g\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", L);
	esc(&b, title);
	leap_buf_adds(&b, "</text>\n");
	double ph = H - T - B, pw = W - L - R;
	for (int k = 0; k <= 5; k++) {
		double y = T + ph - ph * k / 5.0;
		leap_buf_addf(&b, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				  "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			      L, W - R, y, y, L - 6, y + 4, ymax * k / 5.0);
	}
	leap_buf_addf(&b, "<text transform=\"translate(16 %g) rotate(-90)\" text-anchor=\"middle\">", T + ph / 2);
	esc(&b, ylabel);
	leap_buf_adds(&b, "</text>\n");
	double slot = n ? pw / (double)n : pw, bw = slot * 0.8 / (double)(ns ? ns : 1);
	size_t every = n > 16 ? (n + 15) / 16 : 1;
	for (size_t i = 0; i < n; i++) {
		double x0 = L + slot * (double)i + slot * 0.1;
		for (size_t s = 0; s < ns; s++) {
			double v = series[s].v[i];
			if (!isfinite(v))
				continue;
			double h = fmin(fmax(v, 0) / ymax, 1) * ph;
			leap_buf_addf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
				      x0 + bw * (double)s, T + ph - h, bw, h, colors[s % 6]);
			esc(&b, series[s].name);
			leap_buf_addf(&b, ": %g</title></rect>\n", v);
		}
		if (i % every == 0) {
			leap_buf_addf(&b, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"end\" transform=\"rotate(-35 %.1f %g)\">",
				      x0 + slot * 0.4, T + ph + 16, x0 + slot * 0.4, T + ph + 16);
			esc(&b, labels[i]);
			leap_buf_adds(&b, "</text>\n");
		}
	}
	leap_buf_addf(&b, "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#333\"/>\n", L, W - R, T + ph, T + ph);
	for (size_t s = 0; s < ns && ns > 1; s++) {
		double x = L + 150.0 * (double)s;
		leap_buf_addf(&b, "<rect x=\"%g\" y=\"32\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%g\" y=\"41\">", x,
			      colors[s % 6], x + 14);
		esc(&b, series[s].name);
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
