// SPDX-License-Identifier: GPL-2.0
/*
 * Bios at the request layer, in their submitter's context: a bio that
 * joins a request already started (its bytes, to its call), and before
 * Linux 6.5 a PREFLUSH bio where its request is made (whose the request
 * and its flush are). Both only where the plan needs them.
 *
 * Included by iostackbreak.bpf.c after blk.bpf.c (one compilation unit).
 */

/* -d: is the bio for another disk than the one traced? */
static __always_inline bool bio_filtered_out(struct bio *bio)
{
	if (!filter_dev)
		return false;
	return bio_dev(bio) != targ_dev;
}

/*
 * A bio merged into a request that already started (in the plug or the
 * scheduler), in the context of the thread that submitted it: the request
 * grew after its origin counted its bytes for the call, so the bio's bytes
 * go to the call here. Only with parts or events (the planner attaches it
 * then).
 */
static __always_inline int blk_bio_merged(void *ctx, struct bio *bio, bool btf)
{
	struct thread_starts *call, *mine = NULL;
	__u64 ukey = 0;
	struct uring_start *ur = uring_issuing(&ukey, blk_origin_sees_all);
	bool wanted;

	/* Bytes of an io_uring request's issue: the request's (see
	 * blk_first_seen). */
	struct aio_key akey;
	struct aio_start *ar;

	if (ur) {
		if (uring_blk_file_wanted(ukey) && !bio_filtered_out(bio))
			ur->blk_bytes += BPF_CORE_READ(bio, bi_iter.bi_size);
		return 0;
	}
	ar = aio_issuing(&akey);
	if (ar) {
		if (ar->file_ok && !bio_filtered_out(bio))
			ar->blk_bytes += BPF_CORE_READ(bio, bi_iter.bi_size);
		return 0;
	}
	wanted = task_wanted(bpf_get_current_pid_tgid());
	if (wanted && !bio_filtered_out(bio))
		stacks_bio_merged(ctx, bio);
	if (!wanted && !journal_blk)
		return 0;
	mine = current_slots(btf);
	/*
	 * A journal thread's commit writes its log blocks one buffer at a
	 * time, merged into few requests after their first sighting: their
	 * bytes are the commit's (journal_count).
	 */
	if (journal_blk && mine && mine->jbd2_state == JBD2_COMMITTING && !bio_filtered_out(bio))
		mine->journal_bytes += BPF_CORE_READ(bio, bi_iter.bi_size);
	call = wanted ? call_of(mine) : NULL;
	if (!call || (nr_files && call->file_pending))
		return 0;
	if (bio_filtered_out(bio))
		return 0;
	call_counts(call)->blk_bytes += BPF_CORE_READ(bio, bi_iter.bi_size);
	return 0;
}

/*
 * block_getrq: a request was just made for bio, in the submitter's context
 * (blk_mq_submit_bio, before blk_insert_flush). Before 6.5 nothing later
 * sees a PREFLUSH request there: the flush queue takes it before insert,
 * its flush goes from kblockd, and its data (if any) is issued from the
 * dispatch list. So such a bio is its request's first sighting, recorded
 * by the bio (the request is not an argument) for the flush's first
 * requester, the empty write's completion and the data's issue to find
 * (blk_flush.bpf.h). Every other bio leaves at once.
 */
static __always_inline int blk_getrq(void *ctx, struct bio *bio, bool btf)
{
	if (!(BPF_CORE_READ(bio, bi_opf) &
	      (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH))))
		return 0;
	return blk_first_seen(ctx, NULL, bio, (__u64)bio, bpf_ktime_get_ns(), 0, btf);
}

/* The bio merge tracepoints had (q, rq, bio) before 5.11, (bio) since;
 * block_getrq had (q, bio, rw). */
#define BIO_MERGE_ARG(args) ((struct bio *)(blk_rq_argn ? (args)[2] : (args)[0]))
#define GETRQ_BIO_ARG(args) ((struct bio *)(blk_rq_argn ? (args)[1] : (args)[0]))

SEC("tp_btf/block_bio_backmerge")
int tb_bio_backmerge(__u64 *ctx)
{
	return blk_bio_merged(ctx, BIO_MERGE_ARG(ctx), true);
}

SEC("raw_tp/block_bio_backmerge")
int rt_bio_backmerge(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_bio_merged(ctx, BIO_MERGE_ARG(ctx->args), false);
}

SEC("tp_btf/block_bio_frontmerge")
int tb_bio_frontmerge(__u64 *ctx)
{
	return blk_bio_merged(ctx, BIO_MERGE_ARG(ctx), true);
}

SEC("raw_tp/block_bio_frontmerge")
int rt_bio_frontmerge(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_bio_merged(ctx, BIO_MERGE_ARG(ctx->args), false);
}

SEC("tp_btf/block_getrq")
int tb_getrq(__u64 *ctx)
{
	return blk_getrq(ctx, GETRQ_BIO_ARG(ctx), true);
}

SEC("raw_tp/block_getrq")
int rt_getrq(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_getrq(ctx, GETRQ_BIO_ARG(ctx->args), false);
}
