// SPDX-License-Identifier: GPL-2.0
/* The JSON report: one object per line, times always in nanoseconds.
 * json-c does the escaping and number formatting. */
#include <json-c/json.h>
#include "layers.h"
#include "report.h"

static json_object *cell_json(unsigned int layer, unsigned int op, const struct cell_hist *c)
{
	json_object *o = json_object_new_object(), *buckets = json_object_new_array();

	json_object_object_add(o, "layer", json_object_new_string(layer_name(layer)));
	json_object_object_add(o, "op", json_object_new_string(op_name(layer, op)));
	json_object_object_add(o, "count", json_object_new_uint64(c->count));
	json_object_object_add(o, "sum_ns", json_object_new_uint64(c->sum_ns));
	json_object_object_add(o, "min_ns", json_object_new_uint64(c->count ? c->min_ns : 0));
	json_object_object_add(o, "max_ns", json_object_new_uint64(c->max_ns));
	json_object_object_add(o, "p50_ns", json_object_new_uint64(cell_percentile(c, 50)));
	json_object_object_add(o, "p90_ns", json_object_new_uint64(cell_percentile(c, 90)));
	json_object_object_add(o, "p99_ns", json_object_new_uint64(cell_percentile(c, 99)));
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		json_object *b;

		if (!c->buckets[i])
			continue;
		b = json_object_new_object();
		json_object_object_add(b, "lo_ns", json_object_new_uint64(hist_bucket_lo(i)));
		/* hi_ns is exclusive; the last bucket has no upper bound. */
		json_object_object_add(b, "hi_ns",
				       hist_bucket_hi(i) == UINT64_MAX
					   ? NULL
					   : json_object_new_uint64(hist_bucket_hi(i)));
		json_object_object_add(b, "count", json_object_new_uint64(c->buckets[i]));
		json_object_array_add(buckets, b);
	}
	json_object_object_add(o, "buckets", buckets);
	return o;
}

static json_object *breakdown_json(const struct report *r, const struct breakdown_entry *e)
{
	unsigned int layer = CELL_LAYER(e->key.cell_idx), op = CELL_OP(e->key.cell_idx);
	json_object *o = cell_json(layer, op, &e->cell);

	if (r->by_pid) {
		json_object_object_add(o, "pid", json_object_new_int64(e->key.tgid));
		json_object_object_add(o, "comm", json_object_new_string(e->comm));
	}
	if (r->by_disk && layer == LAYER_BLK) {
		char name[32], dev[32];

		format_kdev(e->key.dev, dev, sizeof(dev));
		if (r->disk_name)
			r->disk_name(e->key.dev, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", dev);
		json_object_object_add(o, "disk", json_object_new_string(name));
		json_object_object_add(o, "dev", json_object_new_string(dev));
	}
	if (r->by_flags && layer == LAYER_BLK) {
		json_object *flags = json_object_new_array();

		for (unsigned int i = 0; i < NR_RQ_FLAGS; i++)
			if (e->key.flags & (1U << i))
				json_object_array_add(flags, json_object_new_string(rq_flag_name(i)));
		json_object_object_add(o, "flags", flags);
	}
	return o;
}

int report_json(FILE *out, const struct report *r)
{
	json_object *root = json_object_new_object();
	json_object *cells = json_object_new_array(), *skipped = json_object_new_array();
	json_object *totals = r->breakdowns ? json_object_new_array() : NULL, *drops;
	char when[40];
	int ret;

	format_iso8601(&r->wall, when, sizeof(when));
	json_object_object_add(root, "time", json_object_new_string(when));
	json_object_object_add(root, "interval_s", json_object_new_double(r->interval_s));
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			const struct cell_plan *cp = &r->plan->cells[layer][op];

			if (!cp->wanted)
				continue;
			if (cp->src != SRC_NONE) {
				if (totals)
					json_object_array_add(
					    totals, cell_json(layer, op, &r->cells[layer][op]));
				if (!report_layer_broken_down(r, layer)) {
					json_object_array_add(
					    cells, cell_json(layer, op, &r->cells[layer][op]));
					continue;
				}
				for (size_t i = 0; i < r->breakdowns->n; i++)
					if (r->breakdowns->v[i].key.cell_idx == CELL_INDEX(layer, op))
						json_object_array_add(
						    cells, breakdown_json(r, &r->breakdowns->v[i]));
				continue;
			}
			json_object *s = json_object_new_object();

			json_object_object_add(s, "layer",
					       json_object_new_string(layer_name(layer)));
			json_object_object_add(s, "op", json_object_new_string(op_name(layer, op)));
			json_object_object_add(s, "reason", json_object_new_string(cp->why));
			json_object_array_add(skipped, s);
		}
	}
	json_object_object_add(root, "cells", cells);
	if (totals)
		json_object_object_add(root, "totals", totals);
	json_object_object_add(root, "skipped", skipped);
	json_object_object_add(root, "dropped", json_object_new_uint64(r->dropped));
	drops = json_object_new_object();
	for (unsigned int i = 0; i < NR_DROP_REASONS; i++)
		json_object_object_add(drops, drop_reason_name(i),
				       json_object_new_uint64(r->drops[i]));
	json_object_object_add(root, "dropped_by_reason", drops);
	if (r->stats) {
		json_object *st = json_object_new_object(), *layers = json_object_new_array();

		for (unsigned int l = 0; l < NR_LAYERS; l++) {
			const struct layer_cost *c = &r->stats->layers[l];
			json_object *o;

			if (!c->programs)
				continue;
			o = json_object_new_object();
			json_object_object_add(o, "layer", json_object_new_string(layer_name(l)));
			json_object_object_add(o, "programs", json_object_new_int(c->programs));
			json_object_object_add(o, "runs", json_object_new_uint64(c->runs));
			json_object_object_add(o, "run_time_ns",
					       json_object_new_uint64(c->run_time_ns));
			json_object_object_add(o, "events",
					       json_object_new_uint64(report_layer_events(r, l)));
			json_object_array_add(layers, o);
		}
		json_object_object_add(st, "layers", layers);
		json_object_object_add(st, "map_bytes",
				       json_object_new_uint64(r->stats->map_bytes));
		json_object_object_add(root, "stats", st);
	}
	ret = fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN)) < 0
		  ? -1
		  : 0;
	fflush(out);
	json_object_put(root);
	return ret;
}
