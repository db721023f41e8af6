// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "disk.h"
#include "take.h"

void report_source_start(struct report_source *src, struct tracer *t, const struct config *cfg,
			 const struct plan *plan, uint32_t disk)
{
	src->tracer = t;
	src->cfg = cfg;
	src->plan = plan;
	src->disk = disk;
	clock_gettime(CLOCK_MONOTONIC, &src->t_last);
}

static double seconds_between(const struct timespec *from, const struct timespec *to)
{
	return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_nsec - from->tv_nsec) / 1e9;
}

int report_take(struct report_source *src, struct report *r, bool interval)
{
	const struct config *cfg = src->cfg;
	bool against_prev = src->have_prev && !src->since_start;
	struct timespec now;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &now);
	err = snapshot_take(src->tracer, &src->cur);
	if (!err && src->since_start && cfg->per_cgroup)
		snapshot_expire_cgroups(src->tracer, &src->cur, cfg->cgroup_grace,
					(double)now.tv_sec + now.tv_nsec / 1e9);
	if (!err)
		err = report_build(r, cfg, src->plan, &src->cur, against_prev ? &src->prev : NULL,
				   seconds_between(&src->t_last, &now), disk_name_kdev);
	if (err) {
		snapshot_free(&src->cur);
		return err;
	}
	/* With -D, the disks of the whole run so far: one gone quiet in this
	 * interval is still named when it goes away. */
	report_find_gone_disks(r, &src->cur.breakdowns, src->disk, cfg->disk, disk_present_kdev);
	if (interval && !src->since_start) {
		snapshot_free(&src->prev);
		src->prev = src->cur;
		memset(&src->cur, 0, sizeof(src->cur));
		src->have_prev = true;
		src->t_last = now;
	} else {
		snapshot_free(&src->cur); /* the report holds copies of what it reads */
	}
	return 0;
}

void report_source_free(struct report_source *src)
{
	snapshot_free(&src->cur);
	snapshot_free(&src->prev);
	src->have_prev = false;
}
