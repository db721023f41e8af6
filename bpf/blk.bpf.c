// SPDX-License-Identifier: GPL-2.0
/*
 * The block layer: each request timed from its origin (block_io_start,
 * else insert) or its issue to its completion, attributed to the task that
 * submitted it. Owns the map rq_starts.
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

/*
 * Request operations, cmd_flags & REQ_OP_MASK (the low 8 bits since Linux
 * 4.10, "block: better op and flags encoding"). The values
 * are fixed by include/linux/blk_types.h and used by blktrace's ABI; the
 * enum's name changed (req_opf -> req_op, 6.0), so CO-RE cannot name it
 * portably.
 */
#define KREQ_OP_MASK 0xff
#define KREQ_OP_READ 0
#define KREQ_OP_WRITE 1
#define KREQ_OP_FLUSH 2
#define KREQ_OP_DISCARD 3

/* Knobs of the block layer, set by user space between open and load. */
const volatile bool filter_dev;
const volatile __u32 targ_dev;		 /* kernel dev_t of the disk */
const volatile bool blk_queued;		 /* -Q: time from origin, not issue */
const volatile bool blk_origin_attached; /* block_io_start or insert is attached */
const volatile bool blk_origin_sees_all; /* it is block_io_start: every request */
const volatile __u32 blk_rq_argn;	 /* index of the request in insert/issue */
const volatile bool blk_preflush_bios;	 /* block_getrq is attached (blk_bio.bpf.c) */

/* Requests in flight; deleted at completion, so a plain hash that can fill. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_INFLIGHT_RQS);
	__type(key, __u64);
	__type(value, struct rq_start);
} rq_starts SEC(".maps");

/* Before Linux 5.17 the disk hung off the request itself ("block: remove
 * the ->rq_disk field in struct request", 5.17). */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/*
 * btf: the program is tp_btf, whose request pointer the verifier knows, so
 * fields are plain loads; raw_tp programs must copy them with probe reads.
 * The flag is a constant in every caller, so only one path is compiled in.
 */
static __always_inline __u32 rq_dev(struct request *rq, bool btf)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(((struct request___rq_disk *)0)->rq_disk))
		disk = BPF_CORE_READ((struct request___rq_disk *)rq, rq_disk);
	else if (btf)
		disk = rq->q->disk;
	else
		disk = BPF_CORE_READ(rq, q, disk);
	if (!disk)
		return 0;
	if (btf)
		return KDEV_MAKE(disk->major, disk->first_minor);
	return KDEV_MAKE(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

/* Before Linux 5.12 a bio named its disk itself ("block: switch bio to a
 * block_device", 5.12). */
struct bio___bi_disk {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/* The whole disk a bio is on, as rq_dev: a partition's bio counts on its
 * disk. 0 if none. */
static __always_inline __u32 bio_dev(struct bio *bio)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(((struct bio___bi_disk *)0)->bi_disk))
		disk = BPF_CORE_READ((struct bio___bi_disk *)bio, bi_disk);
	else
		disk = BPF_CORE_READ(bio, bi_bdev, bd_disk);
	if (!disk)
		return 0;
	return KDEV_MAKE(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

static __always_inline __u32 rq_cmd_flags(struct request *rq, bool btf)
{
	return btf ? rq->cmd_flags : BPF_CORE_READ(rq, cmd_flags);
}

static __always_inline __u32 rq_op(__u32 cmd_flags)
{
	switch (cmd_flags & KREQ_OP_MASK) {
	case KREQ_OP_READ:
		return BLKOP_READ;
	case KREQ_OP_WRITE:
		return BLKOP_WRITE;
	case KREQ_OP_FLUSH:
		return BLKOP_FLUSH;
	case KREQ_OP_DISCARD:
		return BLKOP_DISCARD;
	default:
		return BLKOP_OTHER;
	}
}

static __always_inline __u32 rq_flags(__u32 f)
{
	__u32 out = 0;

	/* Bit positions moved between kernels: CO-RE reads this kernel's. */
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		out |= RQ_FLAG_SYNC;
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		out |= RQ_FLAG_META;
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		out |= RQ_FLAG_FUA;
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		out |= RQ_FLAG_PREFLUSH;
	return out;
}

/* A thread's slots when a call of the root layer is open in it. */
static __always_inline struct thread_starts *call_of(struct thread_starts *ts)
{
	if (!ts)
		return NULL;
	if (split_calls)
		return parts_open(ts) ? ts : NULL;
	return call_ns_of(ts) ? ts : NULL;
}

/* A request started by a thread inside a traced call: the call's block I/O. */
static __always_inline void count_call_request(struct thread_starts *ts, __u32 bytes)
{
	call_counts(ts)->blk_requests++;
	ts->blk_bytes += bytes;
}

/*
 * The bytes of a request at its first sighting: rq's, or where block_getrq
 * sees a bio before its request (rq NULL), the bio's.
 */
static __always_inline __u32 seen_bytes(struct request *rq, struct bio *bio, bool btf)
{
	if (!rq)
		return BPF_CORE_READ(bio, bi_iter.bi_size);
	return btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
}

/*
 * Records a request's first sighting. The key (the struct request) may still
 * hold an entry:
 * - the same request sighted again: a requeue that kblockd re-inserts
 *   (block_rq_insert fires again, in kblockd's context). The entry made where
 *   it was submitted stays: it knows who submitted it and what the filters
 *   said, which kblockd's context cannot tell. Its start_time_ns (set before
 *   insert) is unchanged, which tells it from a new request in the struct.
 * - a new request in a struct whose last use never reached our completion
 *   program: counted, then replaced. block_io_start fires once per request,
 *   before the kernel sets start_time_ns (blk_account_io_start), so there
 *   every entry found is such a leftover and start_time_ns is not compared.
 *   A leftover that was filtered out (excluded) is replaced uncounted: no
 *   count of ours lacks it: such as the device flush of the disk under a
 *   loop device (each flush of the loop device makes one there) when -d
 *   names the loop device. Gone by the lookup: its completion deleted
 *   it, nothing was missed.
 * Returns 1 when the old entry was kept.
 */
static __always_inline int rq_record(__u64 key, struct rq_start *v)
{
	struct rq_start *old;
	long err;

	err = map_err(bpf_map_update_elem(&rq_starts, &key, v, BPF_NOEXIST));
	if (err == -EEXIST) {
		old = bpf_map_lookup_elem(&rq_starts, &key);
		if (old && !blk_origin_sees_all && old->alloc_ns && old->alloc_ns == v->alloc_ns) {
			/* Issued again after the requeue: the device's time restarts. */
			if (v->issue_ns && !old->excluded)
				old->issue_ns = v->issue_ns;
			return 1;
		}
		if (old && !old->excluded)
			count_drop(DROP_RQ_COMPLETION_MISSED);
		err = bpf_map_update_elem(&rq_starts, &key, v, BPF_ANY);
	}
	if (err)
		count_drop(DROP_RQ_MAP_FULL);
	return 0;
}

#include "blk_flush.bpf.h"   /* flushes and the requests that ask for them */
#include "blk_stamped.bpf.h" /* one program per request: the kernel's own stamps */
#include "stacks_blk.bpf.h" /* -K, -U: requests counted by stack */

/*
 * The first sighting of a request, in the submitter's context: filters are
 * applied here, and who and where are recorded for the completion. rq NULL:
 * a PREFLUSH bio at block_getrq, recorded by the bio (key) for its request.
 */
static __always_inline int blk_first_seen(void *ctx, struct request *rq, struct bio *bio,
					  __u64 key, __u64 now, __u64 issue_ns, bool btf)
{
	__u64 id = bpf_get_current_pid_tgid(), ukey = 0;
	struct aio_key akey = {};
	struct rq_start v = {};
	struct uring_start *ur;
	struct aio_start *ar;
	struct fault_start *fr;
	bool wanted, calls;
	struct thread_starts *mine = NULL, *call = NULL;

	if (rq && blk_preflush_bios && blk_adopt_preflush_bio(rq, key, issue_ns, btf))
		return 0;
	/*
	 * Started by the issue of a traced io_uring request: the request's
	 * (its submitter passed the filters; an io-wq worker or SQPOLL
	 * thread need not).
	 */
	ur = uring_issuing(&ukey, blk_origin_sees_all);
	/* Likewise an aio request's submission or fsync worker (aio.bpf.c). */
	ar = ur ? NULL : aio_issuing(&akey);
	/* A thread's request inside a fault (fault.bpf.c) is its fault's too:
	 * the page it waits for (read-ahead included). */
	fr = ur || ar ? NULL : fault_issuing();
	if (fr && fr->file_ok) {
		fr->blk_requests++;
		fr->blk_bytes += seen_bytes(rq, bio, btf);
	}
	wanted = ur ? uring_blk_file_wanted(ukey) : ar ? ar->file_ok : task_wanted(id);
	calls = !ur && !ar && (split_calls || events_on || nr_files);
	/* A journal thread's requests are its commit's, whoever is traced. */
	if (journal_blk || (wanted && calls))
		mine = current_slots(btf);
	/* (Before 6.5 a commit's empty PREFLUSH, seen by its bio, is left
	 * out of it: journal_count reads the request.) */
	if (mine && journal_blk && rq)
		journal_count(mine, rq, btf);
	if (wanted && calls)
		call = call_of(mine);
	/* --file: only requests of calls on those files (an open is not yet). */
	if (nr_files && !ur && !ar && (!call || call->file_pending))
		wanted = false;
	/* At block_io_start it is still the struct's previous use's. */
	if (rq && bpf_core_field_exists(rq->start_time_ns) && !(blk_origin_sees_all && !issue_ns))
		v.alloc_ns = btf ? rq->start_time_ns : BPF_CORE_READ(rq, start_time_ns);

	/* The disk, also unfiltered: the run's end asks whether its disk
	 * was idle (blk_leftovers.c), not whether every disk was. */
	if (wanted) {
		v.dev = rq ? rq_dev(rq, btf) : bio_dev(bio);
		wanted = !filter_dev || v.dev == targ_dev;
	}
	if (!wanted) {
		/*
		 * Insert does not see requests issued directly (no scheduler),
		 * so issue must take those as first sightings; a request that
		 * insert saw and filtered out is marked so that issue, maybe in
		 * another task's context, does not take it as new.
		 */
		if (issue_ns || blk_origin_sees_all)
			return 0;
		v.excluded = 1;
		rq_record(key, &v);
		return 0;
	}
	if (ur) {
		ur->blk_requests++;
		ur->blk_bytes += seen_bytes(rq, bio, btf);
		v.uring_req = ukey;
		v.uring_ns = ur->start_ns;
		/* -P, -G: the request's submitter's, not the worker's. */
		if (per_process || record_on)
			__builtin_memcpy(v.comm, ur->comm, COMM_LEN);
		v.cgid = ur->cgid;
	} else if (ar) {
		aio_count_request(ar, seen_bytes(rq, bio, btf),
				  !rq || rq_waits_for_flush(rq, rq_cmd_flags(rq, btf)));
		v.aio_ctx = akey.ctx;
		v.aio_obj = akey.obj;
		v.aio_ns = ar->start_ns;
		if (per_process || record_on)
			__builtin_memcpy(v.comm, ar->comm, COMM_LEN);
		v.cgid = ar->cgid;
	} else {
		if (per_process || record_on)
			bpf_get_current_comm(v.comm, sizeof(v.comm));
		if (per_cgroup) {
			v.cgid = bpf_get_current_cgroup_id();
			cgroup_path_note(v.cgid);
		}
	}
	if (call && (split_calls || events_on)) {
		count_call_request(call, seen_bytes(rq, bio, btf));
		if (rq) {
			count_call_flush(call, rq, btf);
		} else {
			/* A PREFLUSH bio at block_getrq: its disk has a write-back
			 * cache (submit_bio_noacct drops the flag where it has
			 * none), so it waits for a flush, one more request. */
			call->blk_requests++;
			call->blk_flushes++;
		}
	}
	if (call && events_on) {
		v.tid = (__u32)id;
		v.call_ns = call_ns_of(call);
	}
	v.origin_ns = now;
	v.issue_ns = issue_ns;
	v.tgid = id >> 32;
	stacks_origin(ctx, rq, bio, &v, btf);
	rq_record(key, &v);
	return 0;
}

/* Origin (block_io_start, else insert). */
static __always_inline int blk_origin(void *ctx, struct request *rq, bool btf)
{
	return blk_first_seen(ctx, rq, NULL, (__u64)rq, bpf_ktime_get_ns(), 0, btf);
}

static __always_inline int blk_issue(void *ctx, struct request *rq, bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct rq_start *v;

	/* The flush machinery's request: its requester is its submitter. */
	if ((rq_cmd_flags(rq, btf) & KREQ_OP_MASK) == KREQ_OP_FLUSH && rq_is_device_flush(rq)) {
		/* At issue, not in blk_flush_seen(): a flush first seen at
		 * its completion completes its waiters next, in the same
		 * context, and the completion program's stack has no room
		 * for the walk (bpf_loop steps are stacked on it). */
		if (!blk_origin_sees_all)
			flush_waiters_seen(rq);
		blk_flush_seen(rq, key, rq_start_ns(rq) ?: now, now, btf);
		return 0;
	}
	/* Without an origin point issue is always the first sighting. */
	if (!blk_origin_attached)
		return blk_first_seen(ctx, rq, NULL, key, now, now, btf);
	v = bpf_map_lookup_elem(&rq_starts, &key);
	if (v) {
		if (!v->excluded)
			v->issue_ns = now;
		return 0;
	}
	/* block_io_start sees every request: this one began before we did. */
	if (blk_origin_sees_all)
		return 0;
	/* Insert was bypassed (no scheduler): issue is the first sighting. */
	return blk_first_seen(ctx, rq, NULL, key, now, now, btf);
}

/* A request of a call completed (events): the slowest of the call so far,
 * for its event. */
static __always_inline void call_request_done(struct request *rq, struct rq_start *v,
					      __u64 delta, bool btf)
{
	__u32 dev = v->dev ? v->dev : rq_dev(rq, btf);
	struct call_blk *cb = bpf_map_lookup_elem(&call_blk, &v->tid);

	if (cb && cb->call_ns == v->call_ns) {
		if (delta > cb->max_ns) {
			cb->max_ns = delta;
			cb->dev = dev;
		}
	} else {
		struct call_blk fresh = { .call_ns = v->call_ns, .max_ns = delta, .dev = dev };

		bpf_map_update_elem(&call_blk, &v->tid, &fresh, BPF_ANY);
	}
}

/*
 * A request's event: with --trace, a request of a call (call_ns != 0);
 * with --record, every request counted, with what its cell and breakdowns
 * took (data_len, the key's disk, the submitter's name), so that user space
 * counts it again as blk_complete() did.
 */
static __always_inline void send_request(struct request *rq, struct rq_start *v, __u64 start,
					 __u64 delta, __u32 op, int error, __u32 nr_bytes,
					 __u32 data_len, bool btf)
{
	struct request_event *e = event_reserve(sizeof(*e));

	if (!e)
		return;
	e->kind = EV_REQUEST;
	e->op = (__u8)op;
	e->error = error ? 1 : 0;
	e->flags = pattern_rq_verdict((__u64)rq);
	e->tid = v->call_ns ? v->tid : 0;
	e->pid = v->tgid;
	e->dev = v->dev ? v->dev : rq_dev(rq, btf);
	e->call_ns = v->call_ns;
	e->start_ns = start;
	e->end_ns = start + delta;
	e->bytes = nr_bytes;
	e->sector = btf ? rq->__sector : BPF_CORE_READ(rq, __sector);
	e->data_len = data_len;
	e->key_dev = v->dev;
	__builtin_memcpy(e->comm, v->comm, COMM_LEN);
	bpf_ringbuf_submit(e, 0);
}

/* A write request's pages charged to their dirtiers (writeback.bpf.c):
 * with a task filter, -P or -G, where the blk layer is traced. */
const volatile bool wb_on;
struct wb_rq;
int wb_request_done(void);
static __always_inline void wb_request_of(struct request *rq, struct rq_start *v,
					  __u32 cmd_flags, int error, __u32 nr_bytes);

static __always_inline int blk_complete(struct request *rq, int error, __u32 nr_bytes, bool btf)
{
	__u64 key = (__u64)rq, start;
	__u32 cmd_flags = rq_cmd_flags(rq, btf), data_len;
	struct rq_start *v;
	bool preflush;

	if (blk_stamped)
		return blk_complete_stamped(rq, error, nr_bytes, btf);
	v = bpf_map_lookup_elem(&rq_starts, &key);
	/*
	 * The entry of the struct's earlier use, whose completion the kernel
	 * ran no program for, and whose next use nothing traced saw start (a
	 * device flush under -Q is first seen here): the kernel's start
	 * stamp tells the uses apart. That completion was missed; this one
	 * is new.
	 */
	if (v && v->alloc_ns && v->alloc_ns != rq_start_ns(rq)) {
		if (!v->excluded)
			count_drop(DROP_RQ_COMPLETION_MISSED);
		bpf_map_delete_elem(&rq_starts, &key);
		v = NULL;
	}
	if (!v)
		v = blk_flush_unseen(rq, key, cmd_flags, btf);
	if (wb_on)
		wb_request_of(rq, v, cmd_flags, error, nr_bytes);
	if (!v)
		return 0;
	/* A partial completion: the request goes on with the rest. */
	data_len = btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	if (nr_bytes < data_len)
		return 0;
	start = v->excluded ? 0 : blk_queued ? v->origin_ns : v->issue_ns;
	/* An empty PREFLUSH write is never issued: it waits for the flush. */
	preflush = !v->excluded && (!start || per_flags) && rq_preflush_only(rq, cmd_flags);
	if (!start && preflush)
		start = v->origin_ns;
	/*
	 * Let in where it started, but its issue was never seen: the kernel
	 * skipped that run of the program (one that would nest in another).
	 * Timed from issue, it cannot be timed: counted missed, so that
	 * counts plus missed stay diskstats'.
	 */
	if (!start && !v->excluded)
		count_drop(DROP_RQ_COMPLETION_MISSED);
	if (start) {
		__u32 op = rq_op(cmd_flags);
		__u64 delta = bpf_ktime_get_ns() - start;

		if (error)
			record_error(LAYER_BLK, op, delta);
		else
			record(LAYER_BLK, op, delta);
		record_bytes(LAYER_BLK, op, data_len);
		stacks_done(v, delta);
		if (events_on && v->call_ns)
			call_request_done(rq, v, delta, btf);
		if (record_on || (trace_on && v->call_ns))
			send_request(rq, v, start, delta, op, error, nr_bytes, data_len, btf);
		if (v->aio_ctx)
			aio_blk_done(v, delta);
		if (events_on && v->uring_req)
			uring_blk_done(v->uring_req, v->uring_ns, delta,
				       v->dev ? v->dev : rq_dev(rq, btf));
		if (per_process || per_disk || per_flags || per_cgroup) {
			struct breakdown_key k = {
				.cell_idx = CELL_INDEX(LAYER_BLK, op),
				.tgid = per_process ? v->tgid : 0,
				.dev = per_disk ? v->dev : 0,
				.flags = per_flags ? rq_flags(cmd_flags) |
							(preflush ? RQ_FLAG_PREFLUSH : 0) :
						  0,
				.cgid = per_cgroup ? v->cgid : 0,
			};

			record_breakdown_io(&k, per_process ? v->comm : NULL, delta, data_len, error);
		}
	}
	bpf_map_delete_elem(&rq_starts, &key);
	return 0;
}

/*
 * A request merged into another in the scheduler is freed without
 * completing: the one it joined completes for both (diskstats counts it as
 * merged, not as an I/O). Its entry goes, or the struct's next use would
 * find it and count a missed completion.
 */
static __always_inline int blk_merged(struct request *rq)
{
	__u64 key = (__u64)rq;

	bpf_map_delete_elem(&rq_starts, &key);
	return 0;
}

/* Before Linux 5.11 insert and issue had the queue as their first argument
 * ("block: remove the request_queue to argument request based
 * tracepoints", 5.11). */
#define RQ_ARG(args) ((struct request *)(blk_rq_argn ? (args)[1] : (args)[0]))
SEC("tp_btf/block_io_start")
int tb_io_start(__u64 *ctx)
{
	return blk_origin(ctx, (struct request *)ctx[0], true);
}

SEC("tp_btf/block_rq_insert")
int tb_rq_insert(__u64 *ctx)
{
	return blk_origin(ctx, RQ_ARG(ctx), true);
}

SEC("tp_btf/block_rq_issue")
int tb_rq_issue(__u64 *ctx)
{
	return blk_issue(ctx, RQ_ARG(ctx), true);
}

SEC("tp_btf/block_rq_complete")
int tb_rq_complete(__u64 *ctx)
{
	/* (rq, blk_status_t error, nr_bytes): any status but 0 is a failure. */
	return blk_complete((struct request *)ctx[0], (__u8)ctx[1], (__u32)ctx[2], true);
}

SEC("raw_tp/block_io_start")
int rt_io_start(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_origin(ctx, (struct request *)ctx->args[0], false);
}

SEC("raw_tp/block_rq_insert")
int rt_rq_insert(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_origin(ctx, RQ_ARG(ctx->args), false);
}

SEC("raw_tp/block_rq_issue")
int rt_rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_issue(ctx, RQ_ARG(ctx->args), false);
}

SEC("raw_tp/block_rq_complete")
int rt_rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_complete((struct request *)ctx->args[0], (__u8)ctx->args[1], (__u32)ctx->args[2],
			    false);
}

SEC("tp_btf/block_rq_merge")
int tb_rq_merge(__u64 *ctx)
{
	return blk_merged(RQ_ARG(ctx));
}

SEC("raw_tp/block_rq_merge")
int rt_rq_merge(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_merged(RQ_ARG(ctx->args));
}
