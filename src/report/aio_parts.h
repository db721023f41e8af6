/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the time of Linux AIO requests goes (bpf/aio.bpf.c): per op the
 * requests, their total time, those completed inline (inside io_submit)
 * and their block requests, and per part (cells.def: submit, async,
 * worker-queued, worker) a histogram of its time per request. The parts of
 * every request add up to its latency, so per op they add up to the total.
 */
#ifndef AIO_PARTS_H
#define AIO_PARTS_H

#include <stdbool.h>
#include <json-c/json.h>
#include "hist.h"

struct aio_split {
	struct aio_totals ops[NR_AIO_OPS];
	/* Requests with the part > 0; aio_split_diff adds the rest as zeros. */
	struct cell_hist parts[NR_AIO_OPS][NR_AIO_PARTS];
};

struct plan;

const char *aio_part_name(unsigned int part);

/* Is the part measured by this plan (worker-queued needs aio_fsync_work)? */
bool aio_part_shown(const struct plan *plan, unsigned int part);

/* d = cur - prev, the requests where a part took no time added as zeros. */
void aio_split_diff(struct aio_split *d, const struct aio_split *cur, const struct aio_split *prev);

/* JSON: [{"op", "count", "total_ns", "inline", "parts": [{"part", "sum_ns",
 * "p50_ns", "p99_ns"}]}], the ops with requests; with plan->aio_blk also
 * "blk_requests", "blk_flushes", "blk_bytes", "blk_ns". */
json_object *aio_split_json(const struct aio_split *s, const struct plan *plan);

#endif /* AIO_PARTS_H */
