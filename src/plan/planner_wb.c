// SPDX-License-Identifier: GPL-2.0
/*
 * The planner's part for written-back requests charged to their dirtiers
 * (bpf/writeback.bpf.c): writeback:writeback_dirty_folio records who
 * dirtied each folio, and the blk layer's completion looks the pages of
 * each write request up. It runs only where a report asks who: without a
 * task filter, -P, -G or --file, nobody is charged and nothing is paid.
 */
#include <linux/types.h>
#include "planner.h"

void plan_wb(const struct kcaps *caps, const struct config *cfg, struct plan *plan)
{
	bool who = cfg->nr_pids || cfg->command || cfg->tid || cfg->comm || cfg->cgroup ||
		   cfg->per_process || cfg->per_cgroup || cfg->nr_files;

	plan->wb = false;
	if (!cfg->writeback)
		plan->wb_not = "--no-writeback";
	else if (plan->cells[LAYER_BLK][BLKOP_WRITE].src == METHOD_NONE)
		plan->wb_not = "the blk layer is not traced";
	else if (!who)
		plan->wb_not = "no task filter, -P, -G or --file: nobody to charge";
	else if (plan->blk_stamped)
		plan->wb_not = "the blk layer runs one program per request";
	else if (!caps->tracepoint_exists(caps->ctx, "writeback", "writeback_dirty_folio"))
		plan->wb_not = "no writeback:writeback_dirty_folio (Linux 5.17+)";
	else
		plan->wb_not = NULL;
	plan->wb = !plan->wb_not;
}

void plan_wb_print(const struct plan *plan, FILE *out)
{
	fprintf(out, "%-8s %-8s %-10s ", "blk", "dirtier",
		!plan->wb ? "-" : plan->btf ? "tp_btf" : "raw_tp");
	if (plan->wb)
		fprintf(out, "writeback:writeback_dirty_folio, the pages of each write request at "
			     "its completion\n");
	else
		fprintf(out, "skipped: %s\n", plan->wb_not);
}
