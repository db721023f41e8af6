/* SPDX-License-Identifier: GPL-2.0 */
/* Histogram maths: bucket bounds, merging CPUs, interval differences,
 * percentiles and the classic log2 view. */
#ifndef HIST_H
#define HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "iostackbreak.h"

/* Bounds of bucket i in ns: [lo, hi). The last bucket is open-ended. */
uint64_t hist_bucket_lo(unsigned int i);
uint64_t hist_bucket_hi(unsigned int i);

/* Adds one CPU's cell into an all-CPU total. */
void cell_add(struct cell_hist *total, const struct cell_hist *cpu);

/*
 * The part of cur not in prev (cur is a later snapshot of the same cell).
 * min and max of an interval are exact when the run's extreme moved during
 * it, else bounded by the interval's outermost non-empty buckets.
 */
void cell_diff(struct cell_hist *out, const struct cell_hist *cur, const struct cell_hist *prev);

/* A histogram of a part that leaves out the requests or calls where the
 * part took no time: adds them as zeros, up to count in all. */
void cell_pad_zeros(struct cell_hist *h, uint64_t count);

/* The interval's histograms of the n parts of count calls or requests:
 * cell_diff of each, padded with the zeros of those it left out. */
void cell_diff_parts(struct cell_hist *out, const struct cell_hist *cur,
		     const struct cell_hist *prev, unsigned int n, uint64_t count);

/*
 * p-th percentile (0 < p <= 100) in ns, by nearest rank, interpolated
 * within its bucket and clamped to [min, max]. 0 when the cell is empty.
 */
uint64_t cell_percentile(const struct cell_hist *c, double p);

/* Folds buckets into power-of-two slots: slot k holds [2^k, 2^(k+1)) ns,
 * slot 0 holds [0, 2). Returns the number of slots (HIST_MAX_EXP + 1). */
#define LOG2_SLOTS (HIST_MAX_EXP + 1)
unsigned int cell_log2(const struct cell_hist *c, uint64_t slots[LOG2_SLOTS]);

/*
 * The rows of a text histogram, in a unit of `unit` ns (1, 1000, 1000000).
 * In ns: the power-of-two slots above. Else, below one unit, the slots
 * that end there and a row for the rest of it, bounds in ns (whole false);
 * from one unit on, whole units by power of two (unit_slots: "2 -> 3", as
 * biolatency -m prints them; whole true). hi is inclusive; open: the last,
 * open-ended row. Returns the number of rows, empty ones included.
 */
struct hist_row {
	uint64_t lo, hi, count;
	bool whole, open;
};
#define HIST_ROWS (LOG2_SLOTS + UNIT_SLOTS)
unsigned int cell_rows(const struct cell_hist *c, uint64_t unit, struct hist_row rows[HIST_ROWS]);

#endif /* HIST_H */
