// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks of block I/O (-K, -U): each request counted under the kernel and
 * user stacks of the thread that made it, taken at its origin
 * (blk_first_seen: block_io_start, in the submitter's context). A bio that
 * joins a request already made counts its bytes under its own submitter's
 * stacks (blk_bio.bpf.c). The request's time is added at its completion,
 * from the key kept in its rq_start.
 *
 * Included by blk.bpf.c (it needs rq_op and seen_bytes, and blk_first_seen
 * needs it).
 */

/* A request's origin, in its submitter's context (blk_first_seen): its
 * key is kept in v for its completion. */
static __always_inline void stacks_origin(void *ctx, struct request *rq, struct bio *bio,
					  struct rq_start *v, bool btf)
{
	struct stack_key key = {};
	__u32 op;

	if (!stacks_on())
		return;
	op = rq ? rq_op(rq_cmd_flags(rq, btf)) : rq_op(BPF_CORE_READ(bio, bi_opf));
	if (!stacks_count(ctx, &key, &v->ucopy, v->tgid, v->dev, op, v->comm, 1,
			  seen_bytes(rq, bio, btf)))
		return;
	v->kstack = key.kstack;
	v->ustack = key.ustack;
	v->stack_op = op + 1;
	__builtin_memcpy(v->comm, key.comm, sizeof(v->comm));
}

/* A bio that joined a request already made: its bytes, its stacks. */
static __always_inline void stacks_bio_merged(void *ctx, struct bio *bio)
{
	struct stack_key key = {};
	__u32 ucopy;

	if (!stacks_on())
		return;
	stacks_count(ctx, &key, &ucopy, bpf_get_current_pid_tgid() >> 32, per_disk ? bio_dev(bio) : 0,
		     rq_op(BPF_CORE_READ(bio, bi_opf)), NULL, 0, BPF_CORE_READ(bio, bi_iter.bi_size));
}

/* A request counted at its origin completed after delta ns. */
static __always_inline void stacks_done(struct rq_start *v, __u64 delta)
{
	struct stack_key key = {};
	struct stack_counts *c;

	if (!v->stack_op)
		return;
	if (v->ustack == STACK_UNWOUND) {
		struct ustack_done d = { .seq = v->ucopy, .ns = delta };

		if (d.seq && bpf_ringbuf_output(&ustack_snaps, &d, sizeof(d), 0))
			stack_loss(STACK_LOSS_SNAPS, 1);
		return;
	}
	key.kstack = v->kstack;
	key.ustack = v->ustack;
	key.tgid = per_process || stacks_user ? v->tgid : 0;
	key.dev = per_disk ? v->dev : 0;
	key.op = v->stack_op - 1;
	__builtin_memcpy(key.comm, v->comm, sizeof(key.comm));
	c = bpf_map_lookup_elem(&stack_counts, &key);
	if (!c)
		return;
	__sync_fetch_and_add(&c->time_ns, delta);
	__sync_fetch_and_add(&c->timed, 1);
}
