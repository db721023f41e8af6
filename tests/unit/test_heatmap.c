// SPDX-License-Identifier: GPL-2.0
/* The heat map's SVG from hand-made reports: what it draws, and that a long
 * run merging its columns keeps every count. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "heatmap.h"
#include "unit.h"

/* Sum of the counts in the slots' tooltips ("<title>1.0 s: 42</title>"). */
static uint64_t drawn_counts(const char *svg, unsigned int *slots)
{
	uint64_t sum = 0;

	*slots = 0;
	for (const char *p = svg; (p = strstr(p, "<title>")); p++) {
		const char *colon = strstr(p, " s: ");

		cr_assert_not_null(colon);
		sum += strtoull(colon + 4, NULL, 10);
		(*slots)++;
	}
	return sum;
}

static char *svg_of(struct heatmap *h)
{
	struct membuf m;
	FILE *f = membuf_open(&m);

	cr_assert_eq(heatmap_write_svg(h, f), 0);
	membuf_close(&m);
	return m.buf; /* the caller frees it */
}

Test(heatmap, every_count_is_drawn_even_after_columns_merge)
{
	char path[] = "/tmp/iosb-heatmap-XXXXXX", err[128], *svg;
	int fd = mkstemp(path);
	struct heatmap *h;
	uint64_t total = 0;
	unsigned int slots;

	cr_assert_geq(fd, 0);
	close(fd);
	h = heatmap_open(path, err, sizeof(err));
	cr_assert_not_null(h, "%s", err);
	/* 3000 one-second reports: past 2048 columns they merge in pairs. */
	for (unsigned int i = 0; i < 3000; i++) {
		struct report r = { .interval_s = 1.0 };

		cell_record(&r.cells[LAYER_SYSCALL][FSOP_READ], i < 1500 ? 300 : 70000);
		cell_record(&r.cells[LAYER_SYSCALL][FSOP_READ], 1000 + i);
		total += 2;
		cr_assert_eq(heatmap_add(h, &r), 0);
	}
	svg = svg_of(h);
	cr_expect_eq(drawn_counts(svg, &slots), total);
	cr_expect_not_null(strstr(svg, "id=\"plot-syscall-read\""));
	cr_expect_not_null(strstr(svg, "data-columns=\"1976\""), "2048 halved, then 952 more");
	cr_expect_not_null(strstr(svg, "3000.0 s from"));
	cr_expect_not_null(strstr(svg, "syscall read: 6,000 calls"));
	cr_expect_null(strstr(svg, "plot-syscall-write"), "no writes, no panel");
	free(svg);
	cr_expect_eq(heatmap_close(h), 0);
	unlink(path);
}

Test(heatmap, a_run_with_nothing_timed_says_so)
{
	char err[128], *svg;
	struct heatmap *h = heatmap_open("/dev/null", err, sizeof(err));
	unsigned int slots;

	cr_assert_not_null(h, "%s", err);
	svg = svg_of(h);
	cr_expect_not_null(strstr(svg, "no I/O was timed"));
	cr_expect_eq(drawn_counts(svg, &slots), 0);
	free(svg);
	heatmap_close(h);
}

Test(heatmap, a_file_that_cannot_be_written_fails_at_open)
{
	char err[128];

	cr_expect_null(heatmap_open("/nonexistent-dir/io.svg", err, sizeof(err)));
	cr_expect_not_null(strstr(err, "cannot write the heat map to /nonexistent-dir/io.svg"),
			   "%s", err);
}
