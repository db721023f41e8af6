/* SPDX-License-Identifier: GPL-2.0 */
/* --file: a path -> what the kernel's filter matches (device, inode). */
#ifndef FILEID_H
#define FILEID_H

#include <stddef.h>
#include <linux/types.h>
#include "iostackbreak.h"

/*
 * Resolves path to its inode number and the dev_t of its superblock, in
 * the kernel's encoding. stat's st_dev is not always that device: btrfs
 * reports a subvolume's own anonymous device, while the kernel's inode
 * points at the superblock's. The mount's line in mountinfo (found by the
 * mount id statx gives) shows the superblock's; st_dev is the fallback.
 * Returns 0, or -1 with one line in err.
 */
int file_id_resolve(const char *path, const char *mountinfo, struct file_id *id, char *err,
		    size_t errsz);

#endif /* FILEID_H */
