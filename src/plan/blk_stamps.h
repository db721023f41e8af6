/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Does the kernel stamp a disk's requests with the time the block layer
 * reads (bpf/blk_stamped.bpf.h)? Read from sysfs (a root tests can fake),
 * before anything is loaded.
 */
#ifndef BLK_STAMPS_H
#define BLK_STAMPS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * queued (-Q): rq->start_time_ns, set when the queue has iostats on;
 * else rq->io_start_time_ns, set when the queue's stats are on (wbt,
 * iocost, iolatency: QUEUE_FLAG_STATS). disk NULL: every disk whose
 * requests the block_rq tracepoints see (those with an mq directory; a
 * bio-based disk like zram has none). Returns true with what says so in
 * why, or false with why not (naming the disk), one phrase each.
 */
bool blk_disks_stamped(const char *sysfs_root, const char *disk, bool queued, char *why,
		       size_t whysz);

#endif /* BLK_STAMPS_H */
