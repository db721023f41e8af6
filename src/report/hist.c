// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "hist.h"

uint64_t hist_bucket_lo(unsigned int i)
{
	unsigned int e, m;

	if (i < HIST_SUB)
		return i;
	e = i / HIST_SUB + HIST_SUB_BITS - 1; /* inverse of hist_bucket() */
	m = i % HIST_SUB + HIST_SUB;
	return (uint64_t)m << (e - HIST_SUB_BITS);
}

uint64_t hist_bucket_hi(unsigned int i)
{
	if (i >= HIST_NR_BUCKETS - 1)
		return UINT64_MAX;
	return hist_bucket_lo(i + 1);
}

void cell_add(struct cell_hist *total, const struct cell_hist *cpu)
{
	total->errors += cpu->errors;
	total->error_sum_ns += cpu->error_sum_ns;
	total->bytes += cpu->bytes;
	if (!cpu->count)
		return;
	if (!total->count || cpu->min_ns < total->min_ns)
		total->min_ns = cpu->min_ns;
	if (cpu->max_ns > total->max_ns)
		total->max_ns = cpu->max_ns;
	total->count += cpu->count;
	total->sum_ns += cpu->sum_ns;
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++)
		total->buckets[i] += cpu->buckets[i];
	for (unsigned int i = 0; i < UNIT_SLOTS; i++)
		total->unit_slots[i] += cpu->unit_slots[i];
}

void cell_pad_zeros(struct cell_hist *h, uint64_t count)
{
	if (h->count >= count)
		return;
	h->buckets[0] += count - h->count;
	h->unit_slots[0] += count - h->count;
	h->count = count;
	h->min_ns = 0;
}

void cell_diff_parts(struct cell_hist *out, const struct cell_hist *cur,
		     const struct cell_hist *prev, unsigned int n, uint64_t count)
{
	for (unsigned int i = 0; i < n; i++) {
		cell_diff(&out[i], &cur[i], &prev[i]);
		cell_pad_zeros(&out[i], count);
	}
}

void cell_diff(struct cell_hist *out, const struct cell_hist *cur, const struct cell_hist *prev)
{
	int first = -1, last = -1;

	memset(out, 0, sizeof(*out));
	out->errors = cur->errors - prev->errors;
	out->error_sum_ns = cur->error_sum_ns - prev->error_sum_ns;
	out->bytes = cur->bytes - prev->bytes;
	out->count = cur->count - prev->count;
	out->sum_ns = cur->sum_ns - prev->sum_ns;
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		out->buckets[i] = cur->buckets[i] - prev->buckets[i];
		if (out->buckets[i]) {
			if (first < 0)
				first = (int)i;
			last = (int)i;
		}
	}
	for (unsigned int i = 0; i < UNIT_SLOTS; i++)
		out->unit_slots[i] = cur->unit_slots[i] - prev->unit_slots[i];
	if (!out->count)
		return;
	if (!prev->count || cur->min_ns < prev->min_ns)
		out->min_ns = cur->min_ns;
	else
		out->min_ns = first >= 0 ? hist_bucket_lo(first) : cur->min_ns;
	if (cur->max_ns > prev->max_ns || !prev->count) {
		out->max_ns = cur->max_ns;
	} else {
		out->max_ns = last >= 0 ? hist_bucket_hi(last) - 1 : cur->max_ns;
		if (out->max_ns > cur->max_ns)
			out->max_ns = cur->max_ns;
	}
	if (out->min_ns < cur->min_ns)
		out->min_ns = cur->min_ns;
}

uint64_t cell_percentile(const struct cell_hist *c, double p)
{
	uint64_t rank, seen = 0;
	double pos;

	if (!c->count)
		return 0;
	/* Nearest rank: the smallest value with at least p% at or below it.
	 * p * n first: p / 100 is inexact in binary (7 / 100 * 100 > 7). */
	pos = p * (double)c->count / 100.0;
	rank = (uint64_t)pos;
	if ((double)rank < pos)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank >= c->count)
		return c->max_ns; /* the extremes are known exactly */
	if (rank == 1)
		return c->min_ns;
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		uint64_t n = c->buckets[i], lo, hi, v;

		if (seen + n < rank) {
			seen += n;
			continue;
		}
		lo = hist_bucket_lo(i);
		hi = hist_bucket_hi(i);
		if (hi == UINT64_MAX || hi > c->max_ns + 1)
			hi = c->max_ns + 1;
		if (lo < c->min_ns)
			lo = c->min_ns;
		if (hi <= lo)
			return lo;
		/* Spread the bucket's samples evenly over its width. */
		v = lo + (uint64_t)((double)(hi - lo) * ((double)(rank - seen) - 0.5) / (double)n);
		if (v < c->min_ns)
			v = c->min_ns;
		if (v > c->max_ns)
			v = c->max_ns;
		return v;
	}
	return c->max_ns;
}

unsigned int cell_log2(const struct cell_hist *c, uint64_t slots[LOG2_SLOTS])
{
	memset(slots, 0, sizeof(uint64_t) * LOG2_SLOTS);
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		uint64_t lo = hist_bucket_lo(i);
		unsigned int k = lo < 2 ? 0 : hist_msb(lo);

		/* Sub-buckets never straddle a power of two, so this is exact. */
		if (k >= LOG2_SLOTS)
			k = LOG2_SLOTS - 1;
		slots[k] += c->buckets[i];
	}
	return LOG2_SLOTS;
}

unsigned int cell_rows(const struct cell_hist *c, uint64_t unit, struct hist_row rows[HIST_ROWS])
{
	uint64_t slots[LOG2_SLOTS], below = 0;
	unsigned int n = 0, k, kmax;

	cell_log2(c, slots);
	if (unit <= 1) {
		for (k = 0; k < LOG2_SLOTS; k++)
			rows[n++] = (struct hist_row){ .lo = k ? 1ULL << k : 0,
						       .hi = (1ULL << (k + 1)) - 1,
						       .count = slots[k],
						       .whole = true,
						       .open = k == LOG2_SLOTS - 1 };
		return n;
	}
	/* Below one unit: the ns slots that end there, then the rest of it. */
	kmax = hist_msb(unit);
	for (k = 0; k < kmax; k++) {
		rows[n++] = (struct hist_row){ .lo = k ? 1ULL << k : 0,
					       .hi = (1ULL << (k + 1)) - 1,
					       .count = slots[k] };
		below += slots[k];
	}
	rows[n++] = (struct hist_row){ .lo = 1ULL << kmax,
				       .hi = unit - 1,
				       .count = c->unit_slots[0] - below };
	/* From one unit on: whole units, a power of two each. */
	for (k = 1; k < UNIT_SLOTS; k++)
		rows[n++] = (struct hist_row){ .lo = 1ULL << (k - 1),
					       .hi = (1ULL << k) - 1,
					       .count = c->unit_slots[k],
					       .whole = true,
					       .open = k == UNIT_SLOTS - 1 };
	return n;
}
