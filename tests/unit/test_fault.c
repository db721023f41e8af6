// SPDX-License-Identifier: GPL-2.0
/*
 * The fault layer (major page faults): its ops, and how the planner picks
 * its one pair of programs on each kind of kernel, or says in one line why
 * it cannot.
 */
#include <string.h>
#include "unit.h"
#include "layers.h"
#include "planner.h"

static struct fake_kernel fk;
static struct config cfg;
static struct plan plan;

/* The plan of -T LAYERS on a fake kernel; returns the fault layer's first
 * cell, after checking that every op shares it. */
static const struct cell_plan *fault_plan(enum fake_profile p, const char *layers,
					  enum attach_method mode, const char *del_fn)
{
	const struct cell_plan *first = &plan.cells[LAYER_FAULT][0];

	fake_kernel_init(&fk, p);
	if (del_fn)
		fake_del_fn(&fk, del_fn);
	unit_config(&cfg, layers, mode);
	cfg.split_calls = true;
	plan_build(&fk.caps, &cfg, &plan);
	for (unsigned int op = 1; op < NR_FAULT_OPS; op++) {
		cr_assert_eq(plan.cells[LAYER_FAULT][op].src, first->src);
		cr_assert_str_eq(plan.cells[LAYER_FAULT][op].why, first->why);
		cr_assert(plan.cells[LAYER_FAULT][op].wanted);
	}
	return first;
}

Test(fault, ops_and_names)
{
	static const char *const ops[] = { "file_read", "file_write", "swapin", "other" };

	cr_assert_eq(layer_by_name("fault"), LAYER_FAULT);
	cr_assert_eq(layer_nr_ops(LAYER_FAULT), ARRAY_SIZE(ops));
	for (unsigned int op = 0; op < ARRAY_SIZE(ops); op++)
		cr_assert_str_eq(op_name(LAYER_FAULT, op), ops[op]);
	cr_assert_str_eq(layer_count_noun(LAYER_FAULT, 1), "fault");
	cr_assert_str_eq(layer_count_noun(LAYER_FAULT, 3), "faults");
	/* A fault is its thread's, but no root of calls: the syscall layer
	 * stays the root when both are traced. */
	cr_assert_geq(LAYER_FAULT, NR_CALL_LAYERS);
	cr_assert_not(layer_is_device(LAYER_FAULT));
}

/* fentry where the kernel allows it, else kprobes; one function. */
Test(fault, fentry_else_kprobes_on_handle_mm_fault)
{
	static const struct {
		enum fake_profile p;
		enum attach_method mode, want;
	} rows[] = {
		{ FAKE_DEBIAN61, METHOD_NONE, METHOD_FENTRY },
		{ FAKE_DEBIAN61, METHOD_KPROBE, METHOD_KPROBE },
		{ FAKE_KPROBES, METHOD_NONE, METHOD_KPROBE },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct cell_plan *cp = fault_plan(rows[i].p, "fault", rows[i].mode, NULL);

		cr_assert_eq(cp->src, rows[i].want, "row %u: %s", i, method_name(cp->src));
		cr_assert_eq(cp->nr_targets, 1);
		cr_assert_str_eq(cp->targets[0], "handle_mm_fault");
		cr_assert_eq(cp->tgt_src[0], rows[i].want);
		cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);
	}
}

/* With blk, a request's submitter is needed where it starts, to tie it
 * to the fault of its thread; --no-parts unties them. */
Test(fault, block_requests_tied_with_blk)
{
	fault_plan(FAKE_DEBIAN61, "fault,blk", METHOD_NONE, NULL);
	cr_assert(plan.fault_blk);
	cr_assert_not(plan.blk_stamped);
	fault_plan(FAKE_DEBIAN61, "fault", METHOD_NONE, NULL);
	cr_assert_not(plan.fault_blk, "no blk layer: nothing to tie");
	unit_config(&cfg, "fault,blk", METHOD_NONE);
	cfg.split_calls = false;
	plan_build(&fk.caps, &cfg, &plan);
	cr_assert_not(plan.fault_blk);
}

/* No kprobes, fentry refused: one plan line that names both reasons, and
 * -T fault one error line with the remedy; the default mode skips it. */
Test(fault, one_line_without_fentry_or_kprobes)
{
	const struct cell_plan *cp = fault_plan(FAKE_TRACEPOINTS, "fault", METHOD_NONE, NULL);

	cr_assert_eq(cp->src, METHOD_NONE);
	expect_refused_in_one_line(&plan, &cfg, LAYER_FAULT, "needs fentry or kprobes: ");

	fault_plan(FAKE_TRACEPOINTS, NULL, METHOD_NONE, NULL);
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0, "the default mode skips, never fails");
}

Test(fault, no_tracepoint_source_and_no_function)
{
	const struct cell_plan *cp = fault_plan(FAKE_DEBIAN61, "fault", METHOD_TRACEPOINT, NULL);

	cr_assert_eq(cp->src, METHOD_NONE);
	cr_assert_not_null(strstr(cp->why, "no tracepoint marks a fault's end"), "%s", cp->why);
	cp = fault_plan(FAKE_DEBIAN61, "fault", METHOD_NONE, "handle_mm_fault");
	cr_assert_eq(cp->src, METHOD_NONE);
	cr_assert_not_null(strstr(cp->why, "no handle_mm_fault in this kernel"), "%s", cp->why);
}
