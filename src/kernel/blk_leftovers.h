/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOSB_BLK_LEFTOVERS_H
#define IOSB_BLK_LEFTOVERS_H

#include <stdbool.h>
#include <stdint.h>

#include "iostackbreak.h"

struct tracer;

#define BLK_LEFTOVERS_DISKS 256

/* What was in flight just before the programs detached (blk_leftovers.c). */
struct blk_leftovers {
	bool valid;
	bool all_idle; /* no disk had a request in flight */
	__u64 at_ns;   /* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	unsigned int nr_disks;
	struct {
		__u32 dev; /* kernel dev_t */
		unsigned long long inflight;
	} disks[BLK_LEFTOVERS_DISKS];
};

/* Notes each disk's requests in flight; call it right before detaching. */
void blk_leftovers_mark(struct blk_leftovers *m);

/*
 * After detaching: the recorded requests that started before the mark, on
 * a disk idle at the mark, whose completion no program saw (counted as
 * request_completion_missed).
 */
uint64_t blk_leftovers_count(struct tracer *t, const struct blk_leftovers *m);

/*
 * Before detaching: aio requests of processes that have exited, whose
 * completion no program saw (counted as aio_completion_missed). A process's
 * exit waits for every request of its AIO contexts (exit_aio), so these
 * will never complete for us; a living process's are left alone.
 */
uint64_t aio_leftovers_count(struct tracer *t);

#endif
