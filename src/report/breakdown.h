/* SPDX-License-Identifier: GPL-2.0 */
/* Cells broken down by process, disk, request flags or cgroup (-P, -D, -F, -G):
 * interval differences and ranking, independent of the kernel. */
#ifndef BREAKDOWN_H
#define BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"

struct breakdown_entry {
	struct breakdown_key key;
	char comm[COMM_LEN];
	const char *cgroup; /* -G: the path of key.cgid (cgname.h); NULL: unknown */
	struct cell_hist cell;
};

struct breakdown_set {
	struct breakdown_entry *v;
	size_t n;
};

/* Orders by key, so that two snapshots can be matched. */
void breakdown_sort_by_key(struct breakdown_set *set);

/* out = cur - prev, key by key (both sorted by key); empty keys dropped. */
int breakdown_diff(struct breakdown_set *out, const struct breakdown_set *cur,
		   const struct breakdown_set *prev);

/* Orders by cell, then busiest first: the order reports print in. */
void breakdown_sort_for_report(struct breakdown_set *set);

int breakdown_copy(struct breakdown_set *out, const struct breakdown_set *in);
void breakdown_free(struct breakdown_set *set);

/* Name of RQ_FLAG_* bit i ("sync", "meta", "fua", "preflush"). */
const char *rq_flag_name(unsigned int i);

/* "major:minor" of a kernel dev_t. */
void format_kdev(uint32_t dev, char *buf, size_t sz);

/* "sync,meta" for RQ_FLAG_* bits, "-" for none. */
void rq_flags_string(unsigned int flags, char *buf, size_t sz);

#endif /* BREAKDOWN_H */
