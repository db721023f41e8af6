/* SPDX-License-Identifier: GPL-2.0 */
/* What the kernel's maps held at one instant, summed over CPUs. Reports are
 * differences of two snapshots. */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stdint.h>
#include "breakdown.h"
#include "hist.h"
#include "pattern_report.h"
#include "stats.h"
#include "uring_parts.h"
#include "writeback.h"
#include "aio_parts.h"

struct snapshot {
	struct cell_hist cells[NR_LAYERS][NR_OPS];
	uint64_t drops[NR_DROP_REASONS];
	struct breakdown_set breakdowns; /* sorted by key */
	struct self_stats stats;	 /* with --stats */
	/* Calls of the root layer split into parts (bpf/call_parts.h). */
	struct call_totals calls[NR_FS_OPS];
	struct cell_hist parts[NR_FS_OPS][NR_PARTS]; /* calls with the part > 0 */
	struct uring_split uring; /* io_uring requests split into parts */
	struct aio_split aio;	  /* aio requests split into parts */
	struct fault_totals faults[NR_FAULT_OPS]; /* major faults per op */
	struct cell_hist pages[NR_FS_OPS];	     /* calls that added pages */
	/* Calls the syscall and vfs layers left out: not on storage files. */
	uint64_t left_out[NR_LAYERS][NR_OPS][NR_FD_KINDS]; /* LAYER_LEAVES_OUT layers */
	struct wb_snapshot wb; /* written back for the dirtiers (plan->wb) */
	struct pattern_set patterns; /* --pattern, sorted by key */
};

#endif /* SNAPSHOT_H */
