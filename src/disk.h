/* SPDX-License-Identifier: GPL-2.0 */
/* Disk names to device numbers, through sysfs (a root tests can fake). */
#ifndef DISK_H
#define DISK_H

#include <stddef.h>

struct disk_id {
	unsigned int major;
	unsigned int minor;
};

/*
 * Resolves a whole-disk name ("nvme0n1") under sysfs_root (normally "/sys").
 * Returns 0, or -1 with a one-line reason and remedy in err: no such disk
 * (listing the disks there are), or a partition (naming its disk).
 */
int disk_resolve(const char *sysfs_root, const char *name, struct disk_id *id, char *err,
		 size_t errsz);

/* The name of the disk with these numbers, or -1 if there is none. */
int disk_name(const char *sysfs_root, struct disk_id id, char *name, size_t namesz);

#endif /* DISK_H */
