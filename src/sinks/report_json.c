// SPDX-License-Identifier: GPL-2.0
/* The JSON report: one object per line, times always in nanoseconds.
 * json-c does the escaping and number formatting. */
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "bio_stack.h"
#include "layers.h"
#include "pattern_out.h"
#include "report.h"
#include "sink.h"
#include "stacks_out.h"
#include "verdict.h"
#include "writeback.h"

static json_object *cell_json(unsigned int layer, unsigned int op, const struct cell_hist *c)
{
	json_object *o = json_object_new_object(), *buckets = json_object_new_array();

	json_object_object_add(o, "layer", json_object_new_string(layer_name(layer)));
	json_object_object_add(o, "op", json_object_new_string(op_name(layer, op)));
	json_object_object_add(o, "count", json_object_new_uint64(c->count));
	json_object_object_add(o, "sum_ns", json_object_new_uint64(c->sum_ns));
	json_object_object_add(o, "min_ns", json_object_new_uint64(c->count ? c->min_ns : 0));
	json_object_object_add(o, "max_ns", json_object_new_uint64(c->max_ns));
	/* Failed requests and bios, not in the figures above (bio, blk only). */
	if (layer_is_device(layer)) {
		json_object_object_add(o, "errors", json_object_new_uint64(c->errors));
		json_object_object_add(o, "error_sum_ns", json_object_new_uint64(c->error_sum_ns));
		json_object_object_add(o, "bytes", json_object_new_uint64(c->bytes));
	}
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

	if (r->cfg->per_process) {
		bool unknown = e->key.tgid == WB_UNKNOWN_TGID && wb_entry_written_back(e);

		/* Written-back pages of no known dirtier: pid null. */
		json_object_object_add(o, "pid", unknown ? NULL : json_object_new_int64(e->key.tgid));
		json_object_object_add(o, "comm", json_object_new_string(unknown ? "(unknown)" : e->comm));
	}
	if (wb_entry_written_back(e))
		json_object_object_add(o, "writeback", json_object_new_boolean(1));
	if (r->cfg->per_disk && layer_is_device(layer)) {
		char name[32], dev[32];

		report_disk_name(r, e->key.dev, name, sizeof(name), dev, sizeof(dev));
		/* blk names its disk "disk"; bio, a device of a stack, "device". */
		json_object_object_add(o, layer == LAYER_BIO ? "device" : "disk",
				       json_object_new_string(name));
		json_object_object_add(o, "dev", json_object_new_string(dev));
	}
	if (r->cfg->per_cgroup) {
		struct cgroup_ids ids;
		char id[32];
		const char *name = report_cgroup_name(e, id, sizeof(id), &ids);

		/* null, not "#ID": a reader tells a path from nothing known. */
		json_object_object_add(o, "cgroup",
				       e->cgroup ? json_object_new_string(name) : NULL);
		json_object_object_add(o, "cgroup_id", json_object_new_uint64(e->key.cgid));
		json_object_object_add(o, "container_id",
				       ids.container[0] ? json_object_new_string(ids.container)
							: NULL);
		json_object_object_add(o, "pod_uid",
				       ids.pod[0] ? json_object_new_string(ids.pod) : NULL);
	}
	if (r->cfg->per_flags && layer == LAYER_BLK) {
		json_object *flags = json_object_new_array();

		for (unsigned int i = 0; i < NR_RQ_FLAGS; i++)
			if (e->key.flags & (1U << i))
				json_object_array_add(flags,
						      json_object_new_string(rq_flag_name(i)));
		json_object_object_add(o, "flags", flags);
	}
	return o;
}

/* What a report is built into, between begin and end. */
struct json_state {
	json_object *root, *cells, *skipped, *totals, *stats;
};

/*
 * A measured duration in seconds to the millisecond, as a reader wants it:
 * 1.0017621699999999 -> 1.002, 1.0 -> 1.0 (our timers are not finer).
 */
static json_object *json_seconds(double secs)
{
	char buf[32];
	size_t len;

	snprintf(buf, sizeof(buf), "%.3f", secs);
	len = strlen(buf);
	while (len > 2 && buf[len - 1] == '0' && buf[len - 2] != '.')
		buf[--len] = '\0';
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/* [{"op", "count", "total_ns"}] of the ops with major faults; with
 * plan->fault_blk also "blk_requests", "blk_bytes": the block requests the
 * faulting threads started inside them. */
static json_object *fault_json(const struct report *r)
{
	json_object *a = json_object_new_array();

	for (unsigned int op = 0; op < NR_FAULT_OPS; op++) {
		const struct fault_totals *f = &r->faults[op];
		json_object *o;

		if (!f->count)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "op", json_object_new_string(op_name(LAYER_FAULT, op)));
		json_object_object_add(o, "count", json_object_new_uint64(f->count));
		json_object_object_add(o, "total_ns", json_object_new_uint64(f->total_ns));
		if (r->plan->fault_blk) {
			json_object_object_add(o, "blk_requests",
					       json_object_new_uint64(f->blk_requests));
			json_object_object_add(o, "blk_bytes", json_object_new_uint64(f->blk_bytes));
		}
		json_object_array_add(a, o);
	}
	return a;
}

static void json_begin(struct sink *s, const struct report *r)
{
	struct json_state *js = s->state;
	char when[40];

	js->root = json_object_new_object();
	js->cells = json_object_new_array();
	js->skipped = json_object_new_array();
	js->totals = r->breakdowns ? json_object_new_array() : NULL;
	format_iso8601(&r->wall, when, sizeof(when));
	json_object_object_add(js->root, "time", json_object_new_string(when));
	json_object_object_add(js->root, "interval_s", json_seconds(r->interval_s));
	if (!r->cfg->no_verdict) {
		char verdict[512];

		report_verdict(r, verdict, sizeof(verdict));
		json_object_object_add(js->root, "verdict", json_object_new_string(verdict));
	}
}

static void json_cell(struct sink *s, const struct report *r, unsigned int layer, unsigned int op)
{
	const struct cell_plan *cp = &r->plan->cells[layer][op];
	struct json_state *js = s->state;
	json_object *skip;

	if (cp->src == METHOD_NONE) {
		skip = json_object_new_object();
		json_object_object_add(skip, "layer", json_object_new_string(layer_name(layer)));
		json_object_object_add(skip, "op", json_object_new_string(op_name(layer, op)));
		json_object_object_add(skip, "reason", json_object_new_string(cp->why));
		json_object_array_add(js->skipped, skip);
		return;
	}
	if (js->totals) {
		json_object *t = cell_json(layer, op, &r->cells[layer][op]);

		pattern_json_cell(t, r, layer, op);
		json_object_array_add(js->totals, t);
	}
	if (!report_layer_broken_down(r, layer)) {
		json_object *c = cell_json(layer, op, &r->cells[layer][op]);

		pattern_json_cell(c, r, layer, op);
		json_object_array_add(js->cells, c);
		return;
	}
	for (size_t i = 0; i < r->breakdowns->n; i++)
		if (r->breakdowns->v[i].key.cell_idx == CELL_INDEX(layer, op))
			json_object_array_add(js->cells, breakdown_json(r, &r->breakdowns->v[i]));
}

/* One op's calls: "op", "root", "count", "total_ns" and "parts". */
static json_object *calls_json(const struct report *r, unsigned int op, uint64_t count,
			       uint64_t total_ns, const struct cell_hist parts[NR_PARTS])
{
	json_object *o = json_object_new_object(), *all = json_object_new_array();

	json_object_object_add(o, "op", json_object_new_string(op_name(LAYER_SYSCALL, op)));
	json_object_object_add(o, "root",
			       json_object_new_string(layer_name((unsigned int)r->split_layer)));
	json_object_object_add(o, "count", json_object_new_uint64(count));
	json_object_object_add(o, "total_ns", json_object_new_uint64(total_ns));
	for (unsigned int part = 0; part < NR_PARTS; part++) {
		json_object *p;

		if (!report_has_part(r, (int)op, part))
			continue;
		p = json_object_new_object();
		json_object_object_add(p, "part", json_object_new_string(part_name(part)));
		json_object_object_add(p, "sum_ns", json_object_new_uint64(parts[part].sum_ns));
		json_object_object_add(p, "p50_ns",
				       json_object_new_uint64(cell_percentile(&parts[part], 50)));
		json_object_object_add(p, "p99_ns",
				       json_object_new_uint64(cell_percentile(&parts[part], 99)));
		json_object_array_add(all, p);
	}
	json_object_object_add(o, "parts", all);
	return o;
}

/* The calls of an op by the pages each added to the page cache: every
 * call counted, a bucket holds lo <= pages < hi. */
static json_object *pages_hist_json(const struct cell_hist *h)
{
	json_object *o = json_object_new_object(), *buckets = json_object_new_array();

	json_object_object_add(o, "calls", json_object_new_uint64(h->count));
	json_object_object_add(o, "max", json_object_new_uint64(h->max_ns));
	json_object_object_add(o, "p50", json_object_new_uint64(cell_percentile(h, 50)));
	json_object_object_add(o, "p99", json_object_new_uint64(cell_percentile(h, 99)));
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		json_object *b;

		if (!h->buckets[i])
			continue;
		b = json_object_new_object();
		json_object_object_add(b, "lo", json_object_new_uint64(hist_bucket_lo(i)));
		json_object_object_add(b, "hi",
				       hist_bucket_hi(i) == UINT64_MAX
					   ? NULL
					   : json_object_new_uint64(hist_bucket_hi(i)));
		json_object_object_add(b, "count", json_object_new_uint64(h->buckets[i]));
		json_object_array_add(buckets, b);
	}
	json_object_object_add(o, "buckets", buckets);
	return o;
}

/*
 * What the calls of an op waited for and did to the page cache: the lock
 * part by kind, the journal commits' requests, the pages (null where not
 * traced).
 */
static void calls_why_json(json_object *o, const struct report *r, const struct call_totals *c,
			   bool per_process,
			   const struct cell_hist *pages)
{
	json_object *kinds = NULL, *journal = json_object_new_object(), *per_call = NULL;
	bool cache = r->plan->why[WHY_CACHE], ra = r->plan->why[WHY_READAHEAD];
	bool wb = r->plan->why[WHY_WRITEBACK];

	if (r->plan->why[WHY_LOCK]) {
		kinds = json_object_new_object();
		for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
			json_object_object_add(kinds, lock_kind_name(k),
					       json_object_new_uint64(c->lock_ns[k]));
	}
	json_object_object_add(o, "lock_ns_by_kind", kinds);
	json_object_object_add(journal, "requests", json_object_new_uint64(c->journal_requests));
	json_object_object_add(journal, "flushes", json_object_new_uint64(c->journal_flushes));
	json_object_object_add(journal, "bytes", json_object_new_uint64(c->journal_bytes));
	json_object_object_add(o, "journal_blk", r->plan->journal_blk ? journal : NULL);
	if (!r->plan->journal_blk)
		json_object_put(journal);
	json_object_object_add(o, "cache_miss_pages",
			       cache ? json_object_new_uint64(c->cache_miss_pages) : NULL);
	json_object_object_add(o, "readahead_pages",
			       ra ? json_object_new_uint64(c->readahead_pages) : NULL);
	json_object_object_add(o, "writeback_pages",
			       wb ? json_object_new_uint64(c->writeback_pages) : NULL);
	/* The throttled part's pauses (policy dirty), null where not traced
	 * and per process (not kept per process: the part's time is). */
	json_object_object_add(o, "throttle_pauses",
			       r->plan->why[WHY_THROTTLE] && !per_process
				   ? json_object_new_uint64(c->throttle_pauses)
				   : NULL);
	if (cache)
		per_call = pages_hist_json(pages);
	json_object_object_add(o, "cache_miss_pages_per_call", per_call);
}

/* "breakdown": each op of the root layer, its calls split into parts;
 * with -P also "breakdown_by_process", the same per process. */
static void json_calls(struct sink *s, const struct report *r)
{
	struct json_state *js = s->state;
	json_object *all = json_object_new_array(), *procs;
	struct cell_hist parts[NR_PARTS], pages;
	struct call_totals counts;

	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		const struct call_totals *c = &r->calls[op];
		json_object *o = calls_json(r, op, c->count, c->total_ns, r->parts[op]);

		json_object_object_add(o, "blk_requests", json_object_new_uint64(c->blk_requests));
		json_object_object_add(o, "blk_bytes", json_object_new_uint64(c->blk_bytes));
		calls_why_json(o, r, c, false, &r->pages[op]);
		json_object_array_add(all, o);
	}
	json_object_object_add(js->root, "breakdown", all);
	if (!r->breakdowns || !r->cfg->per_process)
		return;
	procs = json_object_new_array();
	for (size_t i = 0; i < r->breakdowns->n; i++) {
		const struct breakdown_entry *e = &r->breakdowns->v[i];
		unsigned int op;
		json_object *o;

		if (!report_is_process_calls(e) || !e->cell.count)
			continue;
		op = report_process_parts(r, e, parts);
		o = calls_json(r, op, e->cell.count, e->cell.sum_ns, parts);
		report_process_counts(r, e, &counts, &pages);
		calls_why_json(o, r, &counts, true, &pages);
		json_object_object_add(o, "pid", json_object_new_int64(e->key.tgid));
		json_object_object_add(o, "comm", json_object_new_string(e->comm));
		json_object_array_add(procs, o);
	}
	json_object_object_add(js->root, "breakdown_by_process", procs);
}

static void json_stats(struct sink *s, const struct report *r)
{
	struct json_state *js = s->state;
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
		json_object_object_add(o, "run_time_ns", json_object_new_uint64(c->run_time_ns));
		json_object_object_add(o, "recursion_misses",
				       json_object_new_uint64(c->recursion_misses));
		json_object_object_add(o, "events",
				       json_object_new_uint64(report_layer_events(r, l)));
		json_object_array_add(layers, o);
	}
	json_object_object_add(st, "layers", layers);
	json_object_object_add(st, "map_bytes", json_object_new_uint64(r->stats->map_bytes));
	if (r->stats->other.programs) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "programs",
				       json_object_new_int((int)r->stats->other.programs));
		json_object_object_add(o, "runs", json_object_new_uint64(r->stats->other.runs));
		json_object_object_add(o, "run_time_ns",
				       json_object_new_uint64(r->stats->other.run_time_ns));
		json_object_object_add(o, "recursion_misses",
				       json_object_new_uint64(r->stats->other.recursion_misses));
		json_object_object_add(st, "other", o);
	}
	js->stats = st; /* added last, in report_end */
}

/*
 * "left_out": calls of the outermost layer that leaves calls out (syscall,
 * else vfs), by kind of file, all ops; zeros when none does (--all-fds, or
 * neither layer traced). "left_out_by_op": each traced cell of both layers.
 */
static void json_left_out(json_object *root, const struct report *r)
{
	json_object *total = json_object_new_object(), *by_op = json_object_new_array();
	int top = report_left_out_layer(r);

	for (unsigned int kind = 0; kind < NR_FD_KINDS; kind++)
		json_object_object_add(total, fd_kind_name(kind),
				       json_object_new_uint64(top < 0 ? 0
								      : report_left_out_total(
									    r, (unsigned int)top, kind)));
	json_object_object_add(root, "left_out", total);
	for (unsigned int layer = 0; layer < NR_LAYERS; layer++) {
		if (!report_leaves_out(r, layer))
			continue;
		for (unsigned int op = 0; op < layer_nr_ops(layer); op++) {
			json_object *o;

			if (r->plan->cells[layer][op].src == METHOD_NONE)
				continue;
			o = json_object_new_object();
			json_object_object_add(o, "layer", json_object_new_string(layer_name(layer)));
			json_object_object_add(o, "op", json_object_new_string(op_name(layer, op)));
			for (unsigned int kind = 0; kind < NR_FD_KINDS; kind++)
				json_object_object_add(
					o, fd_kind_name(kind),
					json_object_new_uint64(r->left_out[layer][op][kind]));
			json_object_array_add(by_op, o);
		}
	}
	json_object_object_add(root, "left_out_by_op", by_op);
}

/* -D with bio: "bio_stack", a level per remapping device and op. */
static void json_bio_stack(json_object *root, const struct report *r)
{
	struct bio_level lv[MAX_BIO_LEVELS];
	size_t n = bio_stack(r, lv, MAX_BIO_LEVELS);
	json_object *a;

	if (!r->breakdowns || !r->cfg->per_disk || r->plan->cells[LAYER_BIO][0].src == METHOD_NONE)
		return;
	a = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		char up[32], low[32];

		r->disk_name ? r->disk_name(lv[i].upper, up, sizeof(up))
			     : format_kdev(lv[i].upper, up, sizeof(up));
		r->disk_name ? r->disk_name(lv[i].lower, low, sizeof(low))
			     : format_kdev(lv[i].lower, low, sizeof(low));
		json_object_object_add(o, "op", json_object_new_string(op_name(LAYER_BIO, lv[i].op)));
		json_object_object_add(o, "device", json_object_new_string(up));
		json_object_object_add(o, "below", json_object_new_string(low));
		json_object_object_add(o, "bios", json_object_new_uint64(lv[i].upper_count));
		json_object_object_add(o, "sum_ns", json_object_new_uint64(lv[i].upper_sum_ns));
		json_object_object_add(o, "own_ns", json_object_new_uint64(lv[i].own_ns));
		json_object_object_add(o, "below_bios", json_object_new_uint64(lv[i].below->count));
		json_object_object_add(o, "below_sum_ns",
				       json_object_new_uint64(lv[i].below->sum_ns));
		json_object_object_add(o, "below_p50_ns",
				       json_object_new_uint64(cell_percentile(lv[i].below, 50)));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "bio_stack", a);
}

static int json_end(struct sink *s, const struct report *r)
{
	struct json_state *js = s->state;
	json_object *drops = json_object_new_object();
	int ret;

	json_bio_stack(js->root, r);
	json_object_object_add(js->root, "cells", js->cells);
	if (js->totals)
		json_object_object_add(js->root, "totals", js->totals);
	json_object_object_add(js->root, "skipped", js->skipped);
	json_left_out(js->root, r);
	wb_json(js->root, r);
	pattern_json_rows(js->root, r);
	if (r->plan->uring_parts)
		json_object_object_add(js->root, "uring_breakdown", uring_split_json(&r->uring, r->plan));
	if (r->plan->aio_parts)
		json_object_object_add(js->root, "aio_breakdown", aio_split_json(&r->aio, r->plan));
	if (r->plan->cells[LAYER_FAULT][0].src != METHOD_NONE)
		json_object_object_add(js->root, "fault_breakdown", fault_json(r));
	json_object_object_add(js->root, "dropped", json_object_new_uint64(r->dropped));
	for (unsigned int i = 0; i < NR_DROP_REASONS; i++)
		json_object_object_add(drops, drop_reason_name(i),
				       json_object_new_uint64(r->drops[i]));
	json_object_object_add(js->root, "dropped_by_reason", drops);
	if (r->cfg->slower || r->cfg->trace) /* events: what the ring buffer lost */
		json_object_object_add(js->root, "lost",
				       json_object_new_uint64(r->drops[DROP_EVENT_LOST]));
	if (r->nr_gone) {
		json_object *gone = json_object_new_array();

		for (unsigned int i = 0; i < r->nr_gone; i++) {
			json_object *g = json_object_new_object();
			char dev[32];

			format_kdev(r->gone[i].dev, dev, sizeof(dev));
			json_object_object_add(g, "disk", json_object_new_string(r->gone[i].name));
			json_object_object_add(g, "dev", json_object_new_string(dev));
			json_object_array_add(gone, g);
		}
		json_object_object_add(js->root, "disks_gone", gone);
	}
	if (js->stats)
		json_object_object_add(js->root, "stats", js->stats);
	if (r->stacks)
		json_object_object_add(js->root, "stacks", stacks_json(r->stacks));
	ret = fprintf(s->out, "%s\n",
		      json_object_to_json_string_ext(js->root, JSON_C_TO_STRING_PLAIN)) < 0
		  ? -1
		  : 0;
	if (fflush(s->out) || ferror(s->out))
		ret = -1;
	json_object_put(js->root);
	*js = (struct json_state){ 0 };
	return ret;
}

static int json_close(struct sink *s)
{
	free(s->state);
	s->state = NULL;
	return 0;
}

static const struct sink_ops json_ops = {
	.report_begin = json_begin,
	.cell = json_cell,
	.calls = json_calls,
	.stats = json_stats,
	.report_end = json_end,
	.close = json_close,
};

int sink_json_open(struct sink *s, FILE *out)
{
	*s = (struct sink){ .ops = &json_ops, .what = "the report", .out = out };
	s->state = calloc(1, sizeof(struct json_state));
	return s->state ? 0 : -1;
}
