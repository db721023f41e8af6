/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output sinks: where reports go. One small interface, one implementation
 * per output that takes every report (text, JSON, the live view, the heat
 * map), and one list of the sinks of a run (struct sinks) that each report
 * goes through. sink_write() drives a report through one sink:
 *
 *   report_begin, cell (every cell the user asked for, traced or skipped,
 *   in layer/op order), cells_end, calls (where the time of calls went,
 *   when they are split), breakdown_rows (with -P/-D/-F/-G), stats (with
 *   --stats), report_end
 *
 * A sink leaves out the calls it has no use for (NULL). Reports are taken
 * in one place (take.c). The other outputs are not reports of intervals
 * and are not sinks: Prometheus text is rendered from a report taken per
 * scrape by prom.c (metrics.c serves or writes it), and single calls go
 * from the ring buffer to their event lines and trace file (events.c).
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
	/* Finishes the output and frees what the sink holds; the stream is
	 * the caller's. Returns 0, or -1 when the output failed. */
	int (*close)(struct sink *s);
};

struct sink {
	const struct sink_ops *ops;
	const char *what; /* for messages: "the report", "the heat map" */
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

/* Returns 0, or -1 when the output failed (errno says why). */
int sink_close(struct sink *s);

/* The sinks of a run: every report goes through each, in order. */
#define MAX_SINKS 4
struct sinks {
	struct sink v[MAX_SINKS];
	unsigned int nr;
};

/* The next free sink of the list, for one of the *_open() functions. */
struct sink *sinks_add(struct sinks *l);

/*
 * Writes r through every sink, even after one failed. Returns 0, or -1
 * with *failed the first sink whose output failed (errno says why).
 */
int sinks_write(struct sinks *l, const struct report *r, const struct sink **failed);

/* Closes every sink, even after one failed. Returns 0, or -1 with the
 * first failed sink's `what` in what[] (errno says why). */
int sinks_close(struct sinks *l, char *what, size_t sz);

#endif /* SINK_H */
