/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Access patterns (--pattern): the kernel's pattern keys as a set, their
 * interval differences, and the figures reports print (bpf/pattern.h says
 * what a stream and an access are). Independent of the kernel.
 */
#ifndef REPORT_PATTERN_H
#define REPORT_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pattern.h"

struct pattern_entry {
	struct pattern_key key;
	char comm[COMM_LEN];
	struct pattern_hist h;
};

struct pattern_set {
	struct pattern_entry *v;
	size_t n;
};

/* Orders by key (level, op, then the breakdown's fields). */
void pattern_sort(struct pattern_set *set);

/* out = cur - prev, key by key (both sorted); keys with no access dropped. */
int pattern_diff(struct pattern_set *out, const struct pattern_set *cur,
		 const struct pattern_set *prev);

void pattern_free(struct pattern_set *set);

/* Adds every field of b to a. */
void pattern_hist_add(struct pattern_hist *a, const struct pattern_hist *b);

/* The accesses of a level and op, every key summed. Returns their count. */
uint64_t pattern_total(const struct pattern_set *set, unsigned int level, unsigned int op,
		       struct pattern_hist *out);

/* Does any key of the set break a level down (-P, -D, -G, --file)? */
bool pattern_broken_down(const struct pattern_set *set);

/* Percent of accesses that were sequential (0 with none). */
double pattern_seq_pct(const struct pattern_hist *h);

/* The level and op of the pattern a cell of the report holds, or false: the
 * syscall layer's read and write (call level), blk's and bio's. */
bool pattern_of_cell(unsigned int layer, unsigned int op, unsigned int *level, unsigned int *pop);

/* The layer whose cells a level's accesses are (syscall, blk, bio), and its name. */
unsigned int pattern_level_layer(unsigned int level);
const char *pattern_level_name(unsigned int level);

/* Bytes of slot k's low bound in the gap and size histograms: 2^k. */
uint64_t pattern_slot_lo(unsigned int k);

#endif /* REPORT_PATTERN_H */
