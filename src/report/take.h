/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where every report comes from. The interval reports, the final report
 * and every scrape of the exporter all take theirs here: the kernel's maps
 * read into a snapshot (collect.c), the snapshot made a report against the
 * last one kept (an interval) or against nothing (counts since start), and
 * the disks that went away noted in it.
 */
#ifndef TAKE_H
#define TAKE_H

#include <stdbool.h>
#include <time.h>
#include "collect.h"
#include "report.h"

struct report_source {
	struct tracer *tracer;
	const struct config *cfg;
	const struct plan *plan; /* what attached */
	uint32_t disk;		 /* -d as a kernel dev_t; 0: none */
	/* The exporter's counts never go down: every report since start, and
	 * the cgroups gone for longer than --cgroup-grace dropped first. */
	bool since_start;
	struct snapshot prev, cur;
	bool have_prev;		/* prev: the snapshot the next interval starts from */
	struct timespec t_last; /* when that interval began */
};

/* Reports from now on cover the time from now. */
void report_source_start(struct report_source *src, struct tracer *t, const struct config *cfg,
			 const struct plan *plan, uint32_t disk);

/*
 * Takes the report of the time since the last interval ended (or since
 * the start). Returns 0, or a negative errno when the maps could not be
 * read; report_release() frees r. With `interval`, the next report starts
 * where this one ends.
 */
int report_take(struct report_source *src, struct report *r, bool interval);

void report_source_free(struct report_source *src);

#endif /* TAKE_H */
