/* SPDX-License-Identifier: GPL-2.0 */
/* Reads the kernel's per-CPU cells into a report-ready snapshot. Never
 * clears a map: intervals are differences of snapshots. */
#ifndef COLLECT_H
#define COLLECT_H

#include <stdint.h>
#include "attach.h"
#include "hist.h"

struct snapshot {
	cell_stats cells[NR_LAYERS][NR_OPS];
	uint64_t dropped;
};

int snapshot_take(struct tracer *t, struct snapshot *snap);

#endif /* COLLECT_H */
