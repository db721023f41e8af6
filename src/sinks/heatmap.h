/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --heatmap=FILE.svg: a latency heat map of the run, one panel per layer
 * and op, written when the run ends. Time runs along x (one column per
 * interval report), log2 latency up y (the classic histogram's slots),
 * and the count of a slot in a column is its colour.
 */
#ifndef HEATMAP_H
#define HEATMAP_H

#include <stddef.h>
#include "report.h"
#include "sink.h"

struct heatmap;

/* Opens FILE for writing now, so a path that cannot be written fails before
 * tracing starts. NULL with err set on failure. */
struct heatmap *heatmap_open(const char *path, char *err, size_t errsz);

/* Adds the report of one interval as a column. Returns 0 or -ENOMEM. */
int heatmap_add(struct heatmap *h, const struct report *r);

/* Writes the SVG and frees h. Returns 0, or -1 when writing failed. */
int heatmap_close(struct heatmap *h);

/* The SVG of the columns so far, to out (heatmap_close writes it). */
int heatmap_write_svg(const struct heatmap *h, FILE *out);

/* The heat map as a sink of the run: a column per report, the SVG written
 * when the sink is closed (which frees h). */
void heatmap_sink_open(struct sink *s, struct heatmap *h);

#endif /* HEATMAP_H */
