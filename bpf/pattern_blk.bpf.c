// SPDX-License-Identifier: GPL-2.0
/*
 * Access patterns at the block level (--pattern): each read or write
 * request as it is issued to the driver, sequential when it starts at the
 * sector where the disk's previous request ended (as libbpf-tools'
 * biopattern, which judges at completion). Issue is where the device's
 * order is decided, and it is a submission point: a completion the kernel
 * does not show to BPF takes nothing from these counts.
 *
 * Attached after the blk layer's programs, so that on the same tracepoint
 * theirs ran first and the request's entry (its submitter, what the filters
 * said) is in rq_starts. One program per request (blk_stamped) keeps no
 * entry: nothing then needs the submitter but -G, read here.
 *
 * Included by iostackbreak.bpf.c after bio.bpf.c (one compilation unit).
 */

static __always_inline int pattern_rq(struct request *rq, bool btf)
{
	struct pattern_key key = {};
	__u64 rqkey = (__u64)rq, sector, bytes;
	const char *comm = NULL;
	struct rq_start *rs;
	__u32 op, dev, verdict;

	op = rq_op(rq_cmd_flags(rq, btf));
	if (op != BLKOP_READ && op != BLKOP_WRITE)
		return 0;
	dev = rq_dev(rq, btf);
	if (filter_dev && dev != targ_dev)
		return 0;
	if (blk_stamped) {
		if (per_cgroup)
			key.cgid = bpf_get_current_cgroup_id();
	} else {
		rs = bpf_map_lookup_elem(&rq_starts, &rqkey);
		/* None: filtered out where it was first seen, or begun before
		 * we were. */
		if (!rs || rs->excluded)
			return 0;
		if (per_process) {
			key.tgid = rs->tgid;
			comm = rs->comm;
		}
		key.cgid = rs->cgid;
	}
	sector = btf ? rq->__sector : BPF_CORE_READ(rq, __sector);
	bytes = btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	if (!bytes)
		return 0;
	key.op = (__u8)op;
	verdict = pattern_sectors(&key, comm, PAT_BLK, dev, sector, bytes);
	if (trace_on)
		bpf_map_update_elem(&pattern_rqs, &rqkey, &verdict, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int tb_pattern_issue(__u64 *ctx)
{
	return pattern_rq(RQ_ARG(ctx), true);
}

SEC("raw_tp/block_rq_issue")
int rt_pattern_issue(struct bpf_raw_tracepoint_args *ctx)
{
	return pattern_rq(RQ_ARG(ctx->args), false);
}

/*
 * The bio level: each read or write bio as it is queued on its device,
 * after the bio layer's program (attached first) recorded it in bio_starts
 * if its filters let it in; against where the device's last bio ended.
 * Each device of a stack is its own stream: dm-0's bios, and the ones it
 * remaps onto the disk below.
 */
static __always_inline int pattern_bio_queued(struct bio *bio)
{
	struct pattern_key key = {};
	__u64 bkey = (__u64)bio, bytes;
	struct bio_start *bs = bpf_map_lookup_elem(&bio_starts, &bkey);
	__u32 op;

	if (!bs)
		return 0;
	op = rq_op(BPF_CORE_READ(bio, bi_opf));
	bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	if ((op != BLKOP_READ && op != BLKOP_WRITE) || !bytes)
		return 0;
	if (per_process)
		key.tgid = bs->tgid;
	key.cgid = bs->cgid;
	key.op = (__u8)op;
	pattern_sectors(&key, per_process ? bs->comm : NULL, PAT_BIO,
			bs->dev ? bs->dev : bio_dev(bio), BPF_CORE_READ(bio, bi_iter.bi_sector),
			bytes);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int tb_pattern_bio(__u64 *ctx)
{
	return pattern_bio_queued(BIO_ARG(ctx));
}

SEC("raw_tp/block_bio_queue")
int rt_pattern_bio(struct bpf_raw_tracepoint_args *ctx)
{
	return pattern_bio_queued(BIO_ARG(ctx->args));
}
