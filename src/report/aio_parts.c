// SPDX-License-Identifier: GPL-2.0
#include "aio_parts.h"
#include "layers.h"
#include "planner.h"

static const char *const part_names[NR_AIO_PARTS] = {
#define AIO_PART(id, name) [id] = #name,
#include "cells.def"
};

const char *aio_part_name(unsigned int part)
{
	return part < NR_AIO_PARTS ? part_names[part] : "?";
}

bool aio_part_shown(const struct plan *plan, unsigned int part)
{
	if (part >= NR_AIO_PARTS)
		return false;
	return (part != AIO_PART_WORKER_QUEUED && part != AIO_PART_WORKER) ||
	       (plan && plan->aio_worker);
}

void aio_split_diff(struct aio_split *d, const struct aio_split *cur, const struct aio_split *prev)
{
	for (unsigned int op = 0; op < NR_AIO_OPS; op++) {
		const struct aio_totals *c = &cur->ops[op], *p = &prev->ops[op];
		struct aio_totals *t = &d->ops[op];

		t->count = c->count - p->count;
		t->total_ns = c->total_ns - p->total_ns;
		t->inline_count = c->inline_count - p->inline_count;
		t->blk_requests = c->blk_requests - p->blk_requests;
		t->blk_flushes = c->blk_flushes - p->blk_flushes;
		t->blk_bytes = c->blk_bytes - p->blk_bytes;
		t->blk_ns = c->blk_ns - p->blk_ns;
		cell_diff_parts(d->parts[op], cur->parts[op], prev->parts[op], NR_AIO_PARTS,
				t->count);
	}
}

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

json_object *aio_split_json(const struct aio_split *s, const struct plan *plan)
{
	json_object *all = json_object_new_array();

	for (unsigned int op = 0; op < NR_AIO_OPS; op++) {
		const struct aio_totals *t = &s->ops[op];
		json_object *o, *parts;

		if (!t->count)
			continue;
		o = json_object_new_object();
		parts = json_object_new_array();
		json_object_object_add(o, "op", json_object_new_string(op_name(LAYER_AIO, op)));
		add_u64(o, "count", t->count);
		add_u64(o, "total_ns", t->total_ns);
		add_u64(o, "inline", t->inline_count);
		if (plan->aio_blk) {
			add_u64(o, "blk_requests", t->blk_requests);
			add_u64(o, "blk_flushes", t->blk_flushes);
			add_u64(o, "blk_bytes", t->blk_bytes);
			add_u64(o, "blk_ns", t->blk_ns);
		}
		for (unsigned int p = 0; p < NR_AIO_PARTS; p++) {
			const struct cell_hist *h = &s->parts[op][p];
			json_object *j;

			if (!aio_part_shown(plan, p))
				continue;
			j = json_object_new_object();
			json_object_object_add(j, "part", json_object_new_string(aio_part_name(p)));
			add_u64(j, "sum_ns", h->sum_ns);
			add_u64(j, "p50_ns", cell_percentile(h, 50));
			add_u64(j, "p90_ns", cell_percentile(h, 90));
			add_u64(j, "p99_ns", cell_percentile(h, 99));
			json_object_array_add(parts, j);
		}
		json_object_object_add(o, "parts", parts);
		json_object_array_add(all, o);
	}
	return all;
}
