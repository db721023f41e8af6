// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include "layers.h"
#include "report.h"
#include "planner.h"
#include "uring_parts.h"

static const char *const part_names[NR_URING_PARTS] = {
#define URING_PART(id, name) [id] = #name,
#include "cells.def"
};

const char *uring_part_name(unsigned int part)
{
	return part < NR_URING_PARTS ? part_names[part] : "?";
}

bool uring_part_shown(const struct plan *plan, unsigned int part)
{
	if (part >= NR_URING_PARTS)
		return false;
	return part != URING_PART_IOWQ_QUEUED || (plan && plan->uring_iowq_run);
}

void uring_split_diff(struct uring_split *d, const struct uring_split *cur,
		      const struct uring_split *prev)
{
	for (unsigned int op = 0; op < NR_URING_OPS; op++) {
		struct call_totals *t = &d->ops[op];

		t->count = cur->ops[op].count - prev->ops[op].count;
		t->total_ns = cur->ops[op].total_ns - prev->ops[op].total_ns;
		t->blk_requests = cur->ops[op].blk_requests - prev->ops[op].blk_requests;
		t->blk_bytes = cur->ops[op].blk_bytes - prev->ops[op].blk_bytes;
		cell_diff_parts(d->parts[op], cur->parts[op], prev->parts[op], NR_URING_PARTS,
				t->count);
	}
}

json_object *uring_split_json(const struct uring_split *s, const struct plan *plan)
{
	json_object *all = json_object_new_array();

	for (unsigned int op = 0; op < NR_URING_OPS; op++) {
		json_object *o = json_object_new_object(), *parts = json_object_new_array();

		json_object_object_add(o, "op",
				       json_object_new_string(op_name(LAYER_IO_URING, op)));
		json_object_object_add(o, "count", json_object_new_uint64(s->ops[op].count));
		json_object_object_add(o, "total_ns", json_object_new_uint64(s->ops[op].total_ns));
		if (plan->uring_blk) {
			json_object_object_add(o, "blk_requests",
					       json_object_new_uint64(s->ops[op].blk_requests));
			json_object_object_add(o, "blk_bytes",
					       json_object_new_uint64(s->ops[op].blk_bytes));
		}
		for (unsigned int p = 0; p < NR_URING_PARTS; p++) {
			const struct cell_hist *h = &s->parts[op][p];
			json_object *j;

			if (!uring_part_shown(plan, p))
				continue;
			j = json_object_new_object();

			json_object_object_add(j, "part",
					       json_object_new_string(uring_part_name(p)));
			json_object_object_add(j, "sum_ns", json_object_new_uint64(h->sum_ns));
			json_object_object_add(j, "p50_ns",
					       json_object_new_uint64(cell_percentile(h, 50)));
			json_object_object_add(j, "p99_ns",
					       json_object_new_uint64(cell_percentile(h, 99)));
			json_object_array_add(parts, j);
		}
		json_object_object_add(o, "parts", parts);
		json_object_array_add(all, o);
	}
	return all;
}
