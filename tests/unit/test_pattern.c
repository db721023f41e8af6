// SPDX-License-Identifier: GPL-2.0
/*
 * Access patterns (--pattern) in user space: the interval difference key by
 * key, the sums per level and op, and what text, JSON and Prometheus print,
 * against figures worked out by hand from the entries the test makes.
 */
#include <string.h>
#include <json-c/json.h>
#include "unit.h"
#include "pattern_out.h"
#include "pattern_report.h"
#include "report.h"
#include "sink.h"

/* An entry with seq sequential accesses and rand random ones, all of size
 * bytes, the random ones gap bytes ahead (gap < 0: behind). */
static struct pattern_entry pentry(unsigned int level, unsigned int op, uint32_t tgid, uint64_t seq,
				   uint64_t rand, int64_t gap, uint64_t bytes)
{
	struct pattern_entry e = { .key = { .level = (__u8)level, .op = (__u8)op, .tgid = tgid } };
	uint64_t mag = gap < 0 ? (uint64_t)-gap : (uint64_t)gap;

	snprintf(e.comm, sizeof(e.comm), "p%u", tgid);
	e.h.seq = seq;
	e.h.rand = rand;
	e.h.bytes = (seq + rand) * bytes;
	e.h.size[hist_msb(bytes)] = seq + rand;
	if (rand && gap > 0)
		e.h.fwd[hist_msb(mag)] = rand;
	else if (rand)
		e.h.back[hist_msb(mag)] = rand;
	return e;
}

Test(pattern, diff_is_key_by_key_and_drops_idle_keys)
{
	struct pattern_entry cur_v[] = {
		pentry(PAT_CALL, FSOP_READ, 10, 100, 20, 8192, 4096),
		pentry(PAT_CALL, FSOP_READ, 20, 5, 0, 0, 4096), /* idle since prev */
		pentry(PAT_BLK, BLKOP_READ, 0, 30, 10, -65536, 131072),
	};
	struct pattern_entry prev_v[] = {
		pentry(PAT_CALL, FSOP_READ, 20, 5, 0, 0, 4096),
		pentry(PAT_CALL, FSOP_READ, 10, 40, 5, 8192, 4096),
	};
	struct pattern_set cur = { cur_v, 3 }, prev = { prev_v, 2 }, out;
	struct pattern_hist h;

	pattern_sort(&cur);
	pattern_sort(&prev);
	cr_assert_eq(pattern_diff(&out, &cur, &prev), 0);
	cr_assert_eq(out.n, 2, "the idle key is left out: %zu", out.n);
	cr_assert_eq(out.v[0].key.level, PAT_CALL, "call level first");
	cr_assert_eq(out.v[0].h.seq, 60);
	cr_assert_eq(out.v[0].h.rand, 15);
	cr_assert_eq(out.v[0].h.fwd[13], 15, "8 KiB ahead: slot 13");
	cr_assert_eq(out.v[0].h.size[12], 75, "4 KiB: slot 12");
	cr_assert_eq(out.v[1].h.back[16], 10, "64 KiB behind: slot 16");
	cr_assert_eq(pattern_total(&out, PAT_CALL, FSOP_READ, &h), 75);
	cr_assert_float_eq(pattern_seq_pct(&h), 80.0, 1e-9);
	cr_assert_eq(pattern_total(&out, PAT_CALL, FSOP_WRITE, &h), 0);
	cr_assert(pattern_broken_down(&out), "keys by process: broken down");
	pattern_free(&out);
}

Test(pattern, totals_sum_every_key_of_a_cell)
{
	struct pattern_entry v[] = {
		pentry(PAT_CALL, FSOP_WRITE, 1, 3, 1, 512, 512),
		pentry(PAT_CALL, FSOP_WRITE, 2, 7, 9, -4096, 8192),
		pentry(PAT_CALL, FSOP_READ, 1, 1000, 0, 0, 4096),
	};
	struct pattern_set set = { v, 3 };
	struct pattern_hist h;

	pattern_sort(&set);
	cr_assert_eq(pattern_total(&set, PAT_CALL, FSOP_WRITE, &h), 20);
	cr_assert_eq(h.seq, 10);
	cr_assert_eq(h.bytes, 4 * 512 + 16 * 8192);
	cr_assert_eq(h.fwd[9], 1);
	cr_assert_eq(h.back[12], 9);
	cr_assert_eq(h.size[9], 4);
	cr_assert_eq(h.size[13], 16);
}

Test(pattern, cells_with_a_pattern)
{
	unsigned int level, op;

	cr_assert(pattern_of_cell(LAYER_SYSCALL, FSOP_WRITE, &level, &op));
	cr_assert_eq(level, PAT_CALL);
	cr_assert_eq(op, FSOP_WRITE);
	cr_assert(pattern_of_cell(LAYER_BLK, BLKOP_READ, &level, &op));
	cr_assert_eq(level, PAT_BLK);
	cr_assert_not(pattern_of_cell(LAYER_SYSCALL, FSOP_OPEN, &level, &op));
	cr_assert_not(pattern_of_cell(LAYER_BLK, BLKOP_FLUSH, &level, &op));
	cr_assert_not(pattern_of_cell(LAYER_VFS, FSOP_READ, &level, &op));
}

/* A report of 98 sequential calls of 4 KiB and 2 random, and 61 sequential
 * requests of 128 KiB and 39 random, as report_build makes it. */
static void pattern_report(struct report *r, struct snapshot *cur, struct plan *plan,
			   struct config *cfg)
{
	static struct pattern_entry v[2];

	v[0] = pentry(PAT_CALL, FSOP_READ, 0, 98, 2, 1 << 20, 4096);
	v[1] = pentry(PAT_BLK, BLKOP_READ, 0, 61, 39, -(1 << 16), 131072);
	cur->patterns = (struct pattern_set){ v, 2 };
	cfg->pattern = true;
	plan->split_layer = -1;
	cr_assert_eq(report_build(r, cfg, plan, cur, NULL, 1.0, NULL), 0);
	cr_assert_not_null(r->patterns);
}

/* What pattern_text or pattern_prom (print) writes of that report, into m. */
static const char *rendered(struct membuf *m, void (*print)(FILE *, const struct report *))
{
	static struct snapshot cur;
	static struct plan plan;
	struct config cfg = { .unit = UNIT_NS };
	struct report r;

	pattern_report(&r, &cur, &plan, &cfg);
	print(membuf_open(m), &r);
	report_release(&r);
	return membuf_close(m);
}

Test(pattern, text_puts_both_levels_side_by_side)
{
	struct membuf m;
	const char *text = rendered(&m, pattern_text);

	cr_assert(strstr(text, "read: calls 98.0% sequential (100 calls); disk 61.0% sequential "
			       "(100 requests); as many requests as calls, scattered: fragmented "
			       "files, or other streams' requests in between (-P, --file)\n"),
		  "%s", text);
	cr_assert(strstr(text, "     1M -> 2M         : 2 "), "%s", text);
	cr_assert(strstr(text, "   -64K -> -128K      : 39 "), "%s", text);
	cr_assert(strstr(text, "   128K -> 256K       : 100 "), "%s", text);
	membuf_free(&m);
}

Test(pattern, json_object_per_cell_and_rows)
{
	static struct snapshot cur;
	static struct plan plan;
	struct config cfg = { .unit = UNIT_NS };
	json_object *o = json_object_new_object(), *p, *gaps, *g, *rows;
	struct report r;

	pattern_report(&r, &cur, &plan, &cfg);
	pattern_json_cell(o, &r, LAYER_BLK, BLKOP_READ);
	cr_assert(json_object_object_get_ex(o, "pattern", &p));
	cr_assert_eq(json_object_get_uint64(json_object_object_get(p, "sequential")), 61);
	cr_assert_eq(json_object_get_uint64(json_object_object_get(p, "random")), 39);
	cr_assert_eq(json_object_get_uint64(json_object_object_get(p, "bytes")), 100 * 131072);
	gaps = json_object_object_get(p, "gaps");
	cr_assert_eq(json_object_array_length(gaps), 1);
	g = json_object_array_get_idx(gaps, 0);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(g, "direction")),
			 "backward");
	cr_assert_eq(json_object_get_uint64(json_object_object_get(g, "lo_bytes")), 65536);
	cr_assert_eq(json_object_get_uint64(json_object_object_get(g, "hi_bytes")), 131071);
	/* A cell with no pattern (an open) gets no object. */
	json_object_object_del(o, "pattern");
	pattern_json_cell(o, &r, LAYER_SYSCALL, FSOP_OPEN);
	cr_assert_not(json_object_object_get_ex(o, "pattern", NULL));
	pattern_json_rows(o, &r);
	rows = json_object_object_get(o, "patterns");
	cr_assert_eq(json_object_array_length(rows), 2);
	json_object_put(o);
	report_release(&r);
}

Test(pattern, prometheus_counters_by_pattern)
{
	struct membuf m;
	const char *text = rendered(&m, pattern_prom);

	cr_assert(strstr(text, "iostackbreak_pattern_accesses_total{layer=\"syscall\",op=\"read\","
			       "pattern=\"sequential\"} 98\n"),
		  "%s", text);
	cr_assert(strstr(text, "iostackbreak_pattern_accesses_total{layer=\"blk\",op=\"read\","
			       "pattern=\"random\"} 39\n"),
		  "%s", text);
	cr_assert(strstr(text, "iostackbreak_pattern_bytes_total{layer=\"syscall\",op=\"read\"} "
			       "409600\n"),
		  "%s", text);
	membuf_free(&m);
}

/* Fewer, larger requests than calls: merged or read ahead, says the line. */
Test(pattern, side_by_side_says_merged)
{
	static struct snapshot cur;
	static struct plan plan;
	static struct pattern_entry v[2];
	struct config cfg = { .unit = UNIT_NS, .pattern = true, .nr_files = 1 };
	struct membuf m;
	struct report r;
	const char *text;

	v[0] = pentry(PAT_CALL, FSOP_READ, 0, 1000, 0, 0, 4096);
	v[1] = pentry(PAT_BLK, BLKOP_READ, 0, 30, 2, 1 << 20, 131072);
	cur.patterns = (struct pattern_set){ v, 2 };
	plan.split_layer = -1;
	cr_assert_eq(report_build(&r, &cfg, &plan, &cur, NULL, 1.0, NULL), 0);
	pattern_text(membuf_open(&m), &r);
	report_release(&r);
	text = membuf_close(&m);
	cr_assert(strstr(text, "read: file 100.0% sequential (1000 calls); disk 93.8% sequential "
			       "(32 requests); fewer, larger requests than calls: merged or read "
			       "ahead\n"),
		  "%s", text);
	membuf_free(&m);
}
