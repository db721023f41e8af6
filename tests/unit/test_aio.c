// SPDX-License-Identifier: GPL-2.0
/*
 * The aio layer (Linux native AIO): its ops, how the planner picks its
 * source on each kind of kernel and says what it cannot see, and the
 * parts of its requests in a report.
 */
#include <string.h>
#include "unit.h"
#include "aio_parts.h"
#include "layers.h"
#include "planner.h"

static struct fake_kernel fk;
static struct config cfg;
static struct plan plan;

static void aio_plan(enum fake_profile p, const char *layers, enum attach_method mode)
{
	fake_kernel_init(&fk, p);
	unit_config(&cfg, layers, mode);
	cfg.split_calls = true; /* the default of the command line */
	plan_build(&fk.caps, &cfg, &plan);
}

/* Every op of the layer has the same source and the same reason. */
static void expect_aio(enum attach_method src)
{
	const struct cell_plan *first = &plan.cells[LAYER_AIO][0];

	for (unsigned int op = 0; op < NR_AIO_OPS; op++) {
		const struct cell_plan *cp = &plan.cells[LAYER_AIO][op];

		cr_assert(cp->wanted, "aio %s not wanted", op_name(LAYER_AIO, op));
		cr_assert_eq(cp->src, src, "aio %s: %s, want %s", op_name(LAYER_AIO, op),
			     method_name(cp->src), method_name(src));
		cr_assert_str_eq(cp->why, first->why);
		cr_assert_eq(cp->nr_targets, first->nr_targets);
	}
}

Test(aio, ops_and_names)
{
	static const char *const ops[] = { "read", "write", "fsync", "fdsync", "poll", "other" };

	cr_assert_eq(layer_by_name("aio"), LAYER_AIO);
	cr_assert_eq(layer_nr_ops(LAYER_AIO), ARRAY_SIZE(ops));
	for (unsigned int op = 0; op < ARRAY_SIZE(ops); op++)
		cr_assert_str_eq(op_name(LAYER_AIO, op), ops[op]);
	cr_assert(layer_has_requests(LAYER_AIO));
	cr_assert_str_eq(layer_count_noun(LAYER_AIO, 2), "requests");
	cr_assert_not(layer_is_device(LAYER_AIO));
	/* Not a layer of threads: its requests complete in any context. */
	cr_assert_geq(LAYER_AIO, NR_CALL_LAYERS);
	cr_assert(LAYER_LEAVES_OUT(LAYER_AIO));
	cr_assert_str_eq(aio_part_name(AIO_PART_SUBMIT), "submit");
	cr_assert_str_eq(aio_part_name(AIO_PART_WORKER_QUEUED), "worker-queued");
}

/* Debian's 6.1 and 6.12: fentry on io_submit_one, aio_complete and
 * aio_fsync_work. */
Test(aio, fentry_where_the_kernel_allows_it)
{
	const struct cell_plan *cp;

	aio_plan(FAKE_DEBIAN61, "aio", METHOD_NONE);
	expect_aio(METHOD_FENTRY);
	cp = &plan.cells[LAYER_AIO][0];
	cr_assert_eq(cp->nr_targets, 3);
	cr_assert_str_eq(cp->targets[0], "io_submit_one");
	cr_assert_str_eq(cp->targets[1], "aio_complete");
	cr_assert_str_eq(cp->targets[2], "aio_fsync_work");
	cr_assert_str_eq(cp->why, "");
	cr_assert(plan.aio_worker);
	cr_assert(plan.aio_parts);
	cr_assert_not(plan.aio_blk, "no blk layer: no block requests to tie");
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0);

	/* --no-parts: the requests are timed, not split. */
	cfg.split_calls = false;
	plan_build(&fk.caps, &cfg, &plan);
	expect_aio(METHOD_FENTRY);
	cr_assert_not(plan.aio_parts);
}

Test(aio, kprobes_where_fentry_is_refused)
{
	aio_plan(FAKE_KPROBES, "aio", METHOD_NONE);
	expect_aio(METHOD_KPROBE);
	cr_assert_not_null(strstr(plan.cells[LAYER_AIO][0].why, "fentry: " FAKE_FENTRY_WHY));
	aio_plan(FAKE_DEBIAN61, "aio", METHOD_KPROBE);
	expect_aio(METHOD_KPROBE);
}

/* Block requests belong to aio requests with the blk layer and the parts,
 * which needs each request's submitter: blk keys its programs by request. */
Test(aio, block_requests_tied_with_blk)
{
	aio_plan(FAKE_DEBIAN61, "aio,blk", METHOD_NONE);
	cr_assert(plan.aio_blk);
	cr_assert_not(plan.blk_stamped);
	cr_assert_not_null(strstr(plan.blk_timing, "aio"), "%s", plan.blk_timing);
	/* Before block_io_start the origin is insert, and a PREFLUSH bio is
	 * seen at block_getrq: an fdatasync's flush is its request's. */
	cr_assert_str_eq(plan.blk_origin, "block_rq_insert");
	cfg.split_calls = false;
	plan_build(&fk.caps, &cfg, &plan);
	cr_assert_not(plan.aio_blk);
}

/* The development host: no kprobes, fentry refused. The plan says so in
 * one line, -T aio is an error of one line with the remedy, and the
 * default run skips aio in the same line as vfs (the same reason). */
Test(aio, cannot_be_seen_without_fentry_or_kprobes)
{
	aio_plan(FAKE_TRACEPOINTS, "aio", METHOD_NONE);
	expect_aio(METHOD_NONE);
	expect_refused_in_one_line(&plan, &cfg, LAYER_AIO, "");

	aio_plan(FAKE_TRACEPOINTS, NULL, METHOD_NONE);
	cr_assert_str_eq(plan.cells[LAYER_AIO][0].why, plan.cells[LAYER_VFS][0].why);
	cr_assert_eq(plan_failed_layers(&plan, &cfg), 0, "the default mode skips, never fails");
}

Test(aio, no_tracepoint_source)
{
	aio_plan(FAKE_DEBIAN61, "aio", METHOD_TRACEPOINT);
	expect_aio(METHOD_NONE);
	cr_assert_not_null(strstr(plan.cells[LAYER_AIO][0].why, "no tracepoint marks an aio request"),
			   "%s", plan.cells[LAYER_AIO][0].why);
}

Test(aio, without_its_functions)
{
	fake_kernel_init(&fk, FAKE_DEBIAN61);
	fake_del_fn(&fk, "aio_fsync_work");
	unit_config(&cfg, "aio", METHOD_NONE);
	cfg.split_calls = true;
	plan_build(&fk.caps, &cfg, &plan);
	expect_aio(METHOD_FENTRY);
	cr_assert_not(plan.aio_worker);
	cr_assert_eq(plan.cells[LAYER_AIO][0].nr_targets, 2);
	cr_assert_not_null(strstr(plan.cells[LAYER_AIO][0].why, "aio_fsync_work"));

	/* CONFIG_AIO off: neither io_submit_one nor aio_complete. */
	fake_del_fn(&fk, "io_submit_one");
	fake_del_fn(&fk, "aio_complete");
	plan_build(&fk.caps, &cfg, &plan);
	expect_aio(METHOD_NONE);
	cr_assert_not_null(strstr(plan.cells[LAYER_AIO][0].why, "CONFIG_AIO"), "%s",
			   plan.cells[LAYER_AIO][0].why);
}

/* Requests where a part took no time count as zeros; the parts of each op
 * add up to its total. */
Test(aio, split_diff_pads_zeros)
{
	static struct aio_split cur, prev, d;
	uint64_t sum = 0;

	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	cur.ops[AOP_READ].count = 10;
	cur.ops[AOP_READ].inline_count = 4;
	/* 4 inline (all submit), 6 later (submit and async). */
	for (unsigned int i = 0; i < 10; i++)
		cell_record(&cur.parts[AOP_READ][AIO_PART_SUBMIT], 2000);
	for (unsigned int i = 0; i < 6; i++)
		cell_record(&cur.parts[AOP_READ][AIO_PART_ASYNC], 100000);
	cur.ops[AOP_READ].total_ns = 10 * 2000 + 6 * 100000;
	aio_split_diff(&d, &cur, &prev);
	cr_assert_eq(d.ops[AOP_READ].count, 10);
	cr_assert_eq(d.ops[AOP_READ].inline_count, 4);
	cr_assert_eq(d.parts[AOP_READ][AIO_PART_ASYNC].count, 10);
	cr_assert_eq(d.parts[AOP_READ][AIO_PART_ASYNC].buckets[0], 4);
	cr_assert_eq(d.parts[AOP_READ][AIO_PART_WORKER].count, 10);
	for (unsigned int p = 0; p < NR_AIO_PARTS; p++)
		sum += d.parts[AOP_READ][p].sum_ns;
	cr_assert_eq(sum, d.ops[AOP_READ].total_ns);
}
