// SPDX-License-Identifier: GPL-2.0
/*
 * The heat map (heatmap.h). Columns are kept sparse (only the cells that
 * timed something), and a long run never grows without bound: when the
 * columns reach MAX_COLUMNS, neighbours are merged in pairs, each column
 * then covering twice the time (counts add exactly).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heatmap.h"
#include "hist.h"
#include "layers.h"
#include "verdict.h"

#define MAX_COLUMNS 2048

/* Geometry of a panel, in SVG pixels. */
#define LEFT 96	    /* room for the latency labels */
#define PLOT_W 720  /* the plot's width, whatever the run's length */
#define RIGHT 150   /* room for the legend */
#define ROW_H 14    /* one log2 slot */
#define MIN_ROWS 6  /* a panel with one busy slot still reads as one */
#define TITLE_H 30  /* the panel's title above its plot */
#define AXIS_H 34   /* the time axis below it */
#define HEADER_H 34 /* the file's title */
#define LEGEND_STEPS 6

struct column {
	double start_s, secs;		    /* since the first column */
	uint64_t *slots[NR_LAYERS][NR_OPS]; /* LOG2_SLOTS each; NULL: none */
};

struct heatmap {
	FILE *out;
	char what[320]; /* "the heat map to PATH", for messages */
	struct column *cols;
	size_t n;
	double t; /* the time covered so far */
	struct timespec first_wall;
};

struct heatmap *heatmap_open(const char *path, char *err, size_t errsz)
{
	struct heatmap *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	snprintf(h->what, sizeof(h->what), "the heat map to %s", path);
	h->out = fopen(path, "w");
	if (!h->out) {
		snprintf(err, errsz, "cannot write the heat map to %s: %s", path, strerror(errno));
		free(h);
		return NULL;
	}
	h->cols = calloc(MAX_COLUMNS, sizeof(*h->cols));
	if (!h->cols) {
		fclose(h->out);
		free(h);
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	return h;
}

static void column_free(struct column *c)
{
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < NR_OPS; o++)
			free(c->slots[l][o]);
	memset(c, 0, sizeof(*c));
}

/* Columns 2i and 2i+1 become column i: a long run halves its resolution. */
static void merge_pairs(struct heatmap *h)
{
	size_t out = 0;

	for (size_t i = 0; i < h->n; i += 2, out++) {
		struct column *a = &h->cols[i], *b = i + 1 < h->n ? &h->cols[i + 1] : NULL;

		if (b) {
			a->secs += b->secs;
			for (unsigned int l = 0; l < NR_LAYERS; l++)
				for (unsigned int o = 0; o < NR_OPS; o++) {
					if (!b->slots[l][o])
						continue;
					if (!a->slots[l][o]) {
						a->slots[l][o] = b->slots[l][o];
						b->slots[l][o] = NULL;
						continue;
					}
					for (unsigned int k = 0; k < LOG2_SLOTS; k++)
						a->slots[l][o][k] += b->slots[l][o][k];
				}
			column_free(b);
		}
		if (out != i) {
			h->cols[out] = *a;
			memset(a, 0, sizeof(*a));
		}
	}
	h->n = out;
}

int heatmap_add(struct heatmap *h, const struct report *r)
{
	struct column *c;

	if (h->n == MAX_COLUMNS)
		merge_pairs(h);
	if (!h->n)
		h->first_wall = r->wall;
	c = &h->cols[h->n];
	c->start_s = h->t;
	c->secs = r->interval_s;
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < layer_nr_ops(l); o++) {
			if (!r->cells[l][o].count)
				continue;
			c->slots[l][o] = calloc(LOG2_SLOTS, sizeof(uint64_t));
			if (!c->slots[l][o]) {
				column_free(c);
				return -ENOMEM;
			}
			cell_log2(&r->cells[l][o], c->slots[l][o]);
		}
	h->t += r->interval_s;
	h->n++;
	return 0;
}

/* A panel's extent: its slots with a count, its largest count. */
struct extent {
	int lo, hi; /* slots; lo > hi: the cell timed nothing */
	uint64_t most, total;
};

static struct extent extent_of(const struct heatmap *h, unsigned int l, unsigned int o)
{
	struct extent e = { .lo = LOG2_SLOTS, .hi = -1 };

	for (size_t i = 0; i < h->n; i++) {
		const uint64_t *s = h->cols[i].slots[l][o];

		for (int k = 0; s && k < LOG2_SLOTS; k++) {
			if (!s[k])
				continue;
			e.lo = k < e.lo ? k : e.lo;
			e.hi = k > e.hi ? k : e.hi;
			e.most = s[k] > e.most ? s[k] : e.most;
			e.total += s[k];
		}
	}
	/* Small spans are widened downwards, so a panel is never a sliver. */
	if (e.hi >= 0 && e.hi - e.lo + 1 < MIN_ROWS)
		e.lo = e.hi - MIN_ROWS + 1 > 0 ? e.hi - MIN_ROWS + 1 : 0;
	if (e.hi >= 0 && e.hi - e.lo + 1 < MIN_ROWS)
		e.hi = e.lo + MIN_ROWS - 1;
	return e;
}

/* Colour of a count on the panel's log scale: light yellow to dark red. */
static void colour(uint64_t count, uint64_t most, char *buf, size_t sz)
{
	static const double stops[][3] = {
		{ 255, 245, 204 }, { 254, 178, 76 }, { 240, 59, 32 }, { 128, 0, 38 }
	};
	double t = most > 1 ? log((double)count) / log((double)most) : 1.0, x;
	int i;

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	x = t * 3;
	i = x >= 3 ? 2 : (int)x;
	x -= i;
	snprintf(buf, sz, "#%02x%02x%02x",
		 (int)lround(stops[i][0] + x * (stops[i + 1][0] - stops[i][0])),
		 (int)lround(stops[i][1] + x * (stops[i + 1][1] - stops[i][1])),
		 (int)lround(stops[i][2] + x * (stops[i + 1][2] - stops[i][2])));
}

/* A step for about ten time ticks: 1, 2 or 5 times a power of ten. */
static double tick_step(double span)
{
	double raw = span / 10, p = pow(10, floor(log10(raw > 0 ? raw : 1)));

	if (raw <= p)
		return p;
	if (raw <= 2 * p)
		return 2 * p;
	if (raw <= 5 * p)
		return 5 * p;
	return 10 * p;
}

static double x_of(const struct heatmap *h, double secs)
{
	return LEFT + (h->t > 0 ? secs / h->t : 0) * PLOT_W;
}

static int panel(const struct heatmap *h, FILE *out, unsigned int l, unsigned int o,
		 const struct extent *e, int top)
{
	int rows = e->hi - e->lo + 1, plot_top = top + TITLE_H, plot_h = rows * ROW_H;
	double step = tick_step(h->t);
	char c[16], bound[32], total[32];

	format_count(e->total, total, sizeof(total));
	fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"title\">%s %s: %s %s</text>\n", LEFT,
		top + 20, layer_name(l), op_name(l, o), total,
		layer_count_noun(l, 2));
	/* The plot area; its id and data tell a reader (and the tests) where it is. */
	fprintf(out,
		"<rect id=\"plot-%s-%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"data-slot-lo=\"%d\" data-slot-hi=\"%d\" data-columns=\"%zu\" class=\"plot\"/>\n",
		layer_name(l), op_name(l, o), LEFT, plot_top, PLOT_W, plot_h, e->lo, e->hi, h->n);
	for (size_t i = 0; i < h->n; i++) {
		const struct column *col = &h->cols[i];
		const uint64_t *s = col->slots[l][o];
		double x0 = x_of(h, col->start_s), x1 = x_of(h, col->start_s + col->secs);

		for (int k = e->lo; s && k <= e->hi; k++) {
			if (!s[k])
				continue;
			colour(s[k], e->most, c, sizeof(c));
			fprintf(
			    out,
			    "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
			    "<title>%.1f s: %llu</title></rect>\n",
			    x0, plot_top + (e->hi - k) * ROW_H, x1 - x0, ROW_H, c, col->start_s,
			    (unsigned long long)s[k]);
		}
	}
	/* Latency: each slot's lower bound, every row while they fit. */
	for (int k = e->lo; k <= e->hi; k++) {
		if (rows > 24 && (k - e->lo) % 2)
			continue;
		format_duration(k ? 1ULL << k : 0, bound, sizeof(bound));
		fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"ylabel\">%s</text>\n", LEFT - 6,
			plot_top + (e->hi - k + 1) * ROW_H, bound);
	}
	/* Time since the start. */
	for (double t = 0; t <= h->t + 1e-9; t += step) {
		double x = x_of(h, t);

		fprintf(out,
			"<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"tick\"/>"
			"<text x=\"%.2f\" y=\"%d\" class=\"xlabel\">%g s</text>\n",
			x, plot_top + plot_h, x, plot_top + plot_h + 5, x, plot_top + plot_h + 18,
			t);
	}
	/* Legend: the colour of counts from 1 to the panel's largest. */
	for (int i = 0; i < LEGEND_STEPS; i++) {
		uint64_t count =
		    (uint64_t)llround(pow((double)e->most, (double)i / (LEGEND_STEPS - 1)));

		colour(count, e->most, c, sizeof(c));
		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%d\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"legend\">%llu</text>\n",
			LEFT + PLOT_W + 16, plot_top + i * 16, 14, c, LEFT + PLOT_W + 38,
			plot_top + i * 16 + 12, (unsigned long long)count);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"legend\">per slot and column</text>\n",
		LEFT + PLOT_W + 16, plot_top + LEGEND_STEPS * 16 + 14);
	return TITLE_H + plot_h + AXIS_H;
}

int heatmap_write_svg(const struct heatmap *h, FILE *out)
{
	struct extent ext[NR_LAYERS][NR_OPS];
	int height = HEADER_H, top = HEADER_H, panels = 0;
	char when[40];

	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < layer_nr_ops(l); o++) {
			ext[l][o] = extent_of(h, l, o);
			if (ext[l][o].hi < 0)
				continue;
			height += TITLE_H + (ext[l][o].hi - ext[l][o].lo + 1) * ROW_H + AXIS_H;
			panels++;
		}
	if (!panels)
		height += 40;
	format_iso8601(&h->first_wall, when, sizeof(when));
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
		"<style>.title{font-size:14px;font-weight:bold}"
		".ylabel{font-size:11px;text-anchor:end}.xlabel{font-size:11px;text-anchor:middle}"
		".legend{font-size:11px}.plot{fill:#f7f7f7;stroke:#999}.tick{stroke:#666}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"22\" font-size=\"16\">iostackbreak: latency heat map, "
		"%.1f s from %s (%zu columns; y: latency, log2; colour: count)</text>\n",
		LEFT + PLOT_W + RIGHT, height, LEFT + PLOT_W + RIGHT, height, 8, h->t,
		h->n ? when : "-", h->n);
	if (!panels)
		fprintf(out, "<text x=\"%d\" y=\"%d\">no I/O was timed</text>\n", LEFT,
			HEADER_H + 24);
	for (unsigned int l = 0; l < NR_LAYERS; l++)
		for (unsigned int o = 0; o < layer_nr_ops(l); o++)
			if (ext[l][o].hi >= 0)
				top += panel(h, out, l, o, &ext[l][o], top);
	fprintf(out, "</svg>\n");
	return ferror(out) ? -1 : 0;
}

int heatmap_close(struct heatmap *h)
{
	int err;

	if (!h)
		return 0;
	err = heatmap_write_svg(h, h->out);
	if (fclose(h->out))
		err = -1;
	for (size_t i = 0; i < h->n; i++)
		column_free(&h->cols[i]);
	free(h->cols);
	free(h);
	return err;
}

static int heatmap_sink_end(struct sink *s, const struct report *r)
{
	if (!heatmap_add(s->state, r))
		return 0;
	errno = ENOMEM;
	return -1;
}

static int heatmap_sink_close(struct sink *s)
{
	int err = heatmap_close(s->state);

	s->state = NULL;
	return err;
}

static const struct sink_ops heatmap_ops = {
	.report_end = heatmap_sink_end,
	.close = heatmap_sink_close,
};

void heatmap_sink_open(struct sink *s, struct heatmap *h)
{
	*s = (struct sink){ .ops = &heatmap_ops, .what = h->what, .state = h };
}
