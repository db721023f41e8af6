// SPDX-License-Identifier: GPL-2.0
/*
 * The bio layer: each bio timed from its submission to a device
 * (block_bio_queue) to its end (block_bio_complete), per device. It sees
 * the devices that never make a struct request (dm, md, zram, nbd, pmem)
 * as well as the time a bio spends on a request-based disk. Owns the map
 * bio_starts; filters by the submitter, as the block layer does.
 *
 * Counted once per bio: the kernel traces a bio's queue once (it flags the
 * bio BIO_TRACE_COMPLETION there and skips the trace when the bio comes
 * back, as the rest of a split does), and its completion once, when every
 * piece split off it has ended (bio_endio waits for the chain). A split's
 * pieces are never queued by themselves: the parent holds their time. A
 * stacked device's bio (dm-0) and the clone it sends below (vda) are two
 * bios, each counted on its own device.
 *
 * A bio on a request-based disk ends inside its request:
 * blk_update_request() ends it without block_bio_complete, so the bio's end
 * is taken from block_rq_complete, walking the bios the completed bytes
 * cover. A split there leaves the parent as the last piece (the rest goes
 * round again) and chains the pieces cut off it to it (bio_chain: their
 * bi_private is the parent), each piece traced by block_split: the parent
 * ends with whichever of its own I/O and its pieces ends last. Its
 * __bi_remaining cannot tell that: other holders raise it too (btrfs sends
 * the bio of a DUP metadata write to one mirror and a clone of it to the
 * other, and the clone's end ends the bio: no tracepoint sees that), so
 * the bio layer counts the pieces itself, in bio_start.pending.
 *
 * Included by iostackbreak.bpf.c after blk.bpf.c, whose -d knobs it reads.
 */

/* Before Linux 5.11 block_bio_queue had the queue first ("block: remove
 * the request_queue argument to the block_bio_queue tracepoint"). */
const volatile __u32 bio_queue_argn;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_INFLIGHT_BIOS);
	__type(key, __u64);
	__type(value, struct bio_start);
} bio_starts SEC(".maps");

/* -D, events: bios remapped from a stacked device, between block_bio_remap
 * and their queue on the device below (the dev_t they came from, and the
 * call of the bio above). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_INFLIGHT_BIOS);
	__type(key, __u64);
	__type(value, struct bio_call);
} bio_remapped SEC(".maps");

/*
 * Events: the bios of calls in flight, by device and first sector, for
 * block_bio_remap to find the call of the bio above the one it remaps (it
 * names that bio by its device and sector only).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_INFLIGHT_BIOS);
	__type(key, struct bio_sector);
	__type(value, struct bio_call);
} bio_calls_at SEC(".maps");

/*
 * -P, -D: the breakdown keys a bio will count under at its end, made now,
 * in the submitter's context. A new key made at the end, in interrupt
 * context, can find the kernel's allocator for the map empty (6.1: the
 * first bio of each key was lost as breakdown_map_full in the VM suite).
 */
static __always_inline void bio_keys_made(struct bio *bio, struct bio_start *v)
{
	__u32 op = rq_op(BPF_CORE_READ(bio, bi_opf));
	struct breakdown_key k = {
		.cell_idx = CELL_INDEX(LAYER_BIO, op),
		.tgid = per_process ? v->tgid : 0,
		.dev = per_disk ? v->dev : 0,
		.cgid = per_cgroup ? v->cgid : 0,
	};

	breakdown_cell_of(DROP_BREAKDOWN_MAP_FULL, &k);
	if (per_disk && v->upper) {
		struct breakdown_key e = {
			.cell_idx = BIO_EDGE_INDEX(op),
			.dev = v->dev,
			.flags = v->upper,
		};

		breakdown_cell_of(DROP_BREAKDOWN_MAP_FULL, &e);
	}
}

/*
 * Events: the call a bio is part of. A bio remapped from a call's bio is
 * that call's, whoever queues it (dm-delay's and dm-crypt's workers do);
 * else a bio queued by a thread inside a call (on a file --file keeps),
 * on a device below (v->upper) when it is a piece dm split off.
 */
static __always_inline void bio_call_of(struct bio *bio, struct bio_start *v, __u64 id, bool btf)
{
	struct thread_starts *call;
	struct bio_sector at = {};
	struct bio_call c;

	if (!v->tid) {
		call = call_of(current_slots(btf));
		if (!call || (nr_files && call->file_pending))
			return;
		v->tid = (__u32)id;
		v->call_ns = call_ns_of(call);
	}
	/* For the bios it becomes below. */
	v->sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	at.sector = v->sector;
	at.dev = v->dev;
	c.call_ns = v->call_ns;
	c.tid = v->tid;
	c.from = 0;
	bpf_map_update_elem(&bio_calls_at, &at, &c, BPF_ANY);
}

static __always_inline int bio_queued(struct bio *bio, bool btf)
{
	__u64 id = bpf_get_current_pid_tgid(), key = (__u64)bio;
	struct bio_start v = {};
	long err;

	if (per_disk || bio_calls) {
		struct bio_call *r = bpf_map_lookup_elem(&bio_remapped, &key);

		if (r) {
			v.upper = r->from;
			v.tid = r->tid;
			v.call_ns = r->call_ns;
			bpf_map_delete_elem(&bio_remapped, &key);
		}
	}
	if (!v.tid && !task_wanted(id))
		return 0;
	if (filter_dev || per_disk || bio_calls) {
		v.dev = bio_dev(bio);
		if (filter_dev && v.dev != targ_dev)
			return 0;
	}
	if (bio_calls)
		bio_call_of(bio, &v, id, btf);
	if (per_process)
		bpf_get_current_comm(v.comm, sizeof(v.comm));
	v.tgid = id >> 32;
	if (per_cgroup) {
		v.cgid = bpf_get_current_cgroup_id();
		cgroup_path_note(v.cgid);
	}
	if (per_process || per_disk || per_cgroup)
		bio_keys_made(bio, &v);
	v.pending = 1; /* its own I/O */
	v.bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	v.start_ns = bpf_ktime_get_ns();
	err = map_err(bpf_map_update_elem(&bio_starts, &key, &v, BPF_NOEXIST));
	if (err == -EEXIST) {
		count_drop(DROP_BIO_COMPLETION_MISSED);
		err = bpf_map_update_elem(&bio_starts, &key, &v, BPF_ANY);
	}
	if (err)
		count_drop(DROP_BIO_MAP_FULL);
	return 0;
}

/* A call's level of device dev; NULL when every level is another's. */
static __always_inline struct call_bio_level *call_bio_level_of(struct call_bio *b, __u32 dev)
{
	for (int i = 0; i < MAX_CALL_BIO_LEVELS; i++) {
		__u32 had = b->lv[i].dev;

		/* Two ends of the call's bios can race for a free level. */
		if (!had)
			had = __sync_val_compare_and_swap(&b->lv[i].dev, 0, dev);
		if (!had || had == dev)
			return &b->lv[i];
	}
	return NULL;
}

/* A call's bio ended without error after delta ns (events). */
static __always_inline void call_bio_done(struct bio_start *v, __u64 delta)
{
	struct call_bio *b = bpf_map_lookup_elem(&call_bio, &v->tid);
	struct call_bio_level *l;

	if (!b || b->call_ns != v->call_ns) {
		struct call_bio fresh = { .call_ns = v->call_ns };

		/* The thread is in a later call: this one's event has gone. */
		if (b && b->call_ns > v->call_ns)
			return;
		bpf_map_update_elem(&call_bio, &v->tid, &fresh, BPF_ANY);
		b = bpf_map_lookup_elem(&call_bio, &v->tid);
		if (!b)
			return;
	}
	if (!v->upper) {
		__sync_fetch_and_add(&b->top_ns, delta);
		__sync_fetch_and_add(&b->top_bios, 1);
	}
	l = call_bio_level_of(b, v->dev);
	if (!l) {
		__sync_fetch_and_add(&b->cut, 1);
		return;
	}
	__sync_fetch_and_add(&l->ns, delta);
	__sync_fetch_and_add(&l->bios, 1);
	if (v->upper) {
		l = call_bio_level_of(b, v->upper);
		if (l)
			__sync_fetch_and_add(&l->below_ns, delta);
	}
}

/*
 * The end of the bio at address key. status: the bio's blk_status_t, or
 * the request's error for a bio ended with its request.
 */
static __always_inline int bio_completed(__u64 key, __u32 status, __u64 now)
{
	struct bio *bio = (struct bio *)key;
	struct bio_start *v = bpf_map_lookup_elem(&bio_starts, &key);
	__u64 delta;
	__u32 op;

	if (!v)
		return 0;
	delta = now - v->start_ns;
	op = rq_op(BPF_CORE_READ(bio, bi_opf));
	if (status)
		record_error(LAYER_BIO, op, delta);
	else
		record(LAYER_BIO, op, delta);
	record_bytes(LAYER_BIO, op, v->bytes);
	if (per_process || per_disk || per_cgroup) {
		struct breakdown_key k = {
			.cell_idx = CELL_INDEX(LAYER_BIO, op),
			.tgid = per_process ? v->tgid : 0,
			.dev = per_disk ? v->dev : 0,
			.cgid = per_cgroup ? v->cgid : 0,
		};

		record_breakdown_io(&k, per_process ? v->comm : NULL, delta, v->bytes, status);
		/* The stack: this device's time, under the device above. */
		if (per_disk && v->upper && !status) {
			struct breakdown_key e = {
				.cell_idx = BIO_EDGE_INDEX(op),
				.dev = v->dev,
				.flags = v->upper,
			};

			record_breakdown(&e, NULL, delta);
		}
	}
	if (bio_calls && v->tid) {
		struct bio_sector at = { .sector = v->sector, .dev = v->dev };

		if (!status)
			call_bio_done(v, delta);
		bpf_map_delete_elem(&bio_calls_at, &at);
	}
	bpf_map_delete_elem(&bio_starts, &key);
	return 0;
}

/* The most bios of one request walked at its completion; a bio past them
 * stays in bio_starts until its struct is queued again (counted then as
 * bio_completion_missed). A request takes at most max_segments bios (128
 * on most disks), and bios of 4 KiB merge into far fewer. */
#define MAX_RQ_BIOS 128

/* Where the walk of a request's bios is, between steps of bpf_loop. */
struct rq_walk {
	__u64 bio; /* the next bio, 0 at the end */
	__u64 now;
	__u32 done; /* bytes of the bios walked so far */
	__u32 nr_bytes;
	__u32 error;
};

/*
 * One bio of a completing request (a bpf_loop step: the verifier checks
 * it once, where an unrolled walk of 128 was too big for 6.1's).
 */
static long rq_walk_step(__u32 i, struct rq_walk *w)
{
	struct bio *bio = (struct bio *)w->bio;
	__u64 key = w->bio;
	struct bio_start *v;

	if (!bio)
		return 1;
	w->done += BPF_CORE_READ(bio, bi_iter.bi_size);
	if (w->done > w->nr_bytes)
		return 1;
	w->bio = (__u64)BPF_CORE_READ(bio, bi_next);
	v = bpf_map_lookup_elem(&bio_starts, &key);
	if (!v) {
		/* A piece split off a bio we time? */
		key = (__u64)BPF_CORE_READ(bio, bi_private);
		v = key ? bpf_map_lookup_elem(&bio_starts, &key) : NULL;
		if (!v)
			return 0;
	}
	if (__sync_fetch_and_add(&v->pending, -1) == 1)
		bio_completed(key, w->error, w->now);
	return 0;
}

/*
 * A request completes nr_bytes: the bios at its head that those bytes
 * cover end now (blk_update_request ends them in this order). A partial
 * completion ends only the bios it covers; the rest end with a later one.
 * A bio we time, or a piece split off one, takes one off the bio's
 * pending count; the last one ends it.
 */
static __always_inline int bio_rq_done(struct request *rq, __u8 error, __u32 nr_bytes)
{
	struct rq_walk w = {
		.bio = (__u64)BPF_CORE_READ(rq, bio),
		.now = bpf_ktime_get_ns(),
		.nr_bytes = nr_bytes,
		.error = error,
	};

	if (w.bio)
		bpf_loop(MAX_RQ_BIOS, rq_walk_step, &w, 0);
	return 0;
}

/*
 * block_split: a piece cut off a bio (the bio goes round again as the
 * rest), chained to it just before (its bi_private is the bio). A bio we
 * time has one more end to wait for.
 */
static __always_inline int bio_split_seen(struct bio *piece)
{
	__u64 key = (__u64)BPF_CORE_READ(piece, bi_private);
	struct bio_start *v = key ? bpf_map_lookup_elem(&bio_starts, &key) : NULL;

	if (v)
		__sync_fetch_and_add(&v->pending, 1);
	return 0;
}

/*
 * A stacked device (dm) sends a bio to the device below: (bio, dev_t of the
 * device it came from, sector there), the queue argument first before
 * 5.11. A partition's remap onto its disk names the same bio on the same
 * disk: not a level of the stack. With events, the bio above it (a call's
 * bio at that device and sector) hands it its call.
 */
static __always_inline int bio_remap(struct bio *bio, __u32 from, __u64 sector)
{
	struct bio_call r = { .from = from };
	__u64 key = (__u64)bio;

	if (!per_disk && !bio_calls)
		return 0;
	if (from == bio_dev(bio) || from == BPF_CORE_READ(bio, bi_bdev, bd_dev))
		return 0;
	if (bio_calls) {
		struct bio_sector at = { .sector = sector, .dev = from };
		struct bio_call *c = bpf_map_lookup_elem(&bio_calls_at, &at);

		if (c) {
			r.call_ns = c->call_ns;
			r.tid = c->tid;
		}
	}
	/* Without a call found (a piece of a bio dm split: it names the
	 * piece's sector), its queue still learns that it is a level below. */
	bpf_map_update_elem(&bio_remapped, &key, &r, BPF_ANY);
	return 0;
}

#define BIO_ARG(args) ((struct bio *)(bio_queue_argn ? (args)[1] : (args)[0]))

SEC("tp_btf/block_bio_queue")
int tb_bio_queue(__u64 *ctx)
{
	return bio_queued(BIO_ARG(ctx), true);
}

/* (q, bio) on every kernel. */
SEC("tp_btf/block_bio_complete")
int tb_bio_complete(__u64 *ctx)
{
	struct bio *bio = (struct bio *)ctx[1];

	return bio_completed((__u64)bio, BPF_CORE_READ(bio, bi_status), bpf_ktime_get_ns());
}

/* (rq, blk_status_t error, nr_bytes), as for the block layer. */
SEC("tp_btf/block_rq_complete")
int tb_bio_rq_complete(__u64 *ctx)
{
	return bio_rq_done((struct request *)ctx[0], (__u8)ctx[1], (__u32)ctx[2]);
}

SEC("tp_btf/block_bio_remap")
int tb_bio_remap(__u64 *ctx)
{
	/* Fixed context offsets only: the verifier refuses a computed one. */
	if (bio_queue_argn)
		return bio_remap((struct bio *)ctx[1], (__u32)ctx[2], ctx[3]);
	return bio_remap((struct bio *)ctx[0], (__u32)ctx[1], ctx[2]);
}

SEC("raw_tp/block_bio_remap")
int rt_bio_remap(struct bpf_raw_tracepoint_args *ctx)
{
	if (bio_queue_argn)
		return bio_remap((struct bio *)ctx->args[1], (__u32)ctx->args[2], ctx->args[3]);
	return bio_remap((struct bio *)ctx->args[0], (__u32)ctx->args[1], ctx->args[2]);
}

/* (piece, new_sector), the queue argument first before 5.11. */
SEC("tp_btf/block_split")
int tb_bio_split(__u64 *ctx)
{
	return bio_split_seen(BIO_ARG(ctx));
}

SEC("raw_tp/block_split")
int rt_bio_split(struct bpf_raw_tracepoint_args *ctx)
{
	return bio_split_seen(BIO_ARG(ctx->args));
}

SEC("raw_tp/block_bio_queue")
int rt_bio_queue(struct bpf_raw_tracepoint_args *ctx)
{
	return bio_queued(BIO_ARG(ctx->args), false);
}

SEC("raw_tp/block_bio_complete")
int rt_bio_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct bio *bio = (struct bio *)ctx->args[1];

	return bio_completed((__u64)bio, BPF_CORE_READ(bio, bi_status), bpf_ktime_get_ns());
}

SEC("raw_tp/block_rq_complete")
int rt_bio_rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	return bio_rq_done((struct request *)ctx->args[0], (__u8)ctx->args[1], (__u32)ctx->args[2]);
}
