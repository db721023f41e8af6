/* SPDX-License-Identifier: GPL-2.0 */
/* Cells broken down by process, disk or request flags (-P, -D, -F):
 * interval differences and ranking, independent of the kernel. */
#ifndef SPLIT_H
#define SPLIT_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"

struct split_entry {
	struct split_key key;
	char comm[COMM_LEN];
	cell_stats cell;
};

struct split_set {
	struct split_entry *v;
	size_t n;
};

/* Orders by key, so that two snapshots can be matched. */
void split_sort_by_key(struct split_set *set);

/* out = cur - prev, key by key (both sorted by key); empty keys dropped. */
int split_diff(struct split_set *out, const struct split_set *cur, const struct split_set *prev);

/* Orders by cell, then busiest first: the order reports print in. */
void split_sort_for_report(struct split_set *set);

int split_copy(struct split_set *out, const struct split_set *in);
void split_free(struct split_set *set);

/* Name of RQ_FLAG_* bit i ("sync", "meta", "fua", "preflush"). */
const char *rq_flag_name(unsigned int i);

/* "major:minor" of a kernel dev_t. */
void format_kdev(uint32_t dev, char *buf, size_t sz);

/* "sync,meta" for RQ_FLAG_* bits, "-" for none. */
void rq_flags_string(unsigned int flags, char *buf, size_t sz);

#endif /* SPLIT_H */
