/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Written-back requests charged to the tasks that dirtied their pages
 * (bpf/writeback.bpf.c): what the kernel counted, an interval's
 * difference, and how reports print it.
 */
#ifndef REPORT_WRITEBACK_H
#define REPORT_WRITEBACK_H

#include <stdint.h>
#include <stdio.h>
#include "hist.h"

struct wb_snapshot {
	uint64_t counts[NR_WB_COUNTS];	     /* enum wb_count */
	struct cell_hist cells[NR_BLK_OPS];  /* written back for the traced dirtiers */
	struct cell_hist ages[NR_WB_AGES];   /* dirty age, enum wb_age */
	/* Since the start, not per interval: entries of the dirtied map when
	 * read, and those the map dropped to make room (dirtied - freed -
	 * present). */
	uint64_t present;
	uint64_t evicted;
};

/* out = cur - prev; present and evicted are cur's. */
void wb_diff(struct wb_snapshot *out, const struct wb_snapshot *cur,
	     const struct wb_snapshot *prev);

/* evicted from cur's counts and present. */
void wb_count_evicted(struct wb_snapshot *cur);

struct report;
struct breakdown_entry;

/* Is e a cell of requests written back for its key (not submitted by it)? */
bool wb_entry_written_back(const struct breakdown_entry *e);

/* "written back" or "submitted" for a blk entry, "-" for other layers. */
const char *wb_entry_how(const struct breakdown_entry *e);

/* Text: the written-back requests, dirty age, unknown dirtiers, the map. */
void wb_text(FILE *out, const struct report *r);

/* JSON: the "writeback" member of a report object (json-c). */
struct json_object;
void wb_json(struct json_object *root, const struct report *r);

#endif /* REPORT_WRITEBACK_H */
