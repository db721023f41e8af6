/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cache flushes and the requests that ask for them (block/blk-flush.c).
 *
 * An fsync on a disk with a write-back cache submits an empty write with
 * REQ_PREFLUSH. blk_insert_flush() takes it out of the normal path (it is
 * never issued to the driver) and parks it on the flush queue; the flush
 * state machine then sends one request of its own, hctx->fq->flush_rq
 * (REQ_OP_FLUSH), from kblockd, for every request pending on that queue at
 * the time: several fsyncs may share one device flush. When it completes,
 * flush_end_io() completes the parked requests. On a write-through disk
 * the empty write is completed at once and no flush is sent.
 *
 * The kernel's accounting: the empty write is a write of 0 sectors in
 * /proc/diskstats; the flush_rq is counted apart (blk_account_io_flush).
 * So the tool counts the empty write as a write (time: the kernel's own,
 * from its start to its completion, i.e. the wait for the flush) and the
 * flush_rq as a flush, owned by the first request on the flush queue that
 * asked for it, whose submitter was recorded at its origin.
 *
 * Included by iostackbreak.bpf.c after blk.bpf.c's helpers.
 */
#ifndef BLK_FLUSH_BPF_H
#define BLK_FLUSH_BPF_H

/* The name a request gets when nobody can be named as its submitter. */
#define UNATTRIBUTED_COMM "unattributed"

/* Is any task filter on (-p, -f, -t, -c, --cgroup, -- COMMAND)? */
static __always_inline bool task_filtered(void)
{
	return nr_targ_tgids || targ_tid || filter_comm || filter_cgroup;
}

/* Is rq the flush machinery's own request (hctx->fq->flush_rq)? */
static __always_inline bool rq_is_device_flush(struct request *rq)
{
	return (__u64)BPF_CORE_READ(rq, mq_hctx, fq, flush_rq) == (__u64)rq;
}

/*
 * An empty write that only asked for a flush: no data (an fsync's
 * PREFLUSH). The second completion of a PREFLUSH/FUA write with data
 * (blk_flush_complete_seq's REQ_FSEQ_DONE) has no bytes left either, but its
 * bio still holds its pages: bi_vcnt tells them apart.
 */
static __always_inline bool rq_preflush_only(struct request *rq, __u32 cmd_flags)
{
	struct bio *bio;

	if ((cmd_flags & KREQ_OP_MASK) != KREQ_OP_WRITE || BPF_CORE_READ(rq, __data_len))
		return false;
	bio = BPF_CORE_READ(rq, bio);
	return !bio || !BPF_CORE_READ(bio, bi_vcnt);
}

/*
 * The request's disk's queue_limits.features (6.11+: BLK_FEAT_WRITE_CACHE
 * is bit 0, BLK_FEAT_FUA bit 1); older kernels: not known, 0.
 */
static __always_inline __u64 rq_queue_features(struct request *rq)
{
	if (!bpf_core_field_exists(((struct queue_limits *)0)->features))
		return 0;
	return BPF_CORE_READ(rq, q, limits.features);
}

/*
 * Does this request wait for a device flush: PREFLUSH, on a disk with a
 * write-back cache (not known before 6.11: false)? Seen at its origin,
 * before blk_insert_flush() clears the flag.
 */
static __always_inline bool rq_waits_for_flush(struct request *rq, __u32 cmd_flags)
{
	if (!(cmd_flags & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH))))
		return false;
	return rq_queue_features(rq) & 1;
}

/*
 * A call's request that waits for a flush: the flush is one more request
 * of the call, shared with other callers or not (each call waited for it).
 */
static __always_inline void count_call_flush(struct thread_starts *ts, struct request *rq,
					     bool btf)
{
	if (rq_waits_for_flush(rq, rq_cmd_flags(rq, btf))) {
		call_counts(ts)->blk_requests++;
		ts->blk_flushes++;
	}
}

/*
 * Device flushes a request asks for, on a disk with a write-back cache
 * (BLK_FEAT_WRITE_CACHE, bit 0 of queue_limits.features since 6.11; older
 * kernels: not known, 0): one before it (PREFLUSH), and one after it for
 * FUA data where the disk has no FUA (BLK_FEAT_FUA, bit 1;
 * blk_flush_policy() sends a post-flush then), with or without PREFLUSH.
 * A jbd2 commit block asks for both: on a loop device, two device flushes
 * per commit. The journal superblock the commit thread writes when the
 * log's tail moves is REQ_FUA alone: one post-flush.
 */
static __always_inline __u32 rq_flushes_asked(struct request *rq, __u32 cmd_flags)
{
	__u64 features = rq_queue_features(rq);
	__u32 n = 0;

	if (!(features & 1))
		return 0;
	if (cmd_flags & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		n++;
	if ((cmd_flags & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA))) &&
	    !(features & 2) && BPF_CORE_READ(rq, __data_len))
		n++;
	return n;
}

/*
 * A request first seen in a journal thread within a commit: the commit's
 * (counted for the calls that wait for it, why.bpf.c), each device flush
 * it asks for as one more request, as a call counts its own. Its bytes
 * grow as bios merge into it (journal_bio_merged). -d leaves other disks
 * out.
 */
static __always_inline void journal_count(struct thread_starts *j, struct request *rq, bool btf)
{
	__u32 flushes;

	if (!journal_blk || j->jbd2_state != JBD2_COMMITTING)
		return;
	if (filter_dev && rq_dev(rq, btf) != targ_dev)
		return;
	flushes = rq_flushes_asked(rq, rq_cmd_flags(rq, btf));
	j->journal_requests += 1 + flushes;
	j->journal_flushes += flushes;
	j->journal_bytes += btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
}

/*
 * The request a device flush was sent for: the first on the flush queue
 * it serves. blk_kick_flush() toggles flush_pending_idx when it sends the
 * flush; the requests it serves stay on flush_queue[flush_running_idx]
 * until flush_end_io(), which runs after the flush's completion
 * tracepoint. So both at issue and at completion the first entry of that
 * list is the flush's first requester. (6.1 has the same machinery, with
 * the list through rq->flush.list.)
 */
/* Before Linux 6.5 the flush queue linked requests by rq->flush.list ("blk-flush:
 * reuse rq queuelist in flush state machine", 6.5). */
struct request___flush_list {
	struct {
		struct list_head list;
	} flush;
} __attribute__((preserve_access_index));

/* The flush queue a device flush serves (flush_queue[flush_running_idx]). */
static __always_inline struct list_head *flush_running_list(struct request *flush_rq)
{
	struct blk_flush_queue *fq = BPF_CORE_READ(flush_rq, mq_hctx, fq);
	__u32 idx;

	if (!fq)
		return NULL;
	idx = BPF_CORE_READ_BITFIELD_PROBED(fq, flush_running_idx);
	return &fq->flush_queue[idx & 1];
}

/* The request a flush queue's list node belongs to. */
static __always_inline __u64 flush_list_request(struct list_head *node)
{
	if (bpf_core_field_exists(((struct request___flush_list *)0)->flush.list))
		return (__u64)node - bpf_core_field_offset(struct request___flush_list, flush.list);
	return (__u64)node - bpf_core_field_offset(struct request, queuelist);
}

static __always_inline __u64 flush_first_requester(struct request *flush_rq)
{
	struct list_head *head = flush_running_list(flush_rq), *first;

	if (!head)
		return 0;
	first = BPF_CORE_READ(head, next);
	if (!first || first == head)
		return 0;
	return flush_list_request(first);
}

/*
 * Before 6.5 a PREFLUSH request is never seen where it starts: the flush
 * queue takes it before insert. block_getrq saw its bio, in its
 * submitter's context, and recorded it by the bio (blk_bio.bpf.c): the
 * entry, or NULL; *bkey its key. rq->bio is that bio from the request's
 * making to its completion (blk_flush_restore_request puts it back).
 */
static __always_inline struct rq_start *preflush_bio_entry(struct request *rq, __u64 *bkey)
{
	*bkey = (__u64)BPF_CORE_READ(rq, bio);
	return *bkey ? bpf_map_lookup_elem(&rq_starts, bkey) : NULL;
}

/* A request's start as the kernel keeps it (0 where it keeps none). */
static __always_inline __u64 rq_start_ns(struct request *rq)
{
	if (!bpf_core_field_exists(rq->start_time_ns))
		return 0;
	return BPF_CORE_READ(rq, start_time_ns);
}

/*
 * An empty PREFLUSH write, first seen now, begun at the kernel's start
 * (it is never issued; without block_io_start nothing sees it before).
 */
static __always_inline void preflush_write_seen(struct request *rq, __u64 key, __u64 start,
						bool btf)
{
	struct rq_start v = { .origin_ns = start, .issue_ns = start, .alloc_ns = start }, *b;
	__u64 bkey;

	/* Insert (before 6.5) never sees it either: blk_insert_flush()
	 * takes it first. Its bio was seen at block_getrq where that is
	 * attached; else whose it was is not known here. */
	b = blk_preflush_bios ? preflush_bio_entry(rq, &bkey) : NULL;
	if (b) {
		v = *b;
		bpf_map_delete_elem(&rq_starts, &bkey);
		v.origin_ns = v.issue_ns = v.alloc_ns = start;
	} else if (blk_origin_attached && (task_filtered() || nr_files))
		v.excluded = 1;
	else
		__builtin_memcpy(v.comm, UNATTRIBUTED_COMM, sizeof(UNATTRIBUTED_COMM));
	if (!v.excluded) {
		v.dev = rq_dev(rq, btf);
		v.excluded = filter_dev && v.dev != targ_dev;
	}
	rq_record(key, &v);
}

/*
 * rq_preflush_only() for a request waiting on the flush queue, read with
 * probes (a pointer from a list, not a traced argument). A PREFLUSH/FUA
 * write waiting for its post-flush has no bytes left and no rq->bio
 * either: its data completion moved past the bio but did not end it
 * (RQF_FLUSH_SEQ), and rq->biotail still holds it, pages and all
 * (blk_flush_restore_request() puts it back).
 */
static __always_inline bool flush_waiter_preflush_only(struct request *rq)
{
	struct bio *bio;

	if ((rq_cmd_flags(rq, false) & KREQ_OP_MASK) != KREQ_OP_WRITE ||
	    BPF_CORE_READ(rq, __data_len))
		return false;
	bio = BPF_CORE_READ(rq, bio) ?: BPF_CORE_READ(rq, biotail);
	return bio && !BPF_CORE_READ(bio, bi_vcnt);
}

/* A flush's waiters recorded when it is sent; any more (rare) are first
 * seen at their completion. */
#define FLUSH_WAITERS_SEEN 32

/*
 * Where block_io_start is not traced, the empty PREFLUSH writes a device
 * flush serves are recorded when it is sent, not first at their
 * completion: flush_end_io() completes them in the flush's completion
 * context, so when the kernel runs no program for that completion it runs
 * none for theirs either, and a write first seen there would be lost
 * uncounted. Recorded now, its entry outlives the hidden completion and
 * is counted missed, as the flush's is (rq_record, blk_leftovers.c).
 */
static __always_inline void flush_waiters_seen(struct request *flush_rq)
{
	struct list_head *head = flush_running_list(flush_rq), *node;
	struct rq_start *v;
	struct request *rq;
	__u64 key, start;

	if (!head)
		return;
	node = BPF_CORE_READ(head, next);
	for (int i = 0; i < FLUSH_WAITERS_SEEN && node && node != head; i++) {
		key = flush_list_request(node);
		rq = (struct request *)key;
		node = BPF_CORE_READ(node, next);
		if (!flush_waiter_preflush_only(rq))
			continue;
		start = rq_start_ns(rq);
		if (!start)
			continue;
		/* Recorded for this use already (an earlier flush of the
		 * sequence); an entry of the struct's earlier use, whose
		 * completion was hidden too, is counted missed and replaced
		 * (rq_record). */
		v = bpf_map_lookup_elem(&rq_starts, &key);
		if (!v || v->alloc_ns != start)
			preflush_write_seen(rq, key, start, false);
	}
}

/*
 * Records a device flush as one request of whoever asked for it first:
 * its submitter, its filter verdict, its call. origin_ns: when the flush
 * machinery made it (blk_rq_init at blk_kick_flush sets start_time_ns);
 * issue_ns: when the driver got it (0: not seen).
 */
static __always_inline void blk_flush_seen(struct request *rq, __u64 key, __u64 origin_ns,
					   __u64 issue_ns, bool btf)
{
	struct rq_start *req = NULL, v = {};
	__u64 first, bkey;

	first = flush_first_requester(rq);
	if (first)
		req = bpf_map_lookup_elem(&rq_starts, &first);

	/* Before 6.5 the requester is known by its bio (preflush_bio_entry). */
	if (!req && first && blk_preflush_bios)
		req = preflush_bio_entry((struct request *)first, &bkey);
	if (req) {
		v = *req;
	} else if (blk_origin_attached && (task_filtered() || nr_files)) {
		/* Asked for by a request we never saw, so never filtered in. */
		v.excluded = 1;
	} else {
		/* No submitter to name (its request began before us). */
		v.excluded = 0;
		v.tgid = 0;
		v.tid = 0;
		v.call_ns = 0;
		__builtin_memcpy(v.comm, UNATTRIBUTED_COMM, sizeof(UNATTRIBUTED_COMM));
	}
	if (!v.excluded) {
		v.dev = rq_dev(rq, btf);
		if (filter_dev && v.dev != targ_dev)
			v.excluded = 1;
	}
	v.origin_ns = origin_ns;
	v.issue_ns = issue_ns;
	if (bpf_core_field_exists(rq->start_time_ns))
		v.alloc_ns = BPF_CORE_READ(rq, start_time_ns);
	rq_record(key, &v);
}

/*
 * At a completion of a request we hold no entry for: a device flush whose
 * issue we do not trace (-Q from block_io_start), or an empty PREFLUSH
 * write where block_io_start is not traced (it is never issued, nor
 * inserted). Both begin at the kernel's start_time_ns. Returns the entry
 * made, or NULL.
 */
static __always_inline struct rq_start *blk_flush_unseen(struct request *rq, __u64 key,
							 __u32 cmd_flags, bool btf)
{
	__u32 op = cmd_flags & KREQ_OP_MASK;
	__u64 start;

	/* Most requests that get here are filtered out: cheap checks first. */
	if (op != KREQ_OP_FLUSH && (op != KREQ_OP_WRITE || blk_origin_sees_all))
		return NULL;
	start = rq_start_ns(rq);
	if (!start)
		return NULL;
	if (op == KREQ_OP_FLUSH && rq_is_device_flush(rq)) {
		blk_flush_seen(rq, key, start, start, btf);
	} else if (op == KREQ_OP_WRITE && rq_preflush_only(rq, cmd_flags)) {
		preflush_write_seen(rq, key, start, btf);
	} else {
		return NULL;
	}
	return bpf_map_lookup_elem(&rq_starts, &key);
}

/*
 * Before 6.5, a write first seen after the flush queue held it (PREFLUSH
 * with data: issued from the dispatch list, in kblockd's context): its
 * submitter is the one block_getrq saw, by its bio (blk_bio.bpf.c). Takes
 * that entry as the request's; false where there is none.
 */
static __always_inline bool blk_adopt_preflush_bio(struct request *rq, __u64 key, __u64 issue_ns,
						   bool btf)
{
	__u64 bkey;
	struct rq_start *b, v;

	if ((rq_cmd_flags(rq, btf) & KREQ_OP_MASK) != KREQ_OP_WRITE)
		return false;
	b = preflush_bio_entry(rq, &bkey);
	if (!b)
		return false;
	v = *b;
	bpf_map_delete_elem(&rq_starts, &bkey);
	v.issue_ns = v.excluded ? 0 : issue_ns;
	v.alloc_ns = rq_start_ns(rq);
	rq_record(key, &v);
	return true;
}

#endif /* BLK_FLUSH_BPF_H */
