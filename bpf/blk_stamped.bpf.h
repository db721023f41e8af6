/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The block layer at one program per request: block_rq_complete reads the
 * times the kernel already wrote into the request, and no other program
 * runs, no map is keyed by request. Used when nothing needs the submitter
 * (no task filter, -P, parts of calls, events, --file) and user space found
 * that the kernel stamps the disks' requests (planner.c, blk_stamps.c):
 *
 * - rq->io_start_time_ns: set by blk_mq_start_request(), just after
 *   block_rq_issue, when the queue has QUEUE_FLAG_STATS (wbt, iocost,
 *   iolatency switch it on); reset to 0 when the request is set up, so a
 *   request of a queue without stats reads 0, never a stale time;
 * - rq->start_time_ns: set by blk_account_io_start(), just after
 *   block_io_start, when the queue has iostats on; the device flush's is
 *   set when the flush machinery makes it (blk_rq_init).
 *
 * Both come from blk_time_get_ns(), which may be the submitter's plug's
 * cached clock: the same stamp /proc/diskstats times requests from.
 *
 * Counted as today's programs and diskstats count (blk_flush.bpf.h): once,
 * when the completed bytes cover the request; an empty PREFLUSH write as a
 * write from its start (it is never issued); the second completion of a
 * flush-sequenced write with data (no bytes left, its pages still on its
 * bio) not at all.
 *
 * Included by blk.bpf.c.
 */
#ifndef BLK_STAMPED_BPF_H
#define BLK_STAMPED_BPF_H

/* Set when the planner chose this path: tb/rt_rq_complete come here. */
const volatile bool blk_stamped;

static __always_inline __u64 rq_io_start_ns(struct request *rq, bool btf)
{
	return btf ? rq->io_start_time_ns : BPF_CORE_READ(rq, io_start_time_ns);
}

static __always_inline int blk_complete_stamped(struct request *rq, int error, __u32 nr_bytes,
						bool btf)
{
	__u32 cmd_flags = rq_cmd_flags(rq, btf), op;
	__u32 data_len = btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	bool preflush = false;
	__u64 start, now, delta;

	/* A partial completion: the request goes on with the rest. */
	if (nr_bytes < data_len)
		return 0;
	if (filter_dev && rq_dev(rq, btf) != targ_dev)
		return 0;
	op = rq_op(cmd_flags);
	if (!data_len && op == BLKOP_WRITE) {
		/* A flush-sequenced write's second completion, or an empty
		 * PREFLUSH write that waited for the flush, never issued. */
		if (!rq_preflush_only(rq, cmd_flags))
			return 0;
		preflush = true;
		start = rq_start_ns(rq);
	} else {
		start = blk_queued ? rq_start_ns(rq) : rq_io_start_ns(rq, btf);
	}
	/* Not stamped (a passthrough request, or the queue's stats went
	 * off): counted apart, never timed as 0. */
	if (!start) {
		count_drop(DROP_RQ_UNSTAMPED);
		return 0;
	}
	now = bpf_ktime_get_ns();
	delta = now > start ? now - start : 0;
	if (error)
		record_error(LAYER_BLK, op, delta);
	else
		record(LAYER_BLK, op, delta);
	record_bytes(LAYER_BLK, op, data_len);
	if (per_disk || per_flags) {
		struct breakdown_key k = {
			.cell_idx = CELL_INDEX(LAYER_BLK, op),
			.dev = per_disk ? rq_dev(rq, btf) : 0,
			.flags =
			    per_flags ? rq_flags(cmd_flags) | (preflush ? RQ_FLAG_PREFLUSH : 0) : 0,
		};

		record_breakdown_io(&k, NULL, delta, data_len, error);
	}
	return 0;
}

#endif /* BLK_STAMPED_BPF_H */
