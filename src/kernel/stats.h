/* SPDX-License-Identifier: GPL-2.0 */
/* --stats: what the tracer itself costs, from the kernel's own accounting
 * (BPF_STATS_RUN_TIME per program) and the memory of its maps. */
#ifndef STATS_H
#define STATS_H

#include <stdint.h>
#include <stdio.h>
#include "attach.h"
#include "iostackbreak.h"

struct layer_cost {
	unsigned int programs; /* loaded programs serving the layer */
	uint64_t runs;	       /* times they ran (entries and exits) */
	uint64_t run_time_ns;  /* time they ran, as the kernel measured it */
	/* Runs the kernel skipped: the program was already running on that
	 * CPU (an interrupt in its run fired its tracepoint again). */
	uint64_t recursion_misses;
};

struct self_stats {
	struct layer_cost layers[NR_LAYERS];
	struct layer_cost other; /* programs of no layer: sched_switch, forks */
	uint64_t map_bytes;	 /* memlock of every map, from /proc/self/fdinfo */
};

/* Turns on the kernel's run-time accounting for as long as we live; the
 * kernel turns it off when the returned descriptor closes. -1 on error. */
int stats_enable(char *err, size_t errsz);

int stats_read(struct tracer *t, struct self_stats *out);

#endif /* STATS_H */
