// SPDX-License-Identifier: GPL-2.0
/*
 * The bio stack (-D with bio): levels from the remap keys of the
 * breakdowns, and a device's own time as its bios' time less that of the
 * bios it sent below.
 */
#include "unit.h"
#include "bio_stack.h"

#define DM0 KDEV_MAKE(253, 0)
#define VDA KDEV_MAKE(254, 0)

static struct breakdown_entry entry(__u32 idx, __u32 dev, __u32 upper, uint64_t count, uint64_t sum)
{
	struct breakdown_entry e = { .key = { .cell_idx = idx, .dev = dev, .flags = upper } };

	e.cell.count = count;
	e.cell.sum_ns = sum;
	return e;
}

Test(bio_stack, own_time_is_the_time_not_spent_below)
{
	struct breakdown_entry v[] = {
		/* dm-0 (delay): 50 reads of 5.4 ms; vda: 50 of 0.4 ms, all from dm-0,
		 * and 10 of its own (not remapped) that are not dm-0's. */
		entry(CELL_INDEX(LAYER_BIO, BLKOP_READ), DM0, 0, 50, 50 * 5400000ULL),
		entry(CELL_INDEX(LAYER_BIO, BLKOP_READ), VDA, 0, 60, 60 * 400000ULL),
		entry(BIO_EDGE_INDEX(BLKOP_READ), VDA, DM0, 50, 50 * 400000ULL),
		/* writes: nothing sent below yet (in flight): no level */
		entry(CELL_INDEX(LAYER_BIO, BLKOP_WRITE), DM0, 0, 3, 3000),
	};
	struct breakdown_set set = { v, sizeof(v) / sizeof(v[0]) };
	struct plan plan = { 0 };
	struct config cfg = { 0 };
	struct report r = { .plan = &plan, .cfg = &cfg, .breakdowns = &set };
	struct bio_level lv[MAX_BIO_LEVELS];
	size_t n;

	plan.cells[LAYER_BIO][0].src = METHOD_TP_BTF;
	cr_assert_eq(bio_stack(&r, lv, MAX_BIO_LEVELS), 0, "no levels without -D");
	cfg.per_disk = true;
	n = bio_stack(&r, lv, MAX_BIO_LEVELS);
	cr_assert_eq(n, 1);
	cr_assert_eq(lv[0].op, BLKOP_READ);
	cr_assert_eq(lv[0].upper, DM0);
	cr_assert_eq(lv[0].lower, VDA);
	cr_assert_eq(lv[0].upper_count, 50);
	cr_assert_eq(lv[0].below->count, 50);
	cr_assert_eq(lv[0].own_ns, 50 * 5000000ULL, "own %llu", (unsigned long long)lv[0].own_ns);
	/* Never below zero: bios below that outlive the report's edge. */
	v[2].cell.sum_ns = 50 * 6000000ULL;
	n = bio_stack(&r, lv, MAX_BIO_LEVELS);
	cr_assert_eq(lv[0].own_ns, 0);
	plan.cells[LAYER_BIO][0].src = METHOD_NONE;
	cr_assert_eq(bio_stack(&r, lv, MAX_BIO_LEVELS), 0, "no levels without bio");
}
