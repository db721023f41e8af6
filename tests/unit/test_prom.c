// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus exposition: a golden file, and independently of it the
 * folding of buckets into le counts against the raw samples, the order
 * of the le bounds, +Inf equal to _count, label escaping, HELP and TYPE
 * for every family, and --top on broken-down cells.
 */
#include "unit.h"
#include "prom.h"

#define WHY "fentry: refused (EPERM); kprobe: \"none\" \\ here"

static const struct prom_meta meta = { "0.1", "6.18.0-test" };
static struct plan plan;
static struct report rep;
static struct config rep_cfg; /* the options the report was made for */
static struct breakdown_entry entries[6];
static struct breakdown_set set = { entries, 0 };

/* syscall read/write and blk read traced, vfs read skipped. */
static void make_plan(void)
{
	memset(&plan, 0, sizeof(plan));
	plan.cells[LAYER_SYSCALL][FSOP_READ].wanted = true;
	plan.cells[LAYER_SYSCALL][FSOP_READ].src = METHOD_TRACEPOINT;
	plan.cells[LAYER_SYSCALL][FSOP_WRITE].wanted = true;
	plan.cells[LAYER_SYSCALL][FSOP_WRITE].src = METHOD_TRACEPOINT;
	plan.cells[LAYER_BLK][BLKOP_READ].wanted = true;
	plan.cells[LAYER_BLK][BLKOP_READ].src = METHOD_TP_BTF;
	plan.cells[LAYER_VFS][FSOP_READ].wanted = true;
	snprintf(plan.cells[LAYER_VFS][FSOP_READ].why, sizeof(plan.cells[0][0].why), "%s", WHY);
}

static void make_report(void)
{
	/* Powers of two exactly, and one below each: they fall on both
	 * sides of an le bound. Then one beyond the last bound. */
	static const uint64_t reads[] = {
		1023, 1024, 1025, 4095,		  4096,		  300,
		255,  256,  0,	  68719476735ULL, 68719476736ULL, 100000000000ULL
	};
	uint64_t seed = 7;

	make_plan();
	memset(&rep, 0, sizeof(rep));
	memset(&rep_cfg, 0, sizeof(rep_cfg));
	rep.cfg = &rep_cfg;
	rep.plan = &plan;
	rep.split_layer = -1; /* calls not split: parts_of_calls_sum_to_the_root below */
	cell_from_samples(&rep.cells[LAYER_SYSCALL][FSOP_READ], reads, ARRAY_SIZE(reads));
	for (unsigned int i = 0; i < 40; i++)
		cell_record(&rep.cells[LAYER_SYSCALL][FSOP_WRITE],
			    unit_rand_range(&seed, 2000, 90000));
	/* Not traced: must not show, whatever its counts. */
	cell_record(&rep.cells[LAYER_VFS][FSOP_READ], 777);
	rep.drops[DROP_BREAKDOWN_MAP_FULL] = 3;
	rep.dropped = 3;
	rep.left_out[LAYER_SYSCALL][FSOP_READ][FD_PIPE] = 3;
	rep.left_out[LAYER_SYSCALL][FSOP_READ][FD_SOCKET] = 12;
	rep.left_out[LAYER_SYSCALL][FSOP_WRITE][FD_OTHER] = 5;
	/* Not traced: no series, whatever its counts. */
	rep.left_out[LAYER_SYSCALL][FSOP_OPEN][FD_PIPE] = 8;
	rep.left_out[LAYER_VFS][FSOP_READ][FD_PIPE] = 99;
}

static void key(struct breakdown_entry *e, unsigned int cell, uint32_t tgid, const char *comm,
		uint32_t dev, uint32_t flags, unsigned int n, uint64_t ns)
{
	memset(e, 0, sizeof(*e));
	e->key.cell_idx = cell;
	e->key.tgid = tgid;
	e->key.dev = dev;
	e->key.flags = flags;
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	for (unsigned int i = 0; i < n; i++)
		cell_record(&e->cell, ns + i);
}

static void namer(uint32_t dev, char *buf, size_t sz)
{
	snprintf(buf, sz, dev == KDEV_MAKE(259, 0) ? "nvme0n1" : "sda");
}

/* -P -D -F: odd process names, in report order (busiest first per cell). */
static void add_breakdowns(void)
{
	unsigned int rd = CELL_INDEX(LAYER_SYSCALL, FSOP_READ), wr = CELL_INDEX(LAYER_SYSCALL, 1),
		     blk = CELL_INDEX(LAYER_BLK, BLKOP_READ);

	key(&entries[0], rd, 4242, "db \"main\"", 0, 0, 5, 3000);
	key(&entries[1], rd, 17, "back\\slash\nnl", 0, 0, 2, 70000);
	/* A name the kernel cut inside a two-byte character. */
	key(&entries[2], rd, 99, "caf\xc3", 0, 0, 1, 1 << 20);
	key(&entries[3], wr, 4242, "db \"main\"", 0, 0, 1, 1 << 12);
	key(&entries[4], blk, 4242, "db \"main\"", KDEV_MAKE(259, 0), RQ_FLAG_SYNC | RQ_FLAG_META,
	    3, 100000);
	key(&entries[5], blk, 0, "kworker/u4:2", KDEV_MAKE(8, 0), 0, 1, 2000000);
	set.n = 6;
	rep.breakdowns = &set;
	rep_cfg.per_process = rep_cfg.per_disk = rep_cfg.per_flags = true;
	rep.disk_name = namer;
}

static char *render(void)
{
	struct membuf m;

	cr_assert_eq(report_prometheus(membuf_open(&m), &rep, &meta), 0);
	membuf_close(&m);
	return m.buf;
}

Test(prom, golden)
{
	struct self_stats stats = {};
	char *text;

	make_report();
	add_breakdowns();
	stats.layers[LAYER_SYSCALL] = (struct layer_cost){ 32, 629415, 91733584, 0 };
	stats.layers[LAYER_BLK] = (struct layer_cost){ 3, 1000, 1000000000, 0 };
	rep.stats = &stats;
	text = render();
	golden_check("report.prom", text);
	free(text);
}

/* One series per traced cell, empty ones too; no breakdown, no stats. */
Test(prom, golden_cells)
{
	char *text;

	make_report();
	text = render();
	golden_check("report_cells.prom", text);
	free(text);
}

/* ---- Numbers ---- */

Test(prom, seconds_are_exact_decimals)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} rows[] = {
		{ 0, "0" },
		{ 1, "0.000000001" },
		{ 256, "0.000000256" },
		{ 1536, "0.000001536" },
		{ 1000000000, "1" },
		{ 1500000000, "1.5" },
		{ 68719476736ULL, "68.719476736" },
		{ UINT64_MAX, "18446744073.709551615" },
	};
	char buf[32];

	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		prom_seconds(buf, sizeof(buf), rows[i].ns);
		cr_assert_str_eq(buf, rows[i].s, "%" PRIu64 " ns", rows[i].ns);
	}
}

/* "0.000001024" -> 1024: the le text back to integer ns, exactly. */
static uint64_t le_ns(const char *s)
{
	uint64_t whole = 0, frac = 0;
	unsigned int digits = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		whole = whole * 10 + (uint64_t)(*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			frac = frac * 10 + (uint64_t)(*s - '0');
	for (; digits < 9; digits++)
		frac *= 10;
	return whole * 1000000000ULL + frac;
}

struct series {
	uint64_t le[64]; /* le bounds in ns, UINT64_MAX for +Inf */
	uint64_t cum[64];
	unsigned int n;
	uint64_t count;
	bool have_count;
};

/* The buckets and _count of the series whose labels start with prefix. */
static void parse_series(const char *text, const char *prefix, struct series *s)
{
	char want[256];
	size_t wl;

	memset(s, 0, sizeof(*s));
	wl = (size_t)snprintf(want, sizeof(want), "iostackbreak_latency_seconds_bucket{%s,le=\"",
			      prefix);
	for (const char *p = text; (p = strstr(p, want)); p++) {
		const char *v = p + wl, *q = strchr(v, '"');

		cr_assert_lt(s->n, ARRAY_SIZE(s->le));
		s->le[s->n] = !strncmp(v, "+Inf", 4) ? UINT64_MAX : le_ns(v);
		s->cum[s->n++] = strtoull(q + 3, NULL, 10); /* past '"} ' */
	}
	snprintf(want, sizeof(want), "iostackbreak_latency_seconds_count{%s} ", prefix);
	const char *c = strstr(text, want);

	if (c) {
		s->count = strtoull(c + strlen(want), NULL, 10);
		s->have_count = true;
	}
}

static void check_folding(const uint64_t *v, size_t n)
{
	struct series s;
	char *text;

	make_report();
	cell_from_samples(&rep.cells[LAYER_SYSCALL][FSOP_READ], v, n);
	text = render();
	parse_series(text, "layer=\"syscall\",op=\"read\"", &s);
	cr_assert_eq(s.n, PROM_LE_MAX_EXP - PROM_LE_MIN_EXP + 2, "%u buckets", s.n);
	for (unsigned int i = 0; i < s.n; i++) {
		uint64_t below = 0;

		/* le means <=; our values are integer ns and 2^k counts
		 * above its bound: the count is of values < le. */
		for (size_t j = 0; j < n; j++)
			below += s.le[i] == UINT64_MAX || v[j] < s.le[i];
		cr_assert_eq(s.cum[i], below,
			     "le=%" PRIu64 " ns: %" PRIu64 ", samples below: %" PRIu64, s.le[i],
			     s.cum[i], below);
		if (i + 1 < s.n) {
			cr_assert_gt(s.le[i + 1], s.le[i], "le bounds out of order");
			cr_assert_leq(s.cum[i], s.cum[i + 1], "cumulative counts go down");
		}
		if (i < s.n - 1)
			cr_assert_eq(s.le[i], 1ULL << (PROM_LE_MIN_EXP + i), "bound %u", i);
	}
	cr_assert_eq(s.le[s.n - 1], UINT64_MAX, "the last bucket is +Inf");
	cr_assert(s.have_count);
	cr_assert_eq(s.count, n, "_count");
	cr_assert_eq(s.cum[s.n - 1], s.count, "+Inf equals _count");
	free(text);
}

Test(prom, buckets_fold_exactly_into_le_counts)
{
	static uint64_t v[20000];
	uint64_t seed = 42;

	/* Log-uniform from 1 ns to about 2^39 ns, and every power of two
	 * and its neighbours. */
	for (size_t i = 0; i < 10000; i++)
		v[i] = unit_rand(&seed) >> (25 + unit_rand(&seed) % 39);
	for (size_t k = 0, i = 10000; k < 40; k++, i += 3) {
		v[i] = (1ULL << k) - 1;
		v[i + 1] = 1ULL << k;
		v[i + 2] = (1ULL << k) + 1;
	}
	check_folding(v, 10120);
	check_folding(v, 0);
}

/* A snapshot can catch a CPU's cell between its count and its bucket
 * stores: _count follows the buckets, so +Inf and _count still agree. */
Test(prom, count_comes_from_the_buckets)
{
	struct series s;
	char *text;

	make_report();
	rep.cells[LAYER_SYSCALL][FSOP_READ].count += 1;
	text = render();
	parse_series(text, "layer=\"syscall\",op=\"read\"", &s);
	cr_assert_eq(s.count, 12);
	cr_assert_eq(s.cum[s.n - 1], 12);
	free(text);
}

/* ---- Labels ---- */

Test(prom, label_values_are_escaped_and_valid_utf8)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{ "plain", "plain" },
		{ "a\"b", "a\\\"b" },
		{ "back\\slash", "back\\\\slash" },
		{ "new\nline", "new\\nline" },
		{ "tab\tok", "tab\tok" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "caf\xc3", "caf\xef\xbf\xbd" },
		{ "\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },		    /* overlong '/' */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "\xf0\x9f\x92\xbe", "\xf0\x9f\x92\xbe" },
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xff", "\xef\xbf\xbd" },
		{ "", "" },
	};
	char buf[64];

	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		size_t n = prom_label_value(buf, sizeof(buf), rows[i].in);

		cr_assert_str_eq(buf, rows[i].out, "row %u", i);
		cr_assert_eq(n, strlen(rows[i].out), "row %u length", i);
	}
}

Test(prom, label_values_are_never_cut_inside_an_escape)
{
	char buf[5];

	/* "ab" fits, the escape of '"' would need 2 more than the room. */
	cr_assert_eq(prom_label_value(buf, sizeof(buf), "abc\"d"), 3);
	cr_assert_str_eq(buf, "abc");
	cr_assert_eq(prom_label_value(buf, sizeof(buf), "ab\xc3\xa9z"), 4);
	cr_assert_str_eq(buf, "ab\xc3\xa9");
	cr_assert_eq(prom_label_value(buf, 3, "a\xff"), 1);
	cr_assert_str_eq(buf, "a");
}

/* ---- Families ---- */

/* Offset of the first "# KIND name " line, or -1. */
static long meta_line(const char *text, const char *kind, const char *name)
{
	char want[160];
	const char *p;

	snprintf(want, sizeof(want), "# %s %s ", kind, name);
	p = strstr(text, want);
	return p ? p - text : -1;
}

/* What TYPE a family must have, by the naming rules we follow. */
static const char *expected_type(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "iostackbreak_latency_seconds"))
		return "histogram";
	if (n > 6 && !strcmp(name + n - 6, "_total"))
		return "counter";
	return "gauge";
}

Test(prom, every_family_has_help_and_type_before_its_samples)
{
	struct self_stats stats = {};
	unsigned int samples = 0;
	char *text;

	make_report();
	add_breakdowns();
	stats.layers[LAYER_SYSCALL].programs = 1;
	rep.stats = &stats;
	text = render();
	for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
		size_t len = strcspn(line, "{ ");
		char name[128], type[160];
		long help_at, type_at;

		if (line[0] == '#')
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)len, line);
		/* _bucket, _sum and _count lines belong to the histogram. */
		if (!strncmp(name, "iostackbreak_latency_seconds_", 29))
			name[28] = '\0';
		help_at = meta_line(text, "HELP", name);
		type_at = meta_line(text, "TYPE", name);
		cr_assert(help_at >= 0 && help_at < line - text, "no HELP before %.*s", (int)len,
			  line);
		cr_assert(type_at >= 0 && type_at < line - text, "no TYPE before %.*s", (int)len,
			  line);
		snprintf(type, sizeof(type), "# TYPE %s %s\n", name, expected_type(name));
		cr_assert(!strncmp(text + type_at, type, strlen(type)), "%s is not a %s", name,
			  expected_type(name));
		samples++;
	}
	cr_assert_gt(samples, 100);
	free(text);
}

Test(prom, top_keeps_the_busiest_keys_of_each_cell)
{
	char *text;

	make_report();
	add_breakdowns();
	rep_cfg.top = 1;
	text = render();
	/* syscall read had three keys, busiest first: only the first shows. */
	cr_assert_not_null(strstr(text, "_count{layer=\"syscall\",op=\"read\",pid=\"4242\""));
	cr_assert_null(strstr(text, "pid=\"17\""), "the second key of syscall read shows");
	cr_assert_null(strstr(text, "pid=\"99\""), "the third key of syscall read shows");
	cr_assert_not_null(strstr(text, "_count{layer=\"syscall\",op=\"write\",pid=\"4242\""));
	cr_assert_not_null(strstr(text, "_count{layer=\"blk\",op=\"read\",pid=\"4242\""));
	cr_assert_null(strstr(text, "kworker"), "the second key of blk read shows");
	free(text);
}

/* Without a breakdown the skipped, drops and build families still show. */
Test(prom, skipped_cells_and_drops)
{
	char *text;

	make_report();
	text = render();
	cr_assert_not_null(
	    strstr(text, "iostackbreak_build_info{version=\"0.1\",kernel=\"6.18.0-test\"} 1\n"));
	cr_assert_not_null(
	    strstr(text, "iostackbreak_skipped_cells{layer=\"vfs\",op=\"read\",reason=\"fentry: "
			 "refused (EPERM); kprobe: \\\"none\\\" \\\\ here\"} 1\n"),
	    "%s", text);
	cr_assert_not_null(
	    strstr(text, "iostackbreak_dropped_events_total{reason=\"breakdown_map_full\"} 3\n"));
	cr_assert_not_null(
	    strstr(text, "iostackbreak_dropped_events_total{reason=\"thread_map_full\"} 0\n"));
	cr_assert_null(strstr(text, "layer=\"vfs\",op=\"read\",le"), "an untraced cell shows");
	cr_assert_null(strstr(text, "iostackbreak_bpf_"), "stats without --stats");
	cr_assert_null(strstr(text, "op=\"open\""), "a cell not asked for shows");
	free(text);
}

/* time_seconds_total: one counter per (op, part) reported, summing to the
 * root's _sum; parts of untraced layers and of unmeasured waits left out. */
Test(prom, parts_of_calls_sum_to_the_root)
{
	char *text;

	make_report();
	rep.split_layer = LAYER_SYSCALL;
	rep_cfg.offcpu = true;
	rep.calls[FSOP_READ] = (struct call_totals){ .count = 3, .total_ns = 1500000000 };
	rep.parts[FSOP_READ][LAYER_SYSCALL].sum_ns = 250000000;
	rep.parts[FSOP_READ][PART_IO_WAIT].sum_ns = 1250000000;
	text = render();
	cr_assert_not_null(
	    strstr(text, "iostackbreak_time_seconds_total{op=\"read\",part=\"syscall\"} 0.25\n"),
	    "%s", text);
	cr_assert_not_null(
	    strstr(text, "iostackbreak_time_seconds_total{op=\"read\",part=\"io_wait\"} 1.25\n"),
	    "%s", text);
	cr_assert_not_null(
	    strstr(text, "iostackbreak_time_seconds_total{op=\"fsync\",part=\"runqueue\"} 0\n"),
	    "%s", text);
	cr_assert_null(strstr(text, "part=\"vfs\""), "vfs is not traced here: %s", text);
	cr_assert_not_null(strstr(text, "# TYPE iostackbreak_time_seconds_total counter\n"));
	free(text);
}

/* Calls left out: a series per traced syscall/vfs cell and kind, with its
 * count; none for cells not traced; no family under --all-fds. */
Test(prom, left_out_calls)
{
	char *text, line[128];
	const char *p = NULL;
	unsigned int n = 0;

	make_report();
	text = render();
	for (unsigned int op = 0; op < NR_FS_OPS; op++) {
		for (unsigned int k = 0; k < NR_FD_KINDS; k++) {
			bool traced = op == FSOP_READ || op == FSOP_WRITE;

			snprintf(line, sizeof(line),
				 "\niostackbreak_left_out_calls_total{layer=\"syscall\",op=\"%s\","
				 "kind=\"%s\"} %" PRIu64 "\n",
				 op_name(LAYER_SYSCALL, op), fd_kind_name(k),
				 rep.left_out[LAYER_SYSCALL][op][k]);
			cr_assert_eq(strstr(text, line) != NULL, traced, "%s in:\n%s", line, text);
		}
	}
	for (p = text; (p = strstr(p, "\niostackbreak_left_out_calls_total{")); p++)
		n++;
	cr_assert_eq(n, 2 * NR_FD_KINDS, "series: %u\n%s", n, text);
	cr_assert_not_null(strstr(text, "# TYPE iostackbreak_left_out_calls_total counter\n"));
	free(text);
	rep_cfg.all_fds = true;
	text = render();
	cr_assert_null(strstr(text, "iostackbreak_left_out_calls_total"), "%s", text);
	free(text);
}

/* -G: the labels cgroup, container_id and pod_uid, on every layer's keys;
 * "" where the path names no container or pod, or no cgroup is known. */
Test(prom, per_cgroup_labels)
{
	static const char pod[] = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-"
				  "pod1f2e3d4c_5b6a_4978_8695_a4b3c2d1e0f9.slice/docker-"
				  "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
				  ".scope";
	unsigned int rd = CELL_INDEX(LAYER_SYSCALL, FSOP_READ),
		     blk = CELL_INDEX(LAYER_BLK, BLKOP_READ);
	char *text;

	make_report();
	key(&entries[0], rd, 0, "", 0, 0, 4, 3000);
	entries[0].key.cgid = 11;
	entries[0].cgroup = pod;
	key(&entries[1], rd, 0, "", 0, 0, 2, 3000);
	entries[1].key.cgid = 12;
	entries[1].cgroup = "/system.slice/cron.service";
	key(&entries[2], blk, 0, "", 0, 0, 1, 3000);
	set.n = 3;
	rep.breakdowns = &set;
	rep_cfg.per_cgroup = true;
	text = render();
	cr_assert_not_null(
	    strstr(text,
		   "_count{layer=\"syscall\",op=\"read\",cgroup=\""
		   "/kubepods.slice/"
		   "kubepods-besteffort.slice/kubepods-besteffort-pod1f2e3d4c_5b6a_4978_8695_"
		   "a4b3c2d1e0f9.slice/docker-abcdef0123456789abcdef0123456789abcdef0123456789"
		   "abcdef0123456789.scope\",container_id=\"abcdef0123456789abcdef0123456789"
		   "abcdef0123456789abcdef0123456789\",pod_uid=\"1f2e3d4c-5b6a-4978-8695-"
		   "a4b3c2d1e0f9\"} 4\n"),
	    "%s", text);
	cr_assert_not_null(strstr(text, "_count{layer=\"syscall\",op=\"read\",cgroup=\"/system."
					"slice/cron.service\",container_id=\"\",pod_uid=\"\"} 2\n"),
			   "%s", text);
	cr_assert_not_null(strstr(text, "_count{layer=\"blk\",op=\"read\",cgroup=\"\","
					"container_id=\"\",pod_uid=\"\"} 1\n"),
			   "%s", text);
	free(text);
}
