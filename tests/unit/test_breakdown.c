// SPDX-License-Identifier: GPL-2.0
/*
 * Breakdowns (-P, -D, -F, -G) and report assembly: the interval difference key
 * by key, the order rows are printed in and --top, the strings of flags and
 * devices, and the --stats difference, each against values worked out by
 * hand from the samples the test records.
 */
#include <string.h>
#include "unit.h"
#include "breakdown.h"
#include "layers.h"
#include "report.h"
#include "sink.h"

static struct breakdown_entry entry(unsigned int layer, unsigned int op, uint32_t tgid,
				    const char *comm, const uint64_t *ns, size_t n)
{
	struct breakdown_entry e = { .key = { .cell_idx = CELL_INDEX(layer, op), .tgid = tgid } };

	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	cell_from_samples(&e.cell, ns, n);
	return e;
}

/* The report as the text (json false) or JSON sink writes it, into m. */
static const char *render(struct membuf *m, const struct report *r, bool json)
{
	struct sink sink;

	if (json)
		sink_json_open(&sink, membuf_open(m));
	else
		sink_text_open(&sink, membuf_open(m), UNIT_NS);
	cr_assert_eq(sink_write(&sink, r), 0);
	sink_close(&sink);
	return membuf_close(m);
}

static const uint64_t a3[] = { 100, 200, 300 }, a5[] = { 100, 200, 300, 400, 500 };
static const uint64_t b1[] = { 7000 }, b4[] = { 7000, 8000, 9000, 10000 };

Test(breakdown, diff_is_key_by_key_and_drops_idle_keys)
{
	struct breakdown_entry cur_v[] = {
		entry(LAYER_SYSCALL, FSOP_READ, 10, "a", a5, 5), /* 3 before: 2 new */
		entry(LAYER_SYSCALL, FSOP_READ, 20, "b", b1, 1), /* idle since */
		entry(LAYER_SYSCALL, FSOP_READ, 30, "c", b4, 4), /* a new key */
	};
	struct breakdown_entry prev_v[] = {
		entry(LAYER_SYSCALL, FSOP_READ, 10, "a", a3, 3),
		entry(LAYER_SYSCALL, FSOP_READ, 20, "b", b1, 1),
	};
	struct breakdown_set cur = { cur_v, 3 }, prev = { prev_v, 2 }, out;

	breakdown_sort_by_key(&cur);
	breakdown_sort_by_key(&prev);
	cr_assert_eq(breakdown_diff(&out, &cur, &prev), 0);
	cr_assert_eq(out.n, 2, "the idle key is left out: %zu", out.n);
	cr_assert_eq(out.v[0].key.tgid, 10);
	cr_assert_eq(out.v[0].cell.count, 2);
	cr_assert_eq(out.v[0].cell.sum_ns, 400 + 500);
	cr_assert_str_eq(out.v[0].comm, "a");
	cr_assert_eq(out.v[1].key.tgid, 30);
	cr_assert_eq(out.v[1].cell.count, 4);
	cr_assert_eq(out.v[1].cell.sum_ns, 34000);
	cr_assert_eq(out.v[1].cell.max_ns, 10000);
	breakdown_free(&out);
}

Test(breakdown, report_order_is_cell_then_busiest_then_key)
{
	struct breakdown_entry v[] = {
		entry(LAYER_BLK, BLKOP_READ, 1, "x", a3, 3),
		entry(LAYER_SYSCALL, FSOP_WRITE, 5, "x", a3, 3),
		entry(LAYER_SYSCALL, FSOP_READ, 9, "x", a3, 3),
		entry(LAYER_SYSCALL, FSOP_READ, 4, "x", a5, 5),
		entry(LAYER_SYSCALL, FSOP_READ, 2, "x", a3, 3),
	};
	struct breakdown_set set = { v, ARRAY_SIZE(v) };
	const uint32_t want[] = { 4, 2, 9, 5, 1 };

	breakdown_sort_for_report(&set);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		cr_assert_eq(set.v[i].key.tgid, want[i], "row %zu: pid %u", i, set.v[i].key.tgid);
}

/* --top 2: the two busiest keys of each cell, in text, none of the rest. */
Test(breakdown, top_keeps_the_busiest_rows_per_cell)
{
	static struct plan plan;
	static struct report r;
	static struct config cfg = { .per_process = true, .top = 2, .no_verdict = true };
	struct breakdown_entry v[] = {
		entry(LAYER_SYSCALL, FSOP_READ, 111, "one", a3, 3),
		entry(LAYER_SYSCALL, FSOP_READ, 222, "two", a5, 5),
		entry(LAYER_SYSCALL, FSOP_READ, 333, "three", b1, 1),
		entry(LAYER_SYSCALL, FSOP_WRITE, 444, "four", b1, 1),
	};
	struct breakdown_set set = { v, ARRAY_SIZE(v) };
	struct membuf m;
	const char *text;

	plan.cells[LAYER_SYSCALL][FSOP_READ] =
	    (struct cell_plan){ .wanted = true, .src = METHOD_TRACEPOINT };
	plan.cells[LAYER_SYSCALL][FSOP_WRITE] = plan.cells[LAYER_SYSCALL][FSOP_READ];
	r.plan = &plan;
	r.breakdowns = &set;
	r.cfg = &cfg;
	breakdown_sort_for_report(&set);
	text = render(&m, &r, false);
	cr_assert_not_null(strstr(text, " 222 two "), "%s", text);
	cr_assert_not_null(strstr(text, " 111 one "), "%s", text);
	cr_assert_null(strstr(text, " 333 three "), "--top 2 shows a third row: %s", text);
	cr_assert_not_null(strstr(text, " 444 four "), "top is per cell: %s", text);
	cr_assert_lt(strstr(text, " 222 two ") - text, strstr(text, " 111 one ") - text,
		     "busiest first");
	membuf_free(&m);
}

Test(breakdown, flag_strings_and_device_numbers)
{
	char buf[64];

	rq_flags_string(0, buf, sizeof(buf));
	cr_assert_str_eq(buf, "-");
	rq_flags_string(RQ_FLAG_SYNC, buf, sizeof(buf));
	cr_assert_str_eq(buf, "sync");
	rq_flags_string(RQ_FLAG_SYNC | RQ_FLAG_FUA | RQ_FLAG_PREFLUSH, buf, sizeof(buf));
	cr_assert_str_eq(buf, "sync,fua,preflush");
	rq_flags_string(RQ_FLAG_META, buf, sizeof(buf));
	cr_assert_str_eq(buf, "meta");
	cr_assert_str_eq(rq_flag_name(NR_RQ_FLAGS), "?");
	format_kdev(KDEV_MAKE(259, 3), buf, sizeof(buf));
	cr_assert_str_eq(buf, "259:3");
	format_kdev(KDEV_MAKE(7, (1U << KDEV_MINORBITS) - 1), buf, sizeof(buf));
	cr_assert_str_eq(buf, "7:1048575");
}

/* report_build: cells, drops and --stats are cur - prev; memory is cur's. */
Test(breakdown, report_build_differences)
{
	static struct snapshot cur, prev;
	static struct plan plan;
	struct config cfg = { .stats = true };
	struct report r;

	cell_from_samples(&cur.cells[LAYER_SYSCALL][FSOP_READ], a5, 5);
	cell_from_samples(&prev.cells[LAYER_SYSCALL][FSOP_READ], a3, 3);
	cur.drops[DROP_RQ_MAP_FULL] = 9;
	prev.drops[DROP_RQ_MAP_FULL] = 4;
	cur.stats.layers[LAYER_BLK] = (struct layer_cost){ 3, 1000, 500000, 7 };
	prev.stats.layers[LAYER_BLK] = (struct layer_cost){ 3, 400, 200000, 2 };
	cur.stats.map_bytes = 4096;
	prev.stats.map_bytes = 8192;
	cr_assert_eq(report_build(&r, &cfg, &plan, &cur, &prev, 1.5, NULL), 0);
	cr_assert_eq(r.cells[LAYER_SYSCALL][FSOP_READ].count, 2);
	cr_assert_eq(r.cells[LAYER_SYSCALL][FSOP_READ].sum_ns, 900);
	cr_assert_eq(r.drops[DROP_RQ_MAP_FULL], 5);
	cr_assert_eq(r.dropped, 5);
	cr_assert_not_null(r.stats);
	cr_assert_eq(r.stats->layers[LAYER_BLK].programs, 3);
	cr_assert_eq(r.stats->layers[LAYER_BLK].runs, 600);
	cr_assert_eq(r.stats->layers[LAYER_BLK].run_time_ns, 300000);
	cr_assert_eq(r.stats->layers[LAYER_BLK].recursion_misses, 5);
	cr_assert_eq(r.stats->map_bytes, 4096);
	cr_assert_null(r.breakdowns, "no -P/-D/-F: no breakdown");
	cr_assert_eq(r.interval_s, 1.5);
	report_release(&r);
	/* Without a previous snapshot, the report is the whole run. */
	cr_assert_eq(report_build(&r, &cfg, &plan, &cur, NULL, 3.0, NULL), 0);
	cr_assert_eq(r.cells[LAYER_SYSCALL][FSOP_READ].count, 5);
	cr_assert_eq(r.stats->layers[LAYER_BLK].runs, 1000);
	report_release(&r);
}

/*
 * -G: rows named by cgroup path (#ID when it went before it could be
 * named, "-" for a request nobody can be named for), with the container id
 * as docker ps shortens it and the pod uid; JSON with the whole ids.
 */
Test(breakdown, per_cgroup_rows_in_text_and_json)
{
	static const char path[] =
	    "/kubepods.slice/kubepods-pod0b7c4f5e_2d1a_4c3b_8e9f_"
	    "7a6b5c4d3e2f.slice/cri-containerd-"
	    "9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e"
	    ".scope";
	static struct plan plan;
	static struct report r;
	static struct config cfg = { .per_cgroup = true, .no_verdict = true };
	struct breakdown_entry v[] = {
		entry(LAYER_SYSCALL, FSOP_READ, 0, "", a5, 5),
		entry(LAYER_SYSCALL, FSOP_READ, 0, "", a3, 3),
		entry(LAYER_BLK, BLKOP_READ, 0, "", b1, 1),
	};
	struct breakdown_set set = { v, ARRAY_SIZE(v) };
	struct membuf m;
	const char *text;

	v[0].key.cgid = 4242;
	v[0].cgroup = path;
	v[1].key.cgid = 77; /* gone before it could be named */
	plan.cells[LAYER_SYSCALL][FSOP_READ] =
	    (struct cell_plan){ .wanted = true, .src = METHOD_TRACEPOINT };
	plan.cells[LAYER_BLK][BLKOP_READ] = plan.cells[LAYER_SYSCALL][FSOP_READ];
	r.plan = &plan;
	r.breakdowns = &set;
	r.cfg = &cfg;
	breakdown_sort_for_report(&set);

	text = render(&m, &r, false);
	cr_assert_not_null(strstr(text, path), "%s", text);
	/* The path last: long ones do not push the numbers out of line. */
	cr_assert_eq(strstr(text, path)[strlen(path)], '\n', "%s", text);
	cr_assert_not_null(strstr(text, " ERRORS CGROUP\n"), "%s", text);
	cr_assert_not_null(strstr(text, " 9e9e9e9e9e9e 0b7c4f5e-2d1a-4c3b-8e9f-7a6b5c4d3e2f "),
			   "%s", text);
	cr_assert_not_null(strstr(text, " #77\n"), "%s", text);
	/* The flush of a request begun before the run: no cgroup. */
	cr_assert_not_null(strstr(text, "      0 -\n"), "%s", text);
	membuf_free(&m);

	text = render(&m, &r, true);
	cr_assert_not_null(strstr(text, "\"cgroup_id\":4242"), "%s", text);
	cr_assert_not_null(strstr(text, "\"container_id\":\"9e9e9e9e9e9e9e9e"), "%s", text);
	cr_assert_not_null(strstr(text, "\"pod_uid\":\"0b7c4f5e-2d1a-4c3b-8e9f-7a6b5c4d3e2f\""),
			   "%s", text);
	cr_assert_not_null(strstr(text, "\"cgroup\":null,\"cgroup_id\":77,\"container_id\":null,"
					"\"pod_uid\":null"),
			   "%s", text);
	cr_assert_not_null(strstr(text, "\"cgroup\":null,\"cgroup_id\":0,"), "%s", text);
	membuf_free(&m);
}
