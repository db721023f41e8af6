// SPDX-License-Identifier: GPL-2.0
/*
 * iostackbreak diff's rule: two samples of one distribution are within the
 * noise at p50, p90 and p99; the same distribution 1.5 times slower is
 * beyond it at each; counts by their Poisson noise; a JSON report's cells
 * read back into histograms.
 */
#include <math.h>
#include "unit.h"
#include "compare.h"

/* n latencies of a log-normal around 100 us (sigma 0.5), scaled, from a
 * fixed seed: the same sample every run of the test. */
static void sample(struct cell_hist *c, unsigned int n, uint64_t seed, double scale)
{
	memset(c, 0, sizeof(*c));
	for (unsigned int i = 0; i < n; i++) {
		double u1, u2, z;
		uint64_t v;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		u1 = ((seed >> 11) + 1.0) / 9007199254740993.0;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		u2 = (seed >> 11) / 9007199254740992.0;
		z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		v = (uint64_t)(scale * 100000 * exp(0.5 * z));
		cell_record(c, v);
	}
}

Test(compare, same_distribution_is_within_the_noise)
{
	static struct cell_hist a, b;

	for (uint64_t seed = 1; seed <= 20; seed++) {
		sample(&a, 20000, seed, 1.0);
		sample(&b, 20000, seed + 1000, 1.0);
		cr_assert_not(cmp_percentile_changed(&a, &b, 50), "seed %" PRIu64, seed);
		cr_assert_not(cmp_percentile_changed(&a, &b, 90), "seed %" PRIu64, seed);
		cr_assert_not(cmp_percentile_changed(&a, &b, 99), "seed %" PRIu64, seed);
	}
}

Test(compare, one_and_a_half_times_slower_is_beyond_it)
{
	static struct cell_hist a, b;

	sample(&a, 20000, 7, 1.0);
	sample(&b, 20000, 8, 1.5);
	cr_assert(cmp_percentile_changed(&a, &b, 50));
	cr_assert(cmp_percentile_changed(&a, &b, 90));
	cr_assert(cmp_percentile_changed(&a, &b, 99));
	cr_assert(cmp_percentile_changed(&b, &a, 50), "the rule is symmetric");
}

Test(compare, few_samples_are_never_significant_by_chance)
{
	static struct cell_hist a, b;

	/* 10 samples: too few to judge p99 (n q (1-q) = 0.1) or p50 (2.5). */
	sample(&a, 10, 3, 1.0);
	sample(&b, 10, 4, 1.2);
	cr_assert_not(cmp_percentile_changed(&a, &b, 99));
	sample(&b, 10, 4, 3.0);
	cr_assert_not(cmp_percentile_changed(&a, &b, 50), "10 samples are not judged");
	memset(&b, 0, sizeof(b));
	cr_assert_not(cmp_percentile_changed(&a, &b, 50), "an empty side compares to nothing");
}

Test(compare, counts_by_poisson_noise)
{
	cr_assert_not(cmp_count_changed(1000, 1000));
	cr_assert_not(cmp_count_changed(1000, 1100)); /* 100 < 3 sqrt(2100) = 137 */
	cr_assert(cmp_count_changed(1000, 1200));     /* 200 > 3 sqrt(2200) = 141 */
	cr_assert(cmp_count_changed(0, 10));
}

Test(compare, json_cells_and_totals_read_back)
{
	static struct cmp_side s;
	char err[256];
	const char *report =
	    "{\"event\":\"io\",\"op\":\"read\"}\n"
	    "{\"cells\":[{\"layer\":\"blk\",\"op\":\"read\",\"count\":1}],"
	    "\"totals\":[{\"layer\":\"blk\",\"op\":\"read\",\"count\":3,\"sum_ns\":600,"
	    "\"min_ns\":100,\"max_ns\":300,\"buckets\":[{\"lo_ns\":96,\"count\":1},"
	    "{\"lo_ns\":192,\"count\":1},{\"lo_ns\":288,\"count\":1}]},"
	    "{\"layer\":\"nosuch\",\"op\":\"read\",\"count\":5}]}\n";

	cr_assert_eq(cmp_load_json(&s, report, err, sizeof(err)), 0, "%s", err);
	cr_assert(s.have[LAYER_BLK][BLKOP_READ]);
	cr_assert_eq(s.cells[LAYER_BLK][BLKOP_READ].count, 3);
	cr_assert_eq(s.cells[LAYER_BLK][BLKOP_READ].buckets[hist_bucket(192)], 1);
	cr_assert_eq(s.cells[LAYER_BLK][BLKOP_READ].min_ns, 100);
	cr_assert_eq(s.cells[LAYER_BLK][BLKOP_READ].max_ns, 300);
	cr_assert_eq(cmp_load_json(&s,
				   "{\"cells\":[],\"breakdown\":[{\"op\":\"read\",\"total_ns\":1000,"
				   "\"parts\":[{\"part\":\"io_wait\",\"sum_ns\":750},"
				   "{\"part\":\"nosuch\",\"sum_ns\":5}]}]}",
				   err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(s.calls_ns[FSOP_READ], 1000);
	cr_assert_eq(s.part_ns[FSOP_READ][PART_IO_WAIT], 750);
	cr_assert_eq(cmp_load_json(&s, "{\"event\":\"io\"}\nnot json\n", err, sizeof(err)), -1);
	cr_assert(strstr(err, "no object with \"cells\""), "%s", err);
}
