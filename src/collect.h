/* SPDX-License-Identifier: GPL-2.0 */
/* Reads the kernel's maps into a report-ready snapshot. Never clears a map:
 * intervals are differences of snapshots. */
#ifndef COLLECT_H
#define COLLECT_H

#include <stdint.h>
#include "attach.h"
#include "hist.h"
#include "breakdown.h"
#include "stats.h"

struct snapshot {
	struct cell_hist cells[NR_LAYERS][NR_OPS];
	uint64_t drops[NR_DROP_REASONS];
	struct breakdown_set breakdowns; /* sorted by key */
	struct self_stats stats; /* with --stats */
};

int snapshot_take(struct tracer *t, struct snapshot *snap);
void snapshot_free(struct snapshot *snap);

#endif /* COLLECT_H */
