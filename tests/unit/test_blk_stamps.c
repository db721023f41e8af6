// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the kernel stamps a disk's requests (blk_stamps.c), against a
 * fake sysfs: block/<disk>/queue/{iostats,wbt_lat_usec}, block/<disk>/mq
 * for request-based disks, kernel/debug/block/<disk>/state for debugfs.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "blk_stamps.h"

static char root[256];
static char why[512];

/* root/<a>/<b>/.../<file> = text, making the directories on the way. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		cr_assert(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s", path);
		*p = '/';
	}
	if (!text) {
		cr_assert(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s", path);
		return;
	}
	f = fopen(path, "w");
	cr_assert_not_null(f, "create %s", path);
	fputs(text, f);
	fclose(f);
}

/* A request-based disk with wbt at lat (NULL: no wbt file) and iostats. */
static void mq_disk(const char *name, const char *lat, const char *iostats)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "block/%s/mq", name);
	put(rel, NULL);
	snprintf(rel, sizeof(rel), "block/%s/queue/iostats", name);
	put(rel, iostats);
	if (lat) {
		snprintf(rel, sizeof(rel), "block/%s/queue/wbt_lat_usec", name);
		put(rel, lat);
	}
}

static void make_root(void)
{
	snprintf(root, sizeof(root), "/tmp/iostackbreak-stamps-XXXXXX");
	cr_assert_not_null(mkdtemp(root), "mkdtemp");
	mq_disk("loop0", "2000\n", "1\n");
	mq_disk("vda", "75000\n", "1\n");
	/* Bio-based: no mq, no wbt, iostats 0; never seen by block_rq_*. */
	put("block/zram0/queue/iostats", "0\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_root(void)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(blk_stamps, .init = make_root, .fini = remove_root);

Test(blk_stamps, wbt_on_means_io_start_is_stamped)
{
	cr_assert(blk_disks_stamped(root, "loop0", false, why, sizeof(why)), "%s", why);
	cr_assert(strstr(why, "wbt_lat_usec 2000"), "%s", why);
	/* Every request-based disk; zram is not one. */
	cr_assert(blk_disks_stamped(root, NULL, false, why, sizeof(why)), "%s", why);
	cr_assert(strstr(why, "all 2 request-based disks"), "%s", why);
}

Test(blk_stamps, wbt_off_or_absent_falls_back_and_names_the_disk)
{
	put("block/vda/queue/wbt_lat_usec", "0\n");
	cr_assert_not(blk_disks_stamped(root, "vda", false, why, sizeof(why)));
	cr_assert(strstr(why, "vda: wbt is off"), "%s", why);
	/* One disk without stamps: no disk gets the one-program path. */
	cr_assert_not(blk_disks_stamped(root, NULL, false, why, sizeof(why)));
	cr_assert(strstr(why, "vda"), "%s", why);
	mq_disk("nvme0n1", NULL, "1\n");
	cr_assert_not(blk_disks_stamped(root, "nvme0n1", false, why, sizeof(why)));
}

Test(blk_stamps, debugfs_queue_flags_decide_when_readable)
{
	mq_disk("nvme0n1", NULL, "1\n");
	put("kernel/debug/block/nvme0n1/state", "SAME_COMP|IO_STAT|STATS|REGISTERED\n");
	cr_assert(blk_disks_stamped(root, "nvme0n1", false, why, sizeof(why)), "%s", why);
	cr_assert(strstr(why, "STATS"), "%s", why);
	/* debugfs says no: wbt's file is not asked. */
	put("kernel/debug/block/loop0/state", "SAME_COMP|IO_STAT|STATS_X|REGISTERED\n");
	cr_assert_not(blk_disks_stamped(root, "loop0", false, why, sizeof(why)));
	cr_assert(strstr(why, "no STATS flag"), "%s", why);
}

Test(blk_stamps, queued_needs_iostats)
{
	cr_assert(blk_disks_stamped(root, NULL, true, why, sizeof(why)), "%s", why);
	put("block/loop0/queue/iostats", "0\n");
	cr_assert_not(blk_disks_stamped(root, NULL, true, why, sizeof(why)));
	cr_assert(strstr(why, "loop0: queue/iostats is not 1"), "%s", why);
	/* The device's time does not need iostats. */
	cr_assert(blk_disks_stamped(root, "loop0", false, why, sizeof(why)), "%s", why);
}

Test(blk_stamps, no_sysfs_is_a_reason_not_a_crash)
{
	cr_assert_not(blk_disks_stamped("/nonexistent-sysfs", NULL, false, why, sizeof(why)));
	cr_assert(strstr(why, "cannot list"), "%s", why);
	cr_assert_not(blk_disks_stamped("/nonexistent-sysfs", "sda", true, why, sizeof(why)));
}
