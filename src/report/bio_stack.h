/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack of devices under -D with the bio layer: each level (a device
 * that remapped bios onto another, dm-0 -> vda) with the time of those bios
 * below, and the device's own time: its bios' time less that of the bios
 * it sent below.
 */
#ifndef BIO_STACK_H
#define BIO_STACK_H

#include <stddef.h>
#include <stdint.h>
#include "report.h"

struct bio_level {
	unsigned int op;
	uint32_t upper, lower;	       /* kernel dev_t: dm-0, then the device below it */
	const struct cell_hist *below; /* the bios upper sent to lower, timed on lower */
	uint64_t upper_count;	       /* upper's bios of this op */
	uint64_t upper_sum_ns;	       /* their time */
	/* upper's time less the time of every bio it sent below (to any
	 * device), in this op; 0 if that is negative (bios in flight at the
	 * report's edge) */
	uint64_t own_ns;
};

/* The levels of the report, by op then device, at most max; returns how
 * many there are. None without -D or the bio layer. */
size_t bio_stack(const struct report *r, struct bio_level *out, size_t max);

#define MAX_BIO_LEVELS 64

#endif /* BIO_STACK_H */
