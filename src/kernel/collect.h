/* SPDX-License-Identifier: GPL-2.0 */
/* Reads the kernel's maps into a report-ready snapshot. Never clears a map:
 * intervals are differences of snapshots. */
#ifndef COLLECT_H
#define COLLECT_H

#include <stdint.h>
#include "attach.h"
#include "hist.h"
#include "breakdown.h"
#include "snapshot.h"
#include "stats.h"

int snapshot_take(struct tracer *t, struct snapshot *snap);
void snapshot_free(struct snapshot *snap);

/*
 * -G in exporter mode: the keys of cgroups gone for grace_s seconds or more
 * (by now, CLOCK_MONOTONIC seconds) leave the kernel's map and the snapshot,
 * so that short-lived cgroups do not fill the map nor the scrape. Returns
 * the number of cgroups expired.
 */
unsigned int snapshot_expire_cgroups(struct tracer *t, struct snapshot *snap, unsigned int grace_s,
				     double now);

/* Events dropped for reason since the start (0 if the map cannot be read). */
uint64_t tracer_drops(struct tracer *t, unsigned int reason);

#endif /* COLLECT_H */
