/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output sinks: where reports go. One small interface, one implementation
 * per format (text, JSON), chosen once when the session starts.
 * sink_write() drives a report through it:
 *
 *   report_begin, cell (every cell the user asked for, traced or skipped,
 *   in layer/op order), cells_end, calls (where the time of calls went,
 *   when they are split), breakdown_rows (with -P/-D/-F/-G), stats (with
 *   --stats), report_end
 *
 * A sink leaves out the calls it has no use for (NULL). The other outputs
 * are not reports of intervals and do not go through sink_ops: Prometheus
 * text is rendered from a report by prom.c (metrics.c serves or writes
 * it), and single calls go from the ring buffer to their event lines and
 * trace file through events.c.
 */
#ifndef SINK_H
#define SINK_H

#include <stdio.h>
#include "report.h"

struct sink;

struct sink_ops {
	void (*report_begin)(struct sink *s, const struct report *r);
	void (*cell)(struct sink *s, const struct report *r, unsigned int layer, unsigned int op);
	void (*cells_end)(struct sink *s, const struct report *r);
	void (*calls)(struct sink *s, const struct report *r);
	void (*breakdown_rows)(struct sink *s, const struct report *r);
	void (*stats)(struct sink *s, const struct report *r);
	/* Returns 0, or -1 when the output failed (a closed pipe, a full disk). */
	int (*report_end)(struct sink *s, const struct report *r);
	/* Frees what the sink holds; the stream is the caller's. */
	void (*close)(struct sink *s);
};

struct sink {
	const struct sink_ops *ops;
	FILE *out;
	enum unit unit; /* text: the unit of times */
	void *state;	/* the writer's own */
};

/* The text report: histograms, a summary table, breakdowns, stats. */
int sink_text_open(struct sink *s, FILE *out, enum unit unit);

/* One JSON object per report, on one line (NDJSON). */
int sink_json_open(struct sink *s, FILE *out);

/* Writes one report through the sink. Returns 0 or -1 (output failed). */
int sink_write(struct sink *s, const struct report *r);

void sink_close(struct sink *s);

#endif /* SINK_H */
