/* SPDX-License-Identifier: GPL-2.0 */
/* Disk names to device numbers, through sysfs (a root tests can fake). */
#ifndef DISK_H
#define DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * Is the disk bio-based: a device (dm-*, md*, zram*, nbd, pmem, bcache)
 * whose driver takes bios and never makes a struct request, so the
 * block_rq_* tracepoints never fire for it? A request-based (blk-mq) disk
 * has an "mq" directory in sysfs; every kernel with BTF is blk-mq only
 * (the legacy request path went in 5.0), so no "mq" means bio-based.
 */
bool disk_bio_based(const char *sysfs_root, const char *name);

/* The name of the disk with these numbers, or -1 if there is none. */
int disk_name(const char *sysfs_root, struct disk_id id, char *name, size_t namesz);

/*
 * Is the disk still there: known to sysfs, with a size? A removed disk
 * leaves sysfs; a detached loop device (or an ejected medium) stays with
 * size 0.
 */
bool disk_present(const char *sysfs_root, struct disk_id id);

/* disk_present() under /sys, by kernel dev_t. */
bool disk_present_kdev(uint32_t dev);

/* The /sys/block name of the disk with this kernel dev_t (as the BPF side
 * records it), or "major:minor" if there is none: a disk_namer. */
void disk_name_kdev(uint32_t dev, char *buf, size_t sz);

#endif /* DISK_H */
