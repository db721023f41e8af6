// SPDX-License-Identifier: GPL-2.0
/*
 * Histogram maths: bucket bounds against the index the BPF side computes,
 * percentiles against exact nearest-rank ones on sorted samples, merging
 * CPUs, interval differences and the log2 view.
 */
#include "unit.h"

#define LAST_BUCKET (HIST_NR_BUCKETS - 1)

/* lo(b) <= v < hi(b) for v's bucket b; the last bucket has no upper bound. */
static void check_value(uint64_t v)
{
	unsigned int b = hist_bucket(v);

	cr_assert_lt(b, HIST_NR_BUCKETS, "hist_bucket(%" PRIu64 ") = %u: out of range", v, b);
	cr_assert_leq(hist_bucket_lo(b), v, "v=%" PRIu64 " bucket %u lo=%" PRIu64 " above it", v, b,
		      hist_bucket_lo(b));
	if (b != LAST_BUCKET)
		cr_assert_lt(v, hist_bucket_hi(b),
			     "v=%" PRIu64 " bucket %u hi=%" PRIu64 " not above it", v, b,
			     hist_bucket_hi(b));
}

Test(hist_bucket, small_values_have_a_bucket_each)
{
	for (uint64_t v = 0; v < HIST_SUB; v++) {
		cr_assert_eq(hist_bucket(v), v, "value %" PRIu64, v);
		cr_assert_eq(hist_bucket_lo((unsigned int)v), v);
		cr_assert_eq(hist_bucket_hi((unsigned int)v), v + 1);
	}
}

/* Every value up to 2^20 (covers 0..10000 and many rows): in bounds, and
 * the index never skips or goes back as the value grows by one. */
Test(hist_bucket, dense_values_contiguous_and_monotonic)
{
	unsigned int prev = hist_bucket(0);

	cr_assert_eq(prev, 0);
	for (uint64_t v = 0; v <= (1ULL << 20); v++) {
		unsigned int b = hist_bucket(v);

		check_value(v);
		cr_assert(b == prev || b == prev + 1, "bucket jumps from %u to %u at v=%" PRIu64,
			  prev, b, v);
		prev = b;
	}
}

Test(hist_bucket, random_u64_within_bounds)
{
	uint64_t seed = 0x1057AC4B4EA4ULL;

	for (int i = 0; i < 1000000; i++) {
		uint64_t v = unit_rand(&seed);

		/* Shift by a random amount so every magnitude is tried, not
		 * only the huge values a raw u64 almost always is. */
		check_value(v >> (unit_rand(&seed) % 64));
		check_value(v);
	}
	check_value(UINT64_MAX);
	cr_assert_eq(hist_bucket(UINT64_MAX), LAST_BUCKET);
}

Test(hist_bucket, powers_of_two_and_neighbours)
{
	for (unsigned int k = 0; k < 64; k++) {
		uint64_t p = 1ULL << k;

		check_value(p);
		check_value(p - 1);
		check_value(p + 1);
		/* A power of two opens a bucket: bucket bounds are aligned. */
		if (k >= HIST_SUB_BITS && k < HIST_MAX_EXP) {
			unsigned int b = hist_bucket(p);

			cr_assert_eq(hist_bucket_lo(b), p,
				     "2^%u is not the low bound of its bucket %u", k, b);
			cr_assert_eq(hist_bucket(p - 1) + 1, b, "2^%u-1 not in the bucket before",
				     k);
		}
		if (k >= HIST_MAX_EXP)
			cr_assert_eq(hist_bucket(p), LAST_BUCKET, "2^%u", k);
	}
}

/* The bucket table itself: each bucket starts where the previous ended,
 * and its own bounds map back to it. */
Test(hist_bucket, table_contiguous)
{
	cr_assert_eq(hist_bucket_lo(0), 0);
	cr_assert_eq(hist_bucket_hi(LAST_BUCKET), UINT64_MAX, "the last bucket is open-ended");
	for (unsigned int b = 0; b < HIST_NR_BUCKETS; b++) {
		uint64_t lo = hist_bucket_lo(b);

		cr_assert_eq(hist_bucket(lo), b, "lo(%u)=%" PRIu64 " maps to %u", b, lo,
			     hist_bucket(lo));
		if (b == LAST_BUCKET)
			break;
		cr_assert_lt(lo, hist_bucket_hi(b), "bucket %u is empty", b);
		cr_assert_eq(hist_bucket_hi(b), hist_bucket_lo(b + 1), "gap after bucket %u", b);
		cr_assert_eq(hist_bucket(hist_bucket_hi(b) - 1), b, "hi(%u)-1 maps elsewhere", b);
	}
}

Test(hist_bucket, relative_width_at_most_one_eighth)
{
	for (unsigned int b = 0; b < LAST_BUCKET; b++) {
		uint64_t lo = hist_bucket_lo(b), hi = hist_bucket_hi(b);

		if (lo < 8)
			continue;
		cr_assert_leq((hi - lo) * 8, lo,
			      "bucket %u [%" PRIu64 ", %" PRIu64 ") wider than lo/8", b, lo, hi);
	}
}

/* ---- Percentiles ---- */

enum dist {
	DIST_UNIFORM,
	DIST_EXPONENTIAL,
	DIST_BIMODAL,
	DIST_CONSTANT,
	DIST_SINGLE,
	DIST_ONE_TO_N,
	DIST_WIDE, /* log-uniform from 1 ns to 2^38 ns */
	DIST_TWO,  /* two far-apart samples */
	NR_DISTS,
};

static const char *const dist_names[NR_DISTS] = {
	"uniform", "exponential", "bimodal", "constant", "single", "1..N", "wide", "two",
};

/* Fills v (room for 20000) with a distribution; returns the count. */
static size_t gen_dist(enum dist d, uint64_t *v)
{
	uint64_t seed = 0xD15700 + (uint64_t)d;
	size_t n = 20000;

	for (size_t i = 0; i < n; i++) {
		switch (d) {
		case DIST_UNIFORM:
			v[i] = unit_rand_range(&seed, 1000, 100000);
			break;
		case DIST_EXPONENTIAL: {
			/* Geometric steps of 5 us (mean 19 steps) plus jitter:
			 * a discrete exponential without needing libm. */
			uint64_t k = 0;

			while (unit_rand01(&seed) < 0.95)
				k++;
			v[i] = k * 5000 + unit_rand(&seed) % 5000;
			break;
		}
		case DIST_BIMODAL:
			v[i] = unit_rand(&seed) & 1 ? unit_rand_range(&seed, 4000, 6000)
						    : unit_rand_range(&seed, 4000000, 6000000);
			break;
		case DIST_CONSTANT:
			v[i] = 4242;
			break;
		case DIST_SINGLE:
			v[0] = 123456;
			return 1;
		case DIST_ONE_TO_N:
			/* Shuffled order must not matter: insert back to front. */
			v[i] = n - i;
			break;
		case DIST_WIDE:
			v[i] = 1ULL << (unit_rand(&seed) % 38);
			v[i] += unit_rand(&seed) % v[i];
			break;
		case DIST_TWO:
			v[0] = 100;
			v[1] = 7000000000ULL;
			return 2;
		default:
			return 0;
		}
	}
	return n;
}

/* Exact nearest rank on sorted samples: rank ceil(p/100 n), 1-based. */
static uint64_t true_percentile(const uint64_t *sorted, size_t n, unsigned int p)
{
	size_t rank = ((size_t)p * n + 99) / 100;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static uint64_t samples[20000];

Test(cell_percentile, matches_nearest_rank_within_bucket_error)
{
	static const unsigned int ps[] = { 1, 10, 25, 50, 75, 90, 99, 100 };
	struct cell_hist c;

	for (int d = 0; d < NR_DISTS; d++) {
		size_t n = gen_dist(d, samples);

		cell_from_samples(&c, samples, n);
		qsort(samples, n, sizeof(samples[0]), u64_cmp);
		cr_assert_eq(c.min_ns, samples[0]);
		cr_assert_eq(c.max_ns, samples[n - 1]);
		for (unsigned int i = 0; i < ARRAY_SIZE(ps); i++) {
			uint64_t want = true_percentile(samples, n, ps[i]);
			uint64_t got = cell_percentile(&c, ps[i]);
			uint64_t err = got > want ? got - want : want - got;

			cr_assert(got >= c.min_ns && got <= c.max_ns,
				  "%s p%u = %" PRIu64 " outside [min %" PRIu64 ", max %" PRIu64 "]",
				  dist_names[d], ps[i], got, c.min_ns, c.max_ns);
			/* A bucket is at most 1/8 of its low bound wide. */
			cr_assert_leq(err, want / 8 + 1,
				      "%s n=%zu p%u: got %" PRIu64 ", true %" PRIu64
				      " (error %" PRIu64 " > 12.5%%)",
				      dist_names[d], n, ps[i], got, want, err);
		}
	}
}

/* Percentiles below 8 ns are exact: one bucket per nanosecond. */
Test(cell_percentile, exact_for_small_values)
{
	uint64_t v[] = { 0, 1, 1, 2, 3, 5, 7, 7, 7, 6 };
	struct cell_hist c;

	cell_from_samples(&c, v, ARRAY_SIZE(v));
	qsort(v, ARRAY_SIZE(v), sizeof(v[0]), u64_cmp);
	for (unsigned int p = 1; p <= 100; p++)
		cr_assert_eq(cell_percentile(&c, p), true_percentile(v, ARRAY_SIZE(v), p), "p%u",
			     p);
}

/*
 * The rank itself, for every whole p and n up to 200: k samples of 1 then
 * n - k of 5 (both exact buckets). With k the true rank of p the answer
 * is 1; with one sample fewer it is 5. Off by one either way shows: a rank
 * computed in floating point (ceil(p / 100.0 * n)) fails for p = 7,
 * n = 100, where p / 100.0 * n is 7.000000000000001.
 */
Test(cell_percentile, nearest_rank_exact)
{
	static struct cell_hist c;
	unsigned int bad = 0;

	for (uint64_t n = 1; n <= 200; n++) {
		for (unsigned int p = 1; p <= 100; p++) {
			uint64_t k = (p * n + 99) / 100, got;

			memset(&c, 0, sizeof(c));
			for (uint64_t i = 0; i < n; i++)
				cell_record(&c, i < k ? 1 : 5);
			got = cell_percentile(&c, p);
			if (got != 1 && bad++ < 5)
				cr_expect_eq(got, 1,
					     "p%u of n=%" PRIu64 " (%" PRIu64 " ones): %" PRIu64, p,
					     n, k, got);
			if (k < 2)
				continue;
			memset(&c, 0, sizeof(c));
			for (uint64_t i = 0; i < n; i++)
				cell_record(&c, i < k - 1 ? 1 : 5);
			got = cell_percentile(&c, p);
			if (got != 5 && bad++ < 5)
				cr_expect_eq(got, 5,
					     "p%u of n=%" PRIu64 " (%" PRIu64 " ones): %" PRIu64, p,
					     n, k - 1, got);
		}
	}
	cr_assert_eq(bad, 0, "%u (p, n) pairs with a wrong rank", bad);
}

/*
 * The largest sample is known exactly (max_ns), so the nearest-rank p100
 * must be it, not an estimate interpolated inside the top bucket.
 */
Test(cell_percentile, p100_is_max)
{
	struct cell_hist c;

	for (int d = 0; d < NR_DISTS; d++) {
		size_t n = gen_dist(d, samples);

		cell_from_samples(&c, samples, n);
		cr_expect_eq(cell_percentile(&c, 100), c.max_ns,
			     "%s: p100 = %" PRIu64 ", max = %" PRIu64, dist_names[d],
			     cell_percentile(&c, 100), c.max_ns);
	}
}

Test(cell_percentile, empty_cell_is_zero)
{
	struct cell_hist c;

	memset(&c, 0, sizeof(c));
	cr_assert_eq(cell_percentile(&c, 50), 0);
	cr_assert_eq(cell_percentile(&c, 99), 0);
	cr_assert_eq(cell_percentile(&c, 100), 0);
}

/* ---- Merging CPUs ---- */

Test(cell_add, cpus_sum_to_one_cell)
{
	enum { NR_CPUS = 8 };
	static struct cell_hist cpu[NR_CPUS], total, all;
	uint64_t seed = 42;
	size_t n = gen_dist(DIST_WIDE, samples);

	memset(cpu, 0, sizeof(cpu));
	memset(&total, 0, sizeof(total));
	for (size_t i = 0; i < n; i++) {
		/* CPU 0 stays empty, CPU 7 only gets the first few: an
		 * empty or small CPU must not pull min to 0 or max down. */
		unsigned int k = 1 + (unsigned int)(unit_rand(&seed) % (NR_CPUS - 2));

		if (i < 3)
			k = NR_CPUS - 1;
		cell_record(&cpu[k], samples[i]);
	}
	for (unsigned int k = 0; k < NR_CPUS; k++)
		cell_add(&total, &cpu[k]);
	cell_from_samples(&all, samples, n);
	cr_assert_eq(total.count, all.count);
	cr_assert_eq(total.sum_ns, all.sum_ns);
	cr_assert_eq(total.min_ns, all.min_ns, "min %" PRIu64 " vs %" PRIu64, total.min_ns,
		     all.min_ns);
	cr_assert_eq(total.max_ns, all.max_ns);
	for (unsigned int b = 0; b < HIST_NR_BUCKETS; b++)
		cr_assert_eq(total.buckets[b], all.buckets[b], "bucket %u", b);
}

Test(cell_add, empty_cpus_leave_total_empty)
{
	static struct cell_hist cpu, total;

	memset(&cpu, 0, sizeof(cpu));
	memset(&total, 0, sizeof(total));
	cell_add(&total, &cpu);
	cell_add(&total, &cpu);
	cr_assert_eq(total.count, 0);
	cr_assert_eq(total.min_ns, 0);
	cr_assert_eq(total.max_ns, 0);
}

/* ---- Interval differences ---- */

/*
 * Samples [0, split) happened before the previous snapshot, [split, n) in
 * the interval. Checks cell_diff() against the interval's own samples.
 */
static void check_diff(const uint64_t *v, size_t split, size_t n, const char *what)
{
	static struct cell_hist prev, cur, out, want;
	uint64_t lo, hi;

	cell_from_samples(&prev, v, split);
	cell_from_samples(&cur, v, n);
	cell_from_samples(&want, v + split, n - split);
	cell_diff(&out, &cur, &prev);

	cr_assert_eq(out.count, want.count, "%s: count", what);
	cr_assert_eq(out.sum_ns, want.sum_ns, "%s: sum", what);
	for (unsigned int b = 0; b < HIST_NR_BUCKETS; b++)
		cr_assert_eq(out.buckets[b], want.buckets[b], "%s: bucket %u", what, b);
	if (!want.count) {
		cr_assert_eq(out.count, 0, "%s", what);
		return;
	}
	if (!prev.count || want.min_ns < prev.min_ns) {
		cr_assert_eq(out.min_ns, want.min_ns, "%s: min moved, must be exact", what);
	} else {
		/* Not exact, but never above the true minimum nor below its bucket. */
		lo = hist_bucket_lo(hist_bucket(want.min_ns));
		cr_assert(out.min_ns >= lo && out.min_ns <= want.min_ns,
			  "%s: min %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", what,
			  out.min_ns, lo, want.min_ns);
	}
	if (!prev.count || want.max_ns > prev.max_ns) {
		cr_assert_eq(out.max_ns, want.max_ns, "%s: max moved, must be exact", what);
	} else {
		hi = hist_bucket_hi(hist_bucket(want.max_ns)) - 1;
		cr_assert(out.max_ns >= want.max_ns && out.max_ns <= hi,
			  "%s: max %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", what,
			  out.max_ns, want.max_ns, hi);
	}
	cr_assert_leq(out.min_ns, out.max_ns, "%s", what);
}

Test(cell_diff, scenarios)
{
	/* Before: 1000..2000. Each row appends an interval to it. */
	static const struct {
		const char *what;
		uint64_t interval[4];
		size_t n;
	} rows[] = {
		{ "inside the old range", { 1100, 1500, 1900 }, 3 },
		{ "new min and new max", { 500, 1500, 3000 }, 3 },
		{ "new min only", { 10, 1200 }, 2 },
		{ "new max only", { 1300, 90000 }, 2 },
		{ "ties with old extremes", { 1000, 2000 }, 2 },
		{ "one sample", { 1777 }, 1 },
		{ "nothing", { 0 }, 0 },
	};
	uint64_t v[16] = { 1000, 1234, 1500, 2000 };

	for (unsigned int r = 0; r < ARRAY_SIZE(rows); r++) {
		memcpy(v + 4, rows[r].interval, sizeof(rows[r].interval));
		check_diff(v, 4, 4 + rows[r].n, rows[r].what);
	}
	/* Nothing before: the whole run is the interval. */
	check_diff(v, 0, 4, "empty previous snapshot");
	check_diff(v, 0, 0, "both empty");
}

Test(cell_diff, random_splits)
{
	uint64_t seed = 7;
	size_t n = 2000;
	char what[64];

	for (size_t i = 0; i < n; i++)
		samples[i] = unit_rand_range(&seed, 1, 1ULL << (1 + unit_rand(&seed) % 36));
	for (size_t split = 0; split <= n; split += 37) {
		snprintf(what, sizeof(what), "split at %zu", split);
		check_diff(samples, split, n, what);
	}
}

Test(cell_diff, empty_interval_has_count_zero)
{
	static struct cell_hist c, out;
	uint64_t v[] = { 5, 500, 50000 };

	cell_from_samples(&c, v, ARRAY_SIZE(v));
	cell_diff(&out, &c, &c);
	cr_assert_eq(out.count, 0);
	cr_assert_eq(out.sum_ns, 0);
	cr_assert_eq(cell_percentile(&out, 50), 0, "an empty interval has no percentile");
}

/* ---- log2 view ---- */

/* The slot a value belongs to, straight from its bits. */
static unsigned int true_slot(uint64_t v)
{
	unsigned int k = v < 2 ? 0 : slow_msb(v);

	return k < LOG2_SLOTS ? k : LOG2_SLOTS - 1;
}

static void check_log2(const uint64_t *v, size_t n, const char *what)
{
	static struct cell_hist c;
	uint64_t slots[LOG2_SLOTS], want[LOG2_SLOTS] = { 0 }, sum = 0;

	cell_from_samples(&c, v, n);
	for (size_t i = 0; i < n; i++)
		want[true_slot(v[i])]++;
	cr_assert_eq(cell_log2(&c, slots), LOG2_SLOTS);
	for (unsigned int k = 0; k < LOG2_SLOTS; k++) {
		cr_expect_eq(slots[k], want[k],
			     "%s: slot %u [2^%u, 2^%u): %" PRIu64 ", want %" PRIu64, what, k, k,
			     k + 1, slots[k], want[k]);
		sum += slots[k];
	}
	cr_assert_eq(sum, c.count, "%s: slots sum to %" PRIu64 ", count %" PRIu64, what, sum,
		     c.count);
}

Test(cell_log2, slots_match_samples)
{
	uint64_t seed = 99;
	size_t n = 0;

	samples[n++] = 0;
	samples[n++] = 1;
	samples[n++] = 2;
	samples[n++] = 3;
	/* Both edges of every slot below 2^40, then random values. */
	for (unsigned int k = 1; k < HIST_MAX_EXP; k++) {
		samples[n++] = 1ULL << k;
		samples[n++] = (1ULL << (k + 1)) - 1;
	}
	while (n < 10000) {
		uint64_t v = unit_rand(&seed) >> (64 - HIST_MAX_EXP);

		samples[n++] = v >> (unit_rand(&seed) % HIST_MAX_EXP);
	}
	check_log2(samples, n, "below 2^40");
}

/*
 * Values of 2^40 ns and more belong in the last, open-ended slot
 * (LOG2_SLOTS - 1, printed as "..."), values just below 2^40 in slot 39:
 * the open-ended bucket must not be folded in with [15 * 2^36, 2^40).
 */
Test(cell_log2, values_from_2_40_in_last_slot)
{
	uint64_t v[] = {
		1ULL << 40, (1ULL << 40) + 12345, 1ULL << 45,
		UINT64_MAX, (1ULL << 40) - 1,	  1ULL << 39,
	};

	check_log2(v, ARRAY_SIZE(v), "from 2^39 up");
}

/* ---- Rows in whole units (-u, -m) ---- */

/* Each row of cell_rows() holds exactly the samples within its bounds:
 * whole rows in units of unit ns (the last open-ended), the others in ns;
 * together they hold every sample once. */
static void check_rows(const uint64_t *v, size_t n, uint64_t unit)
{
	static struct cell_hist c;
	struct hist_row rows[HIST_ROWS];
	unsigned int nr;
	uint64_t sum = 0;

	cell_from_samples(&c, v, n);
	for (size_t i = 0; i < n; i++) /* as bpf/record.bpf.h hist_add() */
		c.unit_slots[unit_slot(v[i] / unit)]++;
	nr = cell_rows(&c, unit, rows);
	cr_assert_eq(nr, unit == 1 ? LOG2_SLOTS : hist_msb(unit) + 1 + UNIT_SLOTS - 1);
	for (unsigned int r = 0; r < nr; r++) {
		uint64_t lo = rows[r].lo, hi = rows[r].hi, want = 0;

		if (rows[r].whole && unit > 1) {
			lo *= unit;
			hi = rows[r].open ? UINT64_MAX : (hi + 1) * unit - 1;
		} else if (rows[r].open) {
			hi = UINT64_MAX;
		}
		if (r)
			cr_assert(rows[r].whole || !rows[r - 1].whole, "ns rows before whole ones");
		for (size_t i = 0; i < n; i++)
			want += v[i] >= lo && v[i] <= hi;
		cr_expect_eq(rows[r].count, want,
			     "unit %" PRIu64 " row %u [%" PRIu64 ", %" PRIu64 "]: %" PRIu64
			     ", want %" PRIu64,
			     unit, r, lo, hi, rows[r].count, want);
		sum += rows[r].count;
	}
	cr_assert_eq(sum, n, "rows sum to %" PRIu64 ", %zu samples", sum, n);
}

Test(cell_rows, every_sample_in_its_row_in_ns_us_and_ms)
{
	static const uint64_t units[] = { 1, 1000, 1000000 };
	uint64_t seed = 7;
	size_t n = 0;

	/* Both sides of every ns power of two and of every whole-unit one,
	 * the unit itself, then random values of every size. */
	for (unsigned int k = 0; k < 45; k++) {
		samples[n++] = 1ULL << k;
		samples[n++] = (1ULL << k) - 1;
		samples[n++] = (1ULL << k) * 1000;
		samples[n++] = (1ULL << k) * 1000 - 1;
		samples[n++] = (1ULL << k) * 1000000;
		samples[n++] = (1ULL << k) * 1000000 - 1;
	}
	while (n < 10000) {
		uint64_t r = unit_rand(&seed) >> (64 - 46);

		samples[n++] = r >> (unit_rand(&seed) % 46);
	}
	for (unsigned int u = 0; u < ARRAY_SIZE(units); u++)
		check_rows(samples, n, units[u]);
}

/* Merged and diffed cells keep their whole-unit slots. */
Test(cell_rows, unit_slots_merge_and_diff)
{
	static struct cell_hist a, b, sum, back;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&sum, 0, sizeof(sum));
	cell_record(&a, 1500);
	a.unit_slots[unit_slot(1500 / 1000)]++;
	cell_record(&b, 999);
	b.unit_slots[unit_slot(999 / 1000)]++;
	cell_record(&b, 5000000);
	b.unit_slots[unit_slot(5000000 / 1000)]++;
	cell_add(&sum, &a);
	cell_add(&sum, &b);
	cr_assert_eq(sum.unit_slots[0], 1);
	cr_assert_eq(sum.unit_slots[1], 1);
	cr_assert_eq(sum.unit_slots[13], 1); /* 5000 us: [4096, 8191] */
	cell_diff(&back, &sum, &a);
	for (unsigned int k = 0; k < UNIT_SLOTS; k++)
		cr_assert_eq(back.unit_slots[k], b.unit_slots[k], "slot %u", k);
}
