// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "blk_stamps.h"

/* The first line of a small sysfs file, or -1. */
static int read_line(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)sz, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * Is QUEUE_FLAG_STATS on for the disk? debugfs names the queue's flags
 * (block/<disk>/state) where it is mounted. Else writeback throttling
 * tells: while it is attached and on (wbt_lat_usec > 0) its stats
 * callback keeps the flag set. iocost and iolatency set it too, but
 * nothing in sysfs says so per disk: such a disk falls back.
 */
static bool stats_on(const char *root, const char *disk, char *why, size_t sz)
{
	char path[PATH_MAX], line[512];
	unsigned long lat;
	char *end;

	snprintf(path, sizeof(path), "%s/kernel/debug/block/%s/state", root, disk);
	if (!read_line(path, line, sizeof(line))) {
		/* "SAME_COMP|IO_STAT|...|STATS|..." */
		for (char *tok = strtok(line, "|"); tok; tok = strtok(NULL, "|")) {
			if (!strcmp(tok, "STATS")) {
				snprintf(why, sz, "%s: queue flag STATS (debugfs)", disk);
				return true;
			}
		}
		snprintf(why, sz,
			 "%s: its queue has no STATS flag (debugfs), so the kernel does not stamp "
			 "rq->io_start_time_ns",
			 disk);
		return false;
	}
	snprintf(path, sizeof(path), "%s/block/%s/queue/wbt_lat_usec", root, disk);
	if (!read_line(path, line, sizeof(line))) {
		lat = strtoul(line, &end, 10);
		if (end != line && !*end && lat) {
			snprintf(why, sz, "%s: queue stats on for wbt (wbt_lat_usec %lu)", disk,
				 lat);
			return true;
		}
	}
	snprintf(why, sz,
		 "%s: wbt is off (queue/wbt_lat_usec 0 or absent) and no debugfs shows its queue "
		 "flags, so rq->io_start_time_ns may not be stamped",
		 disk);
	return false;
}

static bool iostats_on(const char *root, const char *disk, char *why, size_t sz)
{
	char path[PATH_MAX], line[32];

	snprintf(path, sizeof(path), "%s/block/%s/queue/iostats", root, disk);
	if (!read_line(path, line, sizeof(line)) && !strcmp(line, "1")) {
		snprintf(why, sz, "%s: iostats on", disk);
		return true;
	}
	snprintf(why, sz, "%s: queue/iostats is not 1, so the kernel keeps no rq->start_time_ns",
		 disk);
	return false;
}

static bool disk_stamped(const char *root, const char *disk, bool queued, char *why, size_t sz)
{
	return queued ? iostats_on(root, disk, why, sz) : stats_on(root, disk, why, sz);
}

bool blk_disks_stamped(const char *sysfs_root, const char *disk, bool queued, char *why,
		       size_t whysz)
{
	char path[PATH_MAX], one[256] = "";
	unsigned int n = 0;
	struct dirent *de;
	bool ok = true;
	DIR *dir;

	if (disk)
		return disk_stamped(sysfs_root, disk, queued, why, whysz);
	snprintf(path, sizeof(path), "%s/block", sysfs_root);
	dir = opendir(path);
	if (!dir) {
		snprintf(why, whysz, "cannot list %s", path);
		return false;
	}
	while (ok && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		/* Bio-based (zram, dm): no request, no block_rq tracepoint. */
		snprintf(path, sizeof(path), "%s/block/%s/mq", sysfs_root, de->d_name);
		if (access(path, F_OK))
			continue;
		ok = disk_stamped(sysfs_root, de->d_name, queued, one, sizeof(one));
		n++;
	}
	closedir(dir);
	if (!ok)
		snprintf(why, whysz, "%s", one);
	else
		snprintf(why, whysz, "%s on all %u request-based disks",
			 queued ? "iostats" : "queue stats", n);
	return ok;
}
