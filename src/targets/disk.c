// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "breakdown.h"
#include "disk.h"
#include "quote.h"

static int read_dev(const char *path, struct disk_id *id)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%u:%u", &id->major, &id->minor);
	fclose(f);
	return n == 2 ? 0 : -1;
}

/* Comma list of the disks under sysfs_root/block, for error messages. */
static void list_disks(const char *sysfs_root, char *out, size_t outsz)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t used = 0;
	DIR *dir;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/block", sysfs_root);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		int n;

		if (de->d_name[0] == '.')
			continue;
		n = snprintf(out + used, outsz - used, "%s%s", used ? ", " : "", de->d_name);
		if (n < 0 || (size_t)n >= outsz - used) {
			out[used] = '\0';
			break;
		}
		used += (size_t)n;
	}
	closedir(dir);
}

/* The disk a partition belongs to: its sysfs directory's parent. */
static int partition_parent(const char *sysfs_root, const char *name, char *parent, size_t parentsz)
{
	char path[PATH_MAX], target[PATH_MAX];
	char *slash;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/class/block/%s", sysfs_root, name);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = '\0';
	slash = strrchr(target, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	slash = strrchr(target, '/');
	snprintf(parent, parentsz, "%s", slash ? slash + 1 : target);
	return 0;
}

int disk_resolve(const char *sysfs_root, const char *name, struct disk_id *id, char *err,
		 size_t errsz)
{
	char path[PATH_MAX], other[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/block/%s/dev", sysfs_root, name);
	if (!read_dev(path, id))
		return 0;
	snprintf(path, sizeof(path), "%s/class/block/%s/partition", sysfs_root, name);
	if (!stat(path, &st)) {
		if (partition_parent(sysfs_root, name, other, sizeof(other)))
			snprintf(other, sizeof(other), "its disk");
		snprintf(err, errsz,
			 "%s is a partition: -d takes a whole disk, "
			 "give -d %s",
			 name, other);
		printable_line(err, errsz);
		return -1;
	}
	list_disks(sysfs_root, other, sizeof(other));
	snprintf(err, errsz, "no disk named '%s' in %s/block; disks here: %s", name, sysfs_root,
		 other[0] ? other : "none");
	printable_line(err, errsz);
	return -1;
}

bool disk_bio_based(const char *sysfs_root, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/block/%s/mq", sysfs_root, name);
	if (!stat(path, &st))
		return false;
	/* Not a disk at all (no queue): not for this function to say. */
	snprintf(path, sizeof(path), "%s/block/%s/queue", sysfs_root, name);
	return !stat(path, &st);
}

int disk_name(const char *sysfs_root, struct disk_id id, char *name, size_t namesz)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/block", sysfs_root);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		struct disk_id cur;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/block/%s/dev", sysfs_root, de->d_name);
		if (!read_dev(path, &cur) && cur.major == id.major && cur.minor == id.minor) {
			snprintf(name, namesz, "%s", de->d_name);
			ret = 0;
			break;
		}
	}
	closedir(dir);
	return ret;
}

bool disk_present(const char *sysfs_root, struct disk_id id)
{
	char name[64], path[PATH_MAX];
	unsigned long long sectors;
	bool present;
	FILE *f;

	if (disk_name(sysfs_root, id, name, sizeof(name)))
		return false;
	snprintf(path, sizeof(path), "%s/block/%s/size", sysfs_root, name);
	f = fopen(path, "r");
	if (!f)
		return false;
	present = fscanf(f, "%llu", &sectors) == 1 && sectors > 0;
	fclose(f);
	return present;
}

bool disk_present_kdev(uint32_t dev)
{
	struct disk_id id = { dev >> KDEV_MINORBITS, dev & ((1U << KDEV_MINORBITS) - 1) };

	return disk_present("/sys", id);
}

void disk_name_kdev(uint32_t dev, char *buf, size_t sz)
{
	struct disk_id id = { dev >> KDEV_MINORBITS, dev & ((1U << KDEV_MINORBITS) - 1) };

	if (disk_name("/sys", id, buf, sz))
		format_kdev(dev, buf, sz);
}
