/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the time of io_uring requests goes (bpf/uring.bpf.c): per op the
 * requests and their total time, and per part (cells.def: inline,
 * io-wq-queued, io-wq, poll) a histogram of its time per request. The parts of every request
 * add up to its latency, so per op they add up to the total.
 */
#ifndef URING_PARTS_H
#define URING_PARTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "hist.h"
#include "opts.h"

struct uring_split {
	struct call_totals ops[NR_URING_OPS];
	/* Requests with the part > 0; report_build adds the rest as zeros. */
	struct cell_hist parts[NR_URING_OPS][NR_URING_PARTS];
};

struct plan;

const char *uring_part_name(unsigned int part);

/* Is the part measured by this plan (io-wq-queued needs its fentry)? */
bool uring_part_shown(const struct plan *plan, unsigned int part);

/* d = cur - prev, the requests where a part took no time added as zeros. */
void uring_split_diff(struct uring_split *d, const struct uring_split *cur,
		      const struct uring_split *prev);

/* JSON: [{"op", "count", "total_ns", "parts": [{"part", "sum_ns", "p50_ns",
 * "p99_ns"}]}], every op; with plan->uring_blk also "blk_requests" and
 * "blk_bytes". Parts: those uring_part_shown(). */
json_object *uring_split_json(const struct uring_split *s, const struct plan *plan);

#endif /* URING_PARTS_H */
