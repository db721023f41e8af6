/* SPDX-License-Identifier: GPL-2.0 */
/* One report: the cells of an interval (or of the whole run) and what was
 * skipped, independent of how it is printed. */
#ifndef REPORT_H
#define REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "hist.h"
#include "opts.h"
#include "planner.h"

struct report {
	struct timespec wall;   /* when it was taken (CLOCK_REALTIME) */
	double interval_s;      /* the time it covers */
	cell_stats cells[NR_LAYERS][NR_OPS];
	uint64_t dropped;       /* events that could not be recorded */
	const struct plan *plan;
};

/* Value in the unit, for printing. */
double ns_to_unit(uint64_t ns, enum unit unit);

/* "2026-11-22T07:50:01.123Z" */
void format_iso8601(const struct timespec *ts, char *buf, size_t sz);

/* Text: a log2 histogram per non-empty cell, then the summary table. */
void report_text(FILE *out, const struct report *r, enum unit unit);

/* Lines naming each skipped cell of the plan, for stderr in text mode. */
void report_skipped_text(FILE *out, const struct plan *plan);

/* JSON: one object on one line (NDJSON). Returns 0 or -1. */
int report_json(FILE *out, const struct report *r);

#endif /* REPORT_H */
