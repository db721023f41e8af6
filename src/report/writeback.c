// SPDX-License-Identifier: GPL-2.0
/*
 * Written-back requests charged to the tasks that dirtied their pages: the
 * counts of bpf/writeback.bpf.c, by interval, and their text and JSON.
 */
#include <string.h>
#include <json-c/json.h>
#include "report.h"
#include "layers.h"
#include "writeback.h"

void wb_diff(struct wb_snapshot *out, const struct wb_snapshot *cur,
	     const struct wb_snapshot *prev)
{
	for (unsigned int i = 0; i < NR_WB_COUNTS; i++)
		out->counts[i] = cur->counts[i] - prev->counts[i];
	for (unsigned int op = 0; op < NR_BLK_OPS; op++)
		cell_diff(&out->cells[op], &cur->cells[op], &prev->cells[op]);
	for (unsigned int a = 0; a < NR_WB_AGES; a++)
		cell_diff(&out->ages[a], &cur->ages[a], &prev->ages[a]);
	out->present = cur->present;
	out->evicted = cur->evicted;
}

/*
 * An entry leaves the map when the last page of its folio is written
 * (freed), or when the full map makes room for a new one (evicted): the
 * kernel does not say which, so the evicted are what is neither freed
 * nor still there. A folio truncated while dirty is never written: its
 * entry stays until the map evicts it.
 */
void wb_count_evicted(struct wb_snapshot *cur)
{
	uint64_t gone = cur->counts[WBC_DIRTIED] - cur->counts[WBC_FREED];

	cur->evicted = gone > cur->present ? gone - cur->present : 0;
}

bool wb_entry_written_back(const struct breakdown_entry *e)
{
	return CELL_LAYER(e->key.cell_idx) == LAYER_BLK && (e->key.flags & RQ_FLAG_WRITEBACK);
}

const char *wb_entry_how(const struct breakdown_entry *e)
{
	if (e->key.cell_idx >= NR_CELLS || CELL_LAYER(e->key.cell_idx) != LAYER_BLK)
		return "-";
	return wb_entry_written_back(e) ? "written back" : "submitted";
}

static double in(uint64_t ns, const struct report *r)
{
	return ns_to_unit(ns, r->cfg->unit);
}

/* "COUNT AVG P50 P99 MAX" of a histogram, in the report's unit. */
static void text_figures(FILE *out, const struct cell_hist *c, const struct report *r)
{
	fprintf(out, " %10llu %12.2f %12.2f %12.2f %12.2f", (unsigned long long)c->count,
		in(c->count ? c->sum_ns / c->count : 0, r), in(cell_percentile(c, 50), r),
		in(cell_percentile(c, 99), r), in(c->max_ns, r));
}

static void text_age_rows(FILE *out, const struct report *r)
{
	char comm[COMM_LEN + 1];

	if (!r->breakdowns)
		return;
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];

		if (e->key.cell_idx != WB_AGE_SUBMIT_INDEX && e->key.cell_idx != WB_AGE_DONE_INDEX)
			continue;
		if (!e->cell.count)
			continue;
		snprintf(comm, sizeof(comm), "%s", e->comm[0] ? e->comm : "-");
		for (char *p = comm; *p; p++)
			if (*p < ' ' || *p == 0x7f)
				*p = '?';
		fprintf(out, "%-13s",
			e->key.cell_idx == WB_AGE_SUBMIT_INDEX ? "to submit" : "to complete");
		text_figures(out, &e->cell, r);
		if (r->cfg->per_process)
			fprintf(out, " %8u %s", e->key.tgid, comm);
		if (r->cfg->per_disk) {
			char disk[32];

			if (r->disk_name)
				r->disk_name(e->key.dev, disk, sizeof(disk));
			else
				format_kdev(e->key.dev, disk, sizeof(disk));
			fprintf(out, " %s", disk);
		}
		if (r->cfg->per_cgroup) {
			struct cgroup_ids ids;
			char id[32];
			const char *name = report_cgroup_name(e, id, sizeof(id), &ids);

			fprintf(out, " %s", name ? name : "-");
		}
		fputc('\n', out);
	}
}

void wb_text(FILE *out, const struct report *r)
{
	const struct wb_snapshot *w = &r->wb;
	const char *u = unit_name(r->cfg->unit);

	if (!r->plan->wb)
		return;
	/* Nothing dirtied, nothing written back: one line, not an empty table. */
	if (!w->counts[WBC_DIRTIED] && !w->counts[WBC_REQUESTS] &&
	    !w->counts[WBC_UNKNOWN_REQUESTS]) {
		fprintf(out, "\n(written back for the traced processes: nothing; no folio dirtied)\n");
		return;
	}
	fprintf(out,
		"\nWritten back for the traced processes: write requests a flusher or a sync\n"
		"submitted for the pages they dirtied\n%-13s %10s %12s %12s %12s %12s %14s\n",
		"OP", "COUNT", "AVG", "P50", "P99", "MAX", "BYTES");
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		const struct cell_hist *c = &w->cells[op];

		if (!c->count && !c->errors)
			continue;
		fprintf(out, "%-13s", op_name(LAYER_BLK, op));
		text_figures(out, c, r);
		fprintf(out, " %14llu\n", (unsigned long long)c->bytes);
	}
	fprintf(out, "dirty age: from the first dirtying of a request's pages (%s)\n", u);
	for (unsigned int a = 0; a < NR_WB_AGES; a++) {
		if (!w->ages[a].count)
			continue;
		fprintf(out, "%-13s", a == WB_AGE_SUBMIT ? "to submit" : "to complete");
		text_figures(out, &w->ages[a], r);
		fputc('\n', out);
	}
	text_age_rows(out, r);
	/* A figure a line, so that the lines stay narrow. */
	fprintf(out,
		"(for the traced dirtiers: %llu bytes in %llu requests\n"
		" they submitted themselves: %llu bytes\n"
		" unknown dirtier: %llu bytes in %llu requests\n"
		" folios dirtied: %llu (%llu pages), evicted from the map: %llu",
		(unsigned long long)w->counts[WBC_BYTES], (unsigned long long)w->counts[WBC_REQUESTS],
		(unsigned long long)w->counts[WBC_SELF_BYTES],
		(unsigned long long)w->counts[WBC_UNKNOWN_BYTES],
		(unsigned long long)w->counts[WBC_UNKNOWN_REQUESTS],
		(unsigned long long)w->counts[WBC_DIRTIED],
		(unsigned long long)w->counts[WBC_DIRTIED_PAGES], (unsigned long long)w->evicted);
	if (w->counts[WBC_CUT_BYTES] || w->counts[WBC_CROWDED_BYTES])
		fprintf(out, "\n not walked: %llu bytes, more dirtiers than slots: %llu bytes",
			(unsigned long long)w->counts[WBC_CUT_BYTES],
			(unsigned long long)w->counts[WBC_CROWDED_BYTES]);
	fprintf(out, ")\n");
}

static json_object *hist_json(const struct cell_hist *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_uint64(c->count));
	json_object_object_add(o, "sum_ns", json_object_new_uint64(c->sum_ns));
	json_object_object_add(o, "max_ns", json_object_new_uint64(c->max_ns));
	json_object_object_add(o, "p50_ns", json_object_new_uint64(cell_percentile(c, 50)));
	json_object_object_add(o, "p99_ns", json_object_new_uint64(cell_percentile(c, 99)));
	return o;
}

void wb_json(struct json_object *root, const struct report *r)
{
	static const char *const names[NR_WB_COUNTS] = {
		[WBC_DIRTIED] = "dirtied_folios",
		[WBC_DIRTIED_PAGES] = "dirtied_pages",
		[WBC_REDIRTIED] = "redirtied_folios",
		[WBC_FREED] = "written_folios",
		[WBC_REQUESTS] = "requests",
		[WBC_BYTES] = "bytes",
		[WBC_SELF_BYTES] = "self_submitted_bytes",
		[WBC_UNKNOWN_REQUESTS] = "unknown_requests",
		[WBC_UNKNOWN_BYTES] = "unknown_bytes",
		[WBC_CUT_BYTES] = "unwalked_bytes",
		[WBC_CROWDED_BYTES] = "crowded_bytes",
		[WBC_OTHER_BYTES] = "not_page_cache_bytes",
	};
	const struct wb_snapshot *w = &r->wb;
	json_object *o, *cells;

	if (!r->plan->wb)
		return;
	o = json_object_new_object();
	for (unsigned int i = 0; i < NR_WB_COUNTS; i++)
		json_object_object_add(o, names[i], json_object_new_uint64(w->counts[i]));
	json_object_object_add(o, "evicted_folios", json_object_new_uint64(w->evicted));
	cells = json_object_new_array();
	for (unsigned int op = 0; op < NR_BLK_OPS; op++) {
		json_object *c;

		if (!w->cells[op].count && !w->cells[op].errors)
			continue;
		c = hist_json(&w->cells[op]);
		json_object_object_add(c, "layer", json_object_new_string("blk"));
		json_object_object_add(c, "op", json_object_new_string(op_name(LAYER_BLK, op)));
		json_object_object_add(c, "writeback", json_object_new_boolean(1));
		json_object_object_add(c, "errors", json_object_new_uint64(w->cells[op].errors));
		json_object_object_add(c, "bytes", json_object_new_uint64(w->cells[op].bytes));
		json_object_array_add(cells, c);
	}
	json_object_object_add(o, "cells", cells);
	json_object_object_add(o, "age_to_submit", hist_json(&w->ages[WB_AGE_SUBMIT]));
	json_object_object_add(o, "age_to_complete", hist_json(&w->ages[WB_AGE_DONE]));
	json_object_object_add(root, "writeback", o);
}
