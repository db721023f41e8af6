// SPDX-License-Identifier: GPL-2.0
/*
 * -P: the calls of each process split into parts, with what they waited
 * for and did to the page cache (the PROCESS_COUNT_INDEX keys), in JSON's
 * breakdown_by_process and the text's per-process rows. Two processes with
 * different figures: each entry must carry its own, never the other's.
 */
#include <json-c/json.h>
#include "unit.h"
#include "sink.h"

static struct plan plan;
static struct config cfg;
static struct report rep;
static struct breakdown_entry v[32];
static struct breakdown_set set = { v, 0 };

static struct breakdown_entry *key(uint32_t tgid, uint32_t idx, const char *comm)
{
	struct breakdown_entry *e = &v[set.n++];

	memset(e, 0, sizeof(*e));
	e->key.cell_idx = idx;
	e->key.tgid = tgid;
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	return e;
}

/* The calls of tgid's op: n calls, each of per_call ns, all on CPU. */
static void calls(uint32_t tgid, const char *comm, unsigned int op, unsigned int n,
		  uint64_t per_call)
{
	struct breakdown_entry *e = key(tgid, CALL_TOTAL_INDEX(op), comm);

	for (unsigned int i = 0; i < n; i++)
		cell_record(&e->cell, per_call);
}

/* One count of tgid's op, a value per call that had it. */
static void count(uint32_t tgid, const char *comm, unsigned int op, unsigned int what,
		  const uint64_t *values, size_t n)
{
	struct breakdown_entry *e = key(tgid, PROCESS_COUNT_INDEX(op, what), comm);

	for (size_t i = 0; i < n; i++)
		cell_record(&e->cell, values[i]);
}

static void make_report(void)
{
	static const uint64_t pages_a[] = { 1, 1, 32 }, ra_a[] = { 31 };
	static const uint64_t pages_b[] = { 4 }, lock_b[] = { 5000, 7000 };
	static const uint64_t wlock_b[] = { 900 }, jreq_b[] = { 3, 3 }, jfl_b[] = { 1, 1 },
			      jbytes_b[] = { 8192, 12288 }, wb_b[] = { 2, 3 };

	memset(&plan, 0, sizeof(plan));
	memset(&cfg, 0, sizeof(cfg));
	memset(&rep, 0, sizeof(rep));
	set.n = 0;
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		plan.cells[LAYER_SYSCALL][op].wanted = true;
		plan.cells[LAYER_SYSCALL][op].src = METHOD_TRACEPOINT;
	}
	for (unsigned int w = 0; w < NR_WHYS; w++)
		plan.why[w] = true;
	plan.journal_blk = true; /* block_io_start */
	plan.root_layer = plan.split_layer = LAYER_SYSCALL;
	cfg.per_process = true;
	cfg.offcpu = true;
	cfg.no_verdict = true;
	rep.cfg = &cfg;
	rep.plan = &plan;
	rep.split_layer = LAYER_SYSCALL;
	rep.interval_s = 1.0;
	rep.breakdowns = &set;
	/* Process 100 reads 4 times: 3 missed (1, 1 and 32 pages, 31 read ahead). */
	calls(100, "reader", FSOP_READ, 4, 10000);
	cell_record(&key(100, CALL_PART_INDEX(FSOP_READ, LAYER_SYSCALL), "reader")->cell, 40000);
	count(100, "reader", FSOP_READ, PC_CACHE_MISS, pages_a, ARRAY_SIZE(pages_a));
	count(100, "reader", FSOP_READ, PC_READAHEAD, ra_a, ARRAY_SIZE(ra_a));
	/* Process 200 reads twice (one miss of 4 pages, two rwsem waits),
	 * fsyncs twice (each waited for a commit, and wrote 2 and 3 pages) and
	 * writes once (a mutex). */
	calls(200, "writer", FSOP_READ, 2, 20000);
	cell_record(&key(200, CALL_PART_INDEX(FSOP_READ, PART_LOCK), "writer")->cell, 12000);
	cell_record(&key(200, CALL_PART_INDEX(FSOP_READ, LAYER_SYSCALL), "writer")->cell, 28000);
	count(200, "writer", FSOP_READ, PC_CACHE_MISS, pages_b, ARRAY_SIZE(pages_b));
	count(200, "writer", FSOP_READ, PC_LOCK + LOCK_RWSEM_READ, lock_b, ARRAY_SIZE(lock_b));
	calls(200, "writer", FSOP_WRITE, 1, 1000);
	cell_record(&key(200, CALL_PART_INDEX(FSOP_WRITE, PART_LOCK), "writer")->cell, 900);
	cell_record(&key(200, CALL_PART_INDEX(FSOP_WRITE, LAYER_SYSCALL), "writer")->cell, 100);
	count(200, "writer", FSOP_WRITE, PC_LOCK + LOCK_MUTEX, wlock_b, ARRAY_SIZE(wlock_b));
	calls(200, "writer", FSOP_FSYNC, 2, 500000);
	cell_record(&key(200, CALL_PART_INDEX(FSOP_FSYNC, PART_JOURNAL), "writer")->cell, 1000000);
	count(200, "writer", FSOP_FSYNC, PC_JOURNAL_REQUESTS, jreq_b, ARRAY_SIZE(jreq_b));
	count(200, "writer", FSOP_FSYNC, PC_JOURNAL_FLUSHES, jfl_b, ARRAY_SIZE(jfl_b));
	count(200, "writer", FSOP_FSYNC, PC_JOURNAL_BYTES, jbytes_b, ARRAY_SIZE(jbytes_b));
	count(200, "writer", FSOP_FSYNC, PC_WRITEBACK, wb_b, ARRAY_SIZE(wb_b));
	breakdown_sort_for_report(&set);
}

static char *render(bool json)
{
	struct membuf m;
	struct sink sink;

	if (json)
		cr_assert_eq(sink_json_open(&sink, membuf_open(&m)), 0);
	else
		sink_text_open(&sink, membuf_open(&m), UNIT_NS);
	cr_assert_eq(sink_write(&sink, &rep), 0);
	sink_close(&sink);
	membuf_close(&m);
	return m.buf;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, k, &v), "no key %s", k);
	return v;
}

static uint64_t u64(json_object *o, const char *k)
{
	return (uint64_t)json_object_get_int64(get(o, k));
}

/* The breakdown_by_process entry of pid and op. */
static json_object *entry(json_object *procs, int pid, const char *op)
{
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *e = json_object_array_get_idx(procs, i);

		if (u64(e, "pid") == (uint64_t)pid &&
		    !strcmp(json_object_get_string(get(e, "op")), op))
			return e;
	}
	cr_assert_fail("no entry for pid %d op %s", pid, op);
	return NULL;
}

Test(process_calls, json_entries_carry_their_own_counts)
{
	json_object *root, *procs, *e, *kinds, *j, *per;
	char *text;

	make_report();
	text = render(true);
	root = json_tokener_parse(text);
	cr_assert_not_null(root, "%s", text);
	procs = get(root, "breakdown_by_process");
	e = entry(procs, 100, "read");
	cr_assert_eq(u64(e, "count"), 4);
	cr_assert_eq(u64(e, "cache_miss_pages"), 34);
	cr_assert_eq(u64(e, "readahead_pages"), 31);
	per = get(e, "cache_miss_pages_per_call");
	cr_assert_eq(u64(per, "calls"), 4, "the call with no miss counts as 0");
	cr_assert_eq(u64(per, "max"), 32);
	kinds = get(e, "lock_ns_by_kind");
	cr_assert_eq(u64(kinds, "rwsem_read"), 0);
	j = get(e, "journal_blk");
	cr_assert_eq(u64(j, "requests"), 0);
	e = entry(procs, 200, "read");
	cr_assert_eq(u64(e, "cache_miss_pages"), 4);
	cr_assert_eq(u64(e, "readahead_pages"), 0);
	cr_assert_eq(u64(get(e, "lock_ns_by_kind"), "rwsem_read"), 12000);
	cr_assert_eq(u64(get(e, "lock_ns_by_kind"), "mutex"), 0);
	e = entry(procs, 200, "write");
	cr_assert_eq(u64(get(e, "lock_ns_by_kind"), "mutex"), 900);
	e = entry(procs, 200, "fsync");
	j = get(e, "journal_blk");
	cr_assert_eq(u64(j, "requests"), 6);
	cr_assert_eq(u64(j, "flushes"), 2);
	cr_assert_eq(u64(j, "bytes"), 20480);
	cr_assert_eq(u64(e, "writeback_pages"), 5);
	cr_assert_eq(u64(entry(procs, 100, "read"), "writeback_pages"), 0);
	json_object_put(root);
	free(text);
}

Test(process_calls, text_rows_say_why_per_process)
{
	char *text, *a, *b;

	make_report();
	text = render(false);
	a = strstr(text, "     100 reader");
	b = strstr(text, "     200 writer");
	cr_assert(a && b, "%s", text);
	/* 100's read: 34 pages over 4 calls, 31 read ahead */
	cr_assert_not_null(
	    strstr(a, "page cache: 8.50 pages added (cache misses), 7.75 read ahead"), "%s", text);
	cr_assert_not_null(strstr(text, "lock: rwsem_read 100%"), "%s", text);
	cr_assert_not_null(strstr(text, "lock: mutex 100%"), "%s", text);
	cr_assert_not_null(strstr(text, "journal: 3.00 requests (1.00 flushes), 10.0 KiB per call"),
			   "%s", text);
	cr_assert_not_null(strstr(text, "writeback: 2.50 pages per call"), "%s", text);
	free(text);
}
