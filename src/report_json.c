// SPDX-License-Identifier: GPL-2.0
/* The JSON report: one object per line, times always in nanoseconds.
 * json-c does the escaping and number formatting. */
#include <json-c/json.h>
#include "layers.h"
#include "report.h"

static json_object *cell_json(unsigned int layer, unsigned int op, const cell_stats *c)
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
				       hist_bucket_hi(i) == UINT64_MAX ?
					       NULL :
					       json_object_new_uint64(hist_bucket_hi(i)));
		json_object_object_add(b, "count", json_object_new_uint64(c->buckets[i]));
		json_object_array_add(buckets, b);
	}
	json_object_object_add(o, "buckets", buckets);
	return o;
}

int report_json(FILE *out, const struct report *r)
{
	json_object *root = json_object_new_object();
	json_object *cells = json_object_new_array(), *skipped = json_object_new_array();
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
				json_object_array_add(cells, cell_json(layer, op, &r->cells[layer][op]));
				continue;
			}
			json_object *s = json_object_new_object();

			json_object_object_add(s, "layer", json_object_new_string(layer_name(layer)));
			json_object_object_add(s, "op", json_object_new_string(op_name(layer, op)));
			json_object_object_add(s, "reason", json_object_new_string(cp->why));
			json_object_array_add(skipped, s);
		}
	}
	json_object_object_add(root, "cells", cells);
	json_object_object_add(root, "skipped", skipped);
	json_object_object_add(root, "dropped", json_object_new_uint64(r->dropped));
	ret = fprintf(out, "%s\n",
		      json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN)) < 0 ? -1 : 0;
	fflush(out);
	json_object_put(root);
	return ret;
}
