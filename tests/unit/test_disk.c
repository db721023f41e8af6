// SPDX-License-Identifier: GPL-2.0
/*
 * Disk names and numbers against a fake sysfs in a temporary directory,
 * laid out like the real one: /sys/block/<disk> and /sys/class/block/<any>
 * are symlinks into /sys/devices, partitions live inside their disk's
 * directory and have a "partition" file.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "disk.h"

#define SDA_DIR "devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/block/sda"
#define NVME_DIR "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1"

static char root[256]; /* short: paths under it must fit PATH_MAX */

/* mkdir -p, relative to root. */
static void mkdirs(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		cr_assert(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s: %s", path,
			  strerror(errno));
		*p = '/';
	}
	cr_assert(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
}

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	cr_assert_not_null(f, "create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	cr_assert_eq(symlink(target, path), 0, "symlink %s: %s", path, strerror(errno));
}

static void make_sysfs(void)
{
	snprintf(root, sizeof(root), "/tmp/iostackbreak-sysfs-XXXXXX");
	cr_assert_not_null(mkdtemp(root), "mkdtemp: %s", strerror(errno));
	mkdirs(SDA_DIR "/sda1");
	mkdirs(NVME_DIR);
	mkdirs("block");
	mkdirs("class/block");
	/* sysfs files end in a newline; the parser must not mind. */
	write_file(SDA_DIR "/dev", "8:0\n");
	write_file(SDA_DIR "/sda1/dev", "8:1\n");
	write_file(SDA_DIR "/sda1/partition", "1\n");
	write_file(NVME_DIR "/dev", "259:0\n");
	/* /sys/block/sda is a link, as on a real system; nvme0n1 a plain
	 * directory, so that both kinds are read. */
	link_to("../" SDA_DIR, "block/sda");
	mkdirs("block/nvme0n1");
	write_file("block/nvme0n1/dev", "259:0\n");
	link_to("../../" SDA_DIR, "class/block/sda");
	link_to("../../" SDA_DIR "/sda1", "class/block/sda1");
	link_to("../../" NVME_DIR, "class/block/nvme0n1");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_sysfs(void)
{
	if (!root[0])
		return;
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
}

TestSuite(disk, .init = make_sysfs, .fini = remove_sysfs);

Test(disk, resolve_whole_disks)
{
	struct disk_id id = { 99, 99 };
	char err[512] = "";

	cr_assert_eq(disk_resolve(root, "sda", &id, err, sizeof(err)), 0, "sda: %s", err);
	cr_assert_eq(id.major, 8);
	cr_assert_eq(id.minor, 0);
	cr_assert_eq(disk_resolve(root, "nvme0n1", &id, err, sizeof(err)), 0, "nvme0n1: %s", err);
	cr_assert_eq(id.major, 259);
	cr_assert_eq(id.minor, 0);
}

/* needle in text, not followed by more of a name ("-d sda", not "-d sda1"). */
static bool names_word(const char *text, const char *needle)
{
	for (const char *p = text; (p = strstr(p, needle)); p++) {
		char next = p[strlen(needle)];

		if (!(next >= 'a' && next <= 'z') && !(next >= '0' && next <= '9'))
			return true;
	}
	return false;
}

Test(disk, partition_names_its_disk)
{
	struct disk_id id;
	char err[512] = "";

	cr_assert_eq(disk_resolve(root, "sda1", &id, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "partition"), "%s", err);
	cr_assert(names_word(err, "-d sda"), "no \"-d sda\" remedy: %s", err);
	cr_assert_not_null(strstr(err, "sda1"), "%s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}

Test(disk, unknown_lists_disks)
{
	struct disk_id id;
	char err[512] = "";

	cr_assert_eq(disk_resolve(root, "nope", &id, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "'nope'"), "%s", err);
	cr_assert_not_null(strstr(err, "sda"), "%s", err);
	cr_assert_not_null(strstr(err, "nvme0n1"), "%s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}

/* No sysfs at all (or not mounted): a reason, not a crash. */
Test(disk, missing_sysfs)
{
	struct disk_id id;
	char err[512] = "", path[PATH_MAX + 16], name[32];

	snprintf(path, sizeof(path), "%s/absent", root);
	cr_assert_eq(disk_resolve(path, "sda", &id, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "none"), "%s", err);
	cr_assert_eq(disk_name(path, (struct disk_id){ 8, 0 }, name, sizeof(name)), -1);
}

Test(disk, name_by_numbers)
{
	char name[32];

	cr_assert_eq(disk_name(root, (struct disk_id){ 8, 0 }, name, sizeof(name)), 0);
	cr_assert_str_eq(name, "sda");
	cr_assert_eq(disk_name(root, (struct disk_id){ 259, 0 }, name, sizeof(name)), 0);
	cr_assert_str_eq(name, "nvme0n1");
	/* A partition is not a disk; unknown numbers are no disk. */
	cr_assert_eq(disk_name(root, (struct disk_id){ 8, 1 }, name, sizeof(name)), -1);
	cr_assert_eq(disk_name(root, (struct disk_id){ 8, 16 }, name, sizeof(name)), -1);
	cr_assert_eq(disk_name(root, (struct disk_id){ 0, 0 }, name, sizeof(name)), -1);
	cr_assert_eq(disk_name(root, (struct disk_id){ 259, 1 }, name, sizeof(name)), -1);
}

/* A small buffer gets a cut name, never an overrun. */
Test(disk, name_small_buffer)
{
	char name[8];

	memset(name, 'x', sizeof(name));
	cr_assert_eq(disk_name(root, (struct disk_id){ 259, 0 }, name, 4), 0);
	cr_assert_str_eq(name, "nvm");
	cr_assert_eq(name[4], 'x');
}

/* A disk with a size is there; one with size 0 (a detached loop device)
 * or none in sysfs (removed) is gone. */
Test(disk, present_means_in_sysfs_with_a_size)
{
	write_file(SDA_DIR "/size", "2097152\n");
	write_file("block/nvme0n1/size", "0\n");
	cr_assert(disk_present(root, (struct disk_id){ 8, 0 }));
	cr_assert_not(disk_present(root, (struct disk_id){ 259, 0 }), "size 0 is gone");
	cr_assert_not(disk_present(root, (struct disk_id){ 8, 16 }), "not in sysfs");
	cr_assert_not(disk_present(root, (struct disk_id){ 8, 1 }), "a partition is no disk");
}

/*
 * Request-based (blk-mq) disks have an "mq" directory; bio-based ones (dm,
 * md, zram) only the queue: -T blk can never see the latter.
 */
Test(disk, bio_based_has_no_mq)
{
	mkdirs(SDA_DIR "/queue");
	mkdirs(SDA_DIR "/mq/0");
	mkdirs("block/nvme0n1/queue");
	mkdirs("block/nvme0n1/mq");
	mkdirs("block/zram0/queue");
	write_file("block/zram0/dev", "252:0\n");
	cr_assert_not(disk_bio_based(root, "sda"));
	cr_assert_not(disk_bio_based(root, "nvme0n1"));
	cr_assert(disk_bio_based(root, "zram0"));
	/* No such disk: nothing to say about it here (disk_resolve says it). */
	cr_assert_not(disk_bio_based(root, "nope"));
}
