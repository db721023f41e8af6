// SPDX-License-Identifier: GPL-2.0
/*
 * Written-back requests charged to their dirtiers: when the planner turns
 * it on, and the user-space arithmetic of its counts.
 */
#include "unit.h"
#include "writeback.h"

static struct fake_kernel fk;
static struct plan plan;
static struct config cfg;

static void plan_with(bool tp, bool per_process, const char *layers)
{
	fake_kernel_init(&fk, FAKE_TRACEPOINTS);
	if (tp)
		fake_add_tp(&fk, "writeback", "writeback_dirty_folio");
	unit_config(&cfg, layers, METHOD_NONE);
	cfg.writeback = true; /* the default of the command line */
	cfg.per_process = per_process;
	plan_build(&fk.caps, &cfg, &plan);
}

Test(writeback, planned_under_a_breakdown_by_process)
{
	plan_with(true, true, "syscall,blk");
	cr_assert(plan.wb, "%s", plan.wb_not ? plan.wb_not : "");
	cr_assert_null(plan.wb_not);
	cr_assert_not(plan.blk_stamped, "-P keys requests by their submitter");
}

Test(writeback, not_planned_with_no_writeback)
{
	fake_kernel_init(&fk, FAKE_TRACEPOINTS);
	fake_add_tp(&fk, "writeback", "writeback_dirty_folio");
	unit_config(&cfg, "blk", METHOD_NONE);
	cfg.per_process = true;
	cfg.writeback = false;
	plan_build(&fk.caps, &cfg, &plan);
	cr_assert_not(plan.wb);
	cr_assert_str_eq(plan.wb_not, "--no-writeback");
}

Test(writeback, not_planned_without_anyone_to_charge)
{
	plan_with(true, false, "syscall,blk");
	cr_assert_not(plan.wb);
	cr_assert_not_null(strstr(plan.wb_not, "nobody to charge"), "%s", plan.wb_not);
}

Test(writeback, not_planned_without_the_tracepoint)
{
	plan_with(false, true, "syscall,blk");
	cr_assert_not(plan.wb);
	cr_assert_not_null(strstr(plan.wb_not, "writeback_dirty_folio"), "%s", plan.wb_not);
}

Test(writeback, not_planned_without_blk)
{
	plan_with(true, true, "syscall");
	cr_assert_not(plan.wb);
	cr_assert_not_null(strstr(plan.wb_not, "blk layer is not traced"), "%s", plan.wb_not);
}

Test(writeback, a_task_filter_asks_who)
{
	fake_kernel_init(&fk, FAKE_TRACEPOINTS);
	fake_add_tp(&fk, "writeback", "writeback_dirty_folio");
	unit_config(&cfg, "blk", METHOD_NONE);
	cfg.writeback = true;
	cfg.nr_pids = 1;
	plan_build(&fk.caps, &cfg, &plan);
	cr_assert(plan.wb);
}

/* Entries leave by writing (freed) or eviction: the rest of the dirtied
 * that are not still in the map were evicted. */
Test(writeback, evicted_are_neither_freed_nor_present)
{
	struct wb_snapshot w = { 0 };

	w.counts[WBC_DIRTIED] = 1000;
	w.counts[WBC_FREED] = 700;
	w.present = 250;
	wb_count_evicted(&w);
	cr_assert_eq(w.evicted, 50);
	w.present = 400; /* read while the counts moved on: never negative */
	wb_count_evicted(&w);
	cr_assert_eq(w.evicted, 0);
}

Test(writeback, interval_differences_keep_the_map_figures)
{
	struct wb_snapshot prev = { 0 }, cur = { 0 }, out;

	prev.counts[WBC_BYTES] = 4096;
	cur.counts[WBC_BYTES] = 3 * 4096;
	cur.cells[BLKOP_WRITE].count = 3;
	cur.cells[BLKOP_WRITE].bytes = 3 * 4096;
	prev.cells[BLKOP_WRITE].count = 1;
	prev.cells[BLKOP_WRITE].bytes = 4096;
	cur.present = 7;
	cur.evicted = 2;
	wb_diff(&out, &cur, &prev);
	cr_assert_eq(out.counts[WBC_BYTES], 2 * 4096);
	cr_assert_eq(out.cells[BLKOP_WRITE].count, 2);
	cr_assert_eq(out.cells[BLKOP_WRITE].bytes, 2 * 4096);
	cr_assert_eq(out.present, 7);
	cr_assert_eq(out.evicted, 2);
}

Test(writeback, entries_say_how_they_came)
{
	struct breakdown_entry e = { 0 };

	e.key.cell_idx = CELL_INDEX(LAYER_BLK, BLKOP_WRITE);
	cr_assert_str_eq(wb_entry_how(&e), "submitted");
	e.key.flags = RQ_FLAG_WRITEBACK | RQ_FLAG_SYNC;
	cr_assert_str_eq(wb_entry_how(&e), "written back");
	cr_assert(wb_entry_written_back(&e));
	e.key.cell_idx = CELL_INDEX(LAYER_SYSCALL, FSOP_WRITE);
	cr_assert_str_eq(wb_entry_how(&e), "-");
	e.key.cell_idx = WB_AGE_DONE_INDEX;
	cr_assert_str_eq(wb_entry_how(&e), "-");
}
