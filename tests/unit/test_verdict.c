// SPDX-License-Identifier: GPL-2.0
/* The verdict line: its rules (src/report/verdict.h) on hand-made reports, and its
 * figures against the report's own. */
#include <criterion/criterion.h>
#include <string.h>
#include "unit.h"
#include "verdict.h"

Test(verdict, durations_in_the_unit_that_keeps_them_short)
{
	static const struct {
		uint64_t ns;
		const char *want;
	} cases[] = {
		{ 0, "0 ns" },
		{ 12, "12 ns" },
		{ 999, "999 ns" },
		{ 1000, "1.0 us" },
		{ 850000, "850 us" },
		{ 4100000, "4.1 ms" },
		{ 31000000, "31 ms" },
		{ 1500000000ULL, "1.5 s" },
		{ 120000000000ULL, "120 s" },
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		format_duration(cases[i].ns, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].want, "%llu ns", (unsigned long long)cases[i].ns);
	}
}

/* n calls of ns each in a cell. */
static void fill(struct cell_hist *c, uint64_t ns, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		cell_record(c, ns);
}

/* A read cell of the syscall root whose calls split as given (per mille). */
static void split_reads(struct report *r, unsigned int calls, uint64_t ns, unsigned int io_wait,
			unsigned int runq, unsigned int self, uint64_t requests)
{
	uint64_t total = ns * calls;

	fill(&r->cells[LAYER_SYSCALL][FSOP_READ], ns, calls);
	r->calls[FSOP_READ] =
	    (struct call_totals){ .count = calls, .total_ns = total, .blk_requests = requests };
	r->parts[FSOP_READ][PART_IO_WAIT].sum_ns = total * io_wait / 1000;
	r->parts[FSOP_READ][PART_RUNQUEUE].sum_ns = total * runq / 1000;
	r->parts[FSOP_READ][LAYER_SYSCALL].sum_ns = total * self / 1000;
}

Test(verdict, the_busiest_op_with_its_parts_largest_first)
{
	struct report r = { .split_layer = LAYER_SYSCALL, .cfg = &(struct config){ .disk = "vda" } };
	char got[512], want[512], p99[32];

	split_reads(&r, 12402, 4100000, 820, 120, 60, 16123);
	/* A busy open cell with less total time is not named. */
	fill(&r.cells[LAYER_SYSCALL][FSOP_OPEN], 1000, 50000);
	r.calls[FSOP_OPEN] = (struct call_totals){ .count = 50000, .total_ns = 50000000 };
	r.parts[FSOP_OPEN][LAYER_SYSCALL].sum_ns = 50000000;
	report_verdict(&r, got, sizeof(got));
	format_duration(cell_percentile(&r.cells[LAYER_SYSCALL][FSOP_READ], 99), p99, sizeof(p99));
	snprintf(want, sizeof(want),
		 "read p99 %s (12,402 calls): 82%% waiting for vda (1.3 requests/call), 12%% "
		 "runqueue, 6%% syscall on CPU",
		 p99);
	cr_expect_str_eq(got, want);
}

Test(verdict, an_op_with_a_long_tail_is_named_too)
{
	struct report r = { .split_layer = LAYER_SYSCALL, .cfg = &(struct config){ 0 } };
	struct cell_hist *fsync = &r.cells[LAYER_SYSCALL][FSOP_FSYNC];
	char got[512];

	split_reads(&r, 1000, 2000000, 0, 0, 1000, 0);
	/* 90 fsyncs of 1 ms and 10 of 40 ms: p99 40x p50, less total time. */
	fill(fsync, 1000000, 90);
	fill(fsync, 40000000, 10);
	r.calls[FSOP_FSYNC] = (struct call_totals){ .count = 100, .total_ns = fsync->sum_ns };
	r.parts[FSOP_FSYNC][PART_BLOCKED].sum_ns = fsync->sum_ns;
	report_verdict(&r, got, sizeof(got));
	cr_expect(strstr(got, "read p99 ") == got, "%s", got);
	cr_expect_not_null(strstr(got, "; fsync p99 "), "%s", got);
	cr_expect_not_null(strstr(got, "(100 calls, p99 "), "%s", got);
	cr_expect_not_null(strstr(got, "x p50): 100% blocked"), "%s", got);
	cr_expect_null(strstr(got, "I/O"), "no io_wait, no wait for I/O: %s", got);
}

Test(verdict, without_split_calls_the_outermost_timed_layer)
{
	struct report r = { .split_layer = -1, .cfg = &(struct config){ 0 } };
	char got[512];

	fill(&r.cells[LAYER_BLK][BLKOP_WRITE], 50000, 300);
	fill(&r.cells[LAYER_BLK][BLKOP_FLUSH], 20000, 300);
	report_verdict(&r, got, sizeof(got));
	cr_expect(!strncmp(got, "blk write p99 ", 14), "%s", got);
	cr_expect_not_null(strstr(got, "(300 requests)"), "%s", got);
	cr_expect_null(strchr(got, ';'), "%s", got);
}

Test(verdict, nothing_timed_says_so)
{
	struct report r = { .split_layer = LAYER_SYSCALL, .cfg = &(struct config){ 0 } };
	char got[64];

	report_verdict(&r, got, sizeof(got));
	cr_expect_str_eq(got, "no I/O was timed");
}

Test(verdict, a_short_buffer_is_cut_not_overrun)
{
	struct report r = { .split_layer = LAYER_SYSCALL,
			    .cfg = &(struct config){ .disk = "nvme0n1" } };
	char got[24 + 1];

	memset(got, 'x', sizeof(got));
	split_reads(&r, 100, 1000000, 500, 300, 200, 100);
	report_verdict(&r, got, sizeof(got) - 1);
	cr_expect_eq(got[sizeof(got) - 1], 'x');
	cr_expect_eq(strlen(got), sizeof(got) - 2);
}

/* The text report's verdict: a headline, then the one line's phrases each
 * on a line of their own, none past VERDICT_COLS. */
Test(verdict, text_lines_head_with_the_busiest_op_and_fit_the_width)
{
	struct report r = { .split_layer = LAYER_SYSCALL,
			    .cfg = &(struct config){ .disk = "nvme0n1" } };
	struct cell_hist *fsync = &r.cells[LAYER_SYSCALL][FSOP_FSYNC];
	char lines[VERDICT_MAX_LINES][VERDICT_COLS + 1], one[512];
	unsigned int n;

	split_reads(&r, 12402, 4100000, 820, 120, 60, 16123);
	fill(fsync, 1000000, 90);
	fill(fsync, 40000000, 10);
	r.calls[FSOP_FSYNC] = (struct call_totals){ .count = 100, .total_ns = fsync->sum_ns };
	r.parts[FSOP_FSYNC][PART_BLOCKED].sum_ns = fsync->sum_ns;
	n = report_verdict_lines(&r, lines, VERDICT_MAX_LINES);
	cr_assert_eq(n, 3);
	/* 12,402 calls of 4.1 ms: 51 s, 82% of it waiting for the disk. */
	cr_expect_str_eq(lines[0],
			 "verdict: read took the most time (51 s), 82% of it waiting for nvme0n1");
	report_verdict(&r, one, sizeof(one));
	/* Each op's line is the one line's phrase, as far as it fits. */
	cr_expect(!strncmp(lines[1], "  read p99 ", 11), "%s", lines[1]);
	cr_expect(!strncmp(one, lines[1] + 2, strlen(lines[1]) - 2), "%s\n%s", one, lines[1]);
	cr_expect(!strncmp(lines[2], "  fsync p99 ", 12), "%s", lines[2]);
	cr_expect_not_null(strstr(lines[2], "x p50): 100% blocked"), "%s", lines[2]);
	for (unsigned int i = 0; i < n; i++)
		cr_expect_leq(strlen(lines[i]), VERDICT_COLS, "%s", lines[i]);
}

/* A part that does not fit is left out whole: never half a phrase. */
Test(verdict, text_lines_cut_at_a_whole_part)
{
	struct report r = { .split_layer = LAYER_SYSCALL,
			    .cfg = &(struct config){ .disk = "dm-crypt-home" } };
	char lines[VERDICT_MAX_LINES][VERDICT_COLS + 1], one[512];
	unsigned int n;

	split_reads(&r, 12402, 4100000, 820, 120, 60, 16123);
	n = report_verdict_lines(&r, lines, VERDICT_MAX_LINES);
	cr_assert_eq(n, 2);
	report_verdict(&r, one, sizeof(one));
	cr_expect_gt(strlen(one), VERDICT_COLS - 2, "%s", one);
	cr_expect_leq(strlen(lines[1]), VERDICT_COLS, "%s", lines[1]);
	cr_expect_not_null(strstr(lines[1], "requests/call), 12% runqueue"), "%s", lines[1]);
	cr_expect_null(strstr(lines[1], "syscall on"), "%s", lines[1]);
	cr_expect(lines[1][strlen(lines[1]) - 1] == 'e', "%s", lines[1]);
}

Test(verdict, text_lines_nothing_timed)
{
	struct report r = { .split_layer = -1, .cfg = &(struct config){ 0 } };
	char lines[VERDICT_MAX_LINES][VERDICT_COLS + 1];

	cr_assert_eq(report_verdict_lines(&r, lines, VERDICT_MAX_LINES), 1);
	cr_expect_str_eq(lines[0], "verdict: no I/O was timed");
}
