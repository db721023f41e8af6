/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iostackbreak diff A B: two runs side by side per layer and op, from their
 * JSON reports or their recordings, with whether each change is larger than
 * the noise of sampling (compare.c says the rule).
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdbool.h>
#include <stdio.h>
#include "hist.h"

/* One run's cells (every key of a breakdown summed). */
struct cmp_side {
	struct cell_hist cells[NR_LAYERS][NR_OPS];
	bool have[NR_LAYERS][NR_OPS]; /* traced in that run */
	/* The calls of the root layer split into parts: their time per op,
	 * and each part's share of it (sum_ns). */
	uint64_t calls_ns[NR_FS_OPS];
	uint64_t part_ns[NR_FS_OPS][NR_PARTS];
};

/* From a JSON report (its last report object). 0, or -1 with one line in err. */
int cmp_load_json(struct cmp_side *s, const char *text, char *err, size_t errsz);

/* From a recording: its events counted as report FILE counts them. */
int cmp_load_recording(struct cmp_side *s, FILE *f, char *err, size_t errsz);

/*
 * Is the p-th percentile of b outside the noise of a's? The two
 * percentiles' distribution-free confidence intervals (compare.c) do not
 * overlap; false when either side has too few samples to judge.
 */
bool cmp_percentile_changed(const struct cell_hist *a, const struct cell_hist *b, double p);

/* Are two counts further apart than Poisson noise allows (3 sigma)? */
bool cmp_count_changed(uint64_t a, uint64_t b);

/* The table, then one line naming what changed (or that nothing did).
 * Returns the number of significant changes. */
unsigned int cmp_print(FILE *out, const struct cmp_side *a, const struct cmp_side *b);

#endif /* COMPARE_H */
