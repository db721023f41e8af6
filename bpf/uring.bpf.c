// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring layer: each request timed from its submission
 * (io_uring:io_uring_submit_req) to its completion being posted
 * (io_uring:io_uring_complete), matched by its struct io_kiocb in the
 * "uring_starts" map. A ring runs requests with few io_uring_enter calls,
 * or none (SQPOLL), and completes them in any thread: the layer hangs off
 * the requests, not the system call. Filters are applied at submission,
 * to the submitter; completion only reads what submission recorded.
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

/*
 * io_uring_complete's prototype: (ctx, req, cqe) since Linux 6.3; before,
 * (ctx, req, user_data, res, cflags[, extra1, extra2]). Set from BTF by
 * user space (probe.c).
 */
const volatile bool uring_complete_fields;

/* IORING_CQE_F_MORE (include/uapi/linux/io_uring.h): more completions of
 * this request will follow (multishot). */
#define KIORING_CQE_F_MORE (1U << 1)

/*
 * REQ_F_CQE_SKIP: submitted with IOSQE_CQE_SKIP_SUCCESS, the request posts
 * no completion when it succeeds. The low REQ_F_ bits are the IOSQE_ flag
 * bits (REQ_F_CQE_SKIP_BIT = IOSQE_CQE_SKIP_SUCCESS_BIT, io_uring_types.h),
 * fixed by the ABI.
 */
#define KREQ_F_CQE_SKIP (1ULL << 6)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_INFLIGHT_URING);
	__type(key, __u64);
	__type(value, struct uring_start);
} uring_starts SEC(".maps");

/*
 * Requests split into parts (uring_split; off with --no-parts): per op the
 * totals, and per part a histogram of its time per request (requests where
 * the part took no time are not added: user space adds them as zeros).
 */
const volatile bool uring_split;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_URING_OPS *NR_URING_PARTS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} uring_parts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_URING_OPS);
	__type(key, __u32);
	__type(value, struct call_totals);
} uring_ops SEC(".maps");

/* The time since the last change goes to the request's part; it moves on
 * to `part`. One place splits, so the parts add up to the latency. */
static __always_inline void uring_charge(struct uring_start *v, __u64 now, __u32 part)
{
	__u32 cur = v->part;

	if (cur < NR_URING_PARTS)
		v->part_ns[cur] += now - v->last_ns;
	v->last_ns = now;
	v->part = (__u8)part;
}

/* A request's part changes (punted, a poll armed or fired). */
static __always_inline int uring_moves(struct io_kiocb *req, __u32 part, bool only_from_poll)
{
	__u64 key = (__u64)req;
	struct uring_start *v = bpf_map_lookup_elem(&uring_starts, &key);

	if (!v || (only_from_poll && v->part != URING_PART_POLL))
		return 0;
	uring_charge(v, bpf_ktime_get_ns(), part);
	return 0;
}

/* A request (or one completion of a multishot one) ended: its parts. */
static __always_inline void uring_record_parts(struct uring_start *v, __u32 op, __u64 delta)
{
	struct call_totals *t = bpf_map_lookup_elem(&uring_ops, &op);

	if (!t || op >= NR_URING_OPS)
		return;
	t->count++;
	t->total_ns += delta;
	for (__u32 p = 0; p < NR_URING_PARTS; p++)
		if (v->part_ns[p])
			hist_add(&uring_parts, op * NR_URING_PARTS + p, v->part_ns[p]);
}

/* The op of an opcode, from cells.def; opcodes it does not list: other. */
static __always_inline __u32 uring_op(__u8 opcode)
{
	switch (opcode) {
#define URING_OPCODE(op, name)                                                                     \
	case IORING_OP_##name:                                                                     \
		return op;
#include "cells.def"
	}
	return UOP_OTHER;
}

static __always_inline int uring_submit(struct io_kiocb *req, bool btf)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 key = (__u64)req, flags;
	struct uring_start v = {};
	long err;

	flags = btf ? req->flags : BPF_CORE_READ(req, flags);
	/*
	 * Not ours, or never completed for us: an entry a struct's last use
	 * left (its completion missed) must not time this request.
	 */
	if (!task_wanted(id) || (flags & KREQ_F_CQE_SKIP)) {
		if ((nr_targ_tgids || targ_tid || filter_comm || filter_cgroup ||
		     (flags & KREQ_F_CQE_SKIP)) &&
		    !bpf_map_delete_elem(&uring_starts, &key))
			count_drop(DROP_URING_COMPLETION_MISSED);
		return 0;
	}
	v.opcode = btf ? req->opcode : BPF_CORE_READ(req, opcode);
	v.op = (__u8)uring_op(v.opcode);
	v.tgid = id >> 32;
	v.tid = (__u32)id;
	if (by_pid || events_on)
		bpf_get_current_comm(v.comm, sizeof(v.comm));
	if (by_cgroup) {
		v.cgid = bpf_get_current_cgroup_id();
		cgroup_path_note(v.cgid);
	}
	v.pos = NO_POS;
	v.bytes = NO_POS;
	/* Prepared by now (io_init_req): the io_rw in the request's command. */
	if (events_on && (v.op == UOP_READ || v.op == UOP_WRITE)) {
		struct io_rw *rw = (struct io_rw *)&req->cmd;

		v.pos = BPF_CORE_READ(rw, kiocb.ki_pos);
		v.bytes = BPF_CORE_READ(rw, len);
	}
	v.start_ns = bpf_ktime_get_ns();
	v.last_ns = v.start_ns;
	v.part = URING_PART_INLINE;
	err = map_err(bpf_map_update_elem(&uring_starts, &key, &v, BPF_NOEXIST));
	if (err == -EEXIST) {
		/* The struct's last request completed unseen (see above). */
		count_drop(DROP_URING_COMPLETION_MISSED);
		err = bpf_map_update_elem(&uring_starts, &key, &v, BPF_ANY);
	}
	if (err)
		count_drop(DROP_URING_MAP_FULL);
	return 0;
}

/*
 * Is the request's file one we count? Storage only without --all-fds,
 * told by the file the request used (its file is set for fixed and plain
 * descriptors alike by the time it completes, and put only after); opens
 * have none yet and are kept, as they look a path up in a file system.
 */
static __always_inline bool uring_file_wanted(struct io_kiocb *req, struct uring_start *v)
{
	struct file *f;
	__u32 kind;

	if (all_fds && !nr_files)
		return true;
	f = BPF_CORE_READ(req, file);
	if (!all_fds && v->op != UOP_OPEN) {
		kind = file_kind(f);
		if (kind != FD_STORAGE) {
			count_left_out(LAYER_IO_URING, v->op, kind);
			return false;
		}
	}
	/* --file: only requests on those files (an open has none). */
	return !nr_files || (f && inode_wanted(BPF_CORE_READ(f, f_inode)));
}

/*
 * --slower, --trace: a request ended, as a call event of the io_uring
 * layer, on its submitter's thread; part_ns[] holds its parts.
 */
static __always_inline void emit_uring(struct io_kiocb *req, struct uring_start *v, __u32 op,
				       __u64 now, __s32 res)
{
	struct call_event *e = event_reserve(sizeof(struct call_event));
	struct file *f;

	if (!e)
		return;
	e->kind = EV_CALL;
	e->layer = LAYER_IO_URING;
	e->op = (__u8)op;
	e->path_depth = 0;
	e->flags = 0;
	e->pid = v->tgid;
	e->tid = v->tid;
	e->call_ns = v->start_ns;
	e->end_ns = now;
	e->ret = res;
	e->pos = v->pos;
	e->bytes = v->bytes;
	for (__u32 p = 0; p < NR_PARTS; p++)
		e->part_ns[p] = p < NR_URING_PARTS && uring_split ? v->part_ns[p] : 0;
	e->blk_requests = 0;
	e->blk_bytes = 0;
	e->blk_max_ns = 0;
	e->blk_max_dev = 0;
	e->opcode = v->opcode;
	/* What a call of a thread waited for and added to the page cache
	 * (why.bpf.c) is not a request's. */
	e->journal_requests = 0;
	e->journal_flushes = 0;
	e->journal_bytes = 0;
	e->cache_miss_pages = 0;
	e->readahead_pages = 0;
	e->writeback_pages = 0;
	for (__u32 k = 0; k < NR_LOCK_KINDS; k++)
		e->lock_ns[k] = 0;
	e->lock_addr = 0;
	e->lock_max_ns = 0;
	__builtin_memcpy(e->comm, v->comm, COMM_LEN);
	/* An open's file is not its own yet (the one it makes is in res). */
	f = v->op != UOP_OPEN ? BPF_CORE_READ(req, file) : NULL;
	event_file(e, f);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int uring_complete(struct io_kiocb *req, __s32 res, __u32 cflags)
{
	__u64 key = (__u64)req, now, delta;
	struct uring_start *v;
	__u32 op;

	if (!req)
		return 0; /* a completion of no request (io_post_aux_cqe) */
	v = bpf_map_lookup_elem(&uring_starts, &key);
	if (!v)
		return 0;
	now = bpf_ktime_get_ns();
	delta = now - v->start_ns;
	op = v->op;
	if (op >= NR_URING_OPS)
		op = UOP_OTHER;
	if (uring_file_wanted(req, v)) {
		record(LAYER_IO_URING, op, delta);
		if (uring_split) {
			uring_charge(v, now, v->part);
			uring_record_parts(v, op, delta);
		}
		if (events_on && (delta >= slower_ns || trace_on))
			emit_uring(req, v, op, now, res);
		if (by_pid || by_cgroup) {
			struct breakdown_key k = { .cell_idx = CELL_INDEX(LAYER_IO_URING, op),
						   .tgid = by_pid ? v->tgid : 0,
						   .cgid = by_cgroup ? v->cgid : 0 };

			record_breakdown(&k, by_pid ? v->comm : NULL, delta);
		}
	}
	/*
	 * A multishot request (READ_MULTISHOT) posts a completion per read
	 * and stays: each is counted, timed from the one before.
	 */
	if (cflags & KIORING_CQE_F_MORE) {
		v->start_ns = now;
		v->last_ns = now;
		for (__u32 p = 0; p < NR_URING_PARTS; p++)
			v->part_ns[p] = 0;
		return 0;
	}
	bpf_map_delete_elem(&uring_starts, &key);
	return 0;
}

SEC("tp_btf/io_uring_submit_req")
int tb_uring_submit(__u64 *ctx)
{
	return uring_submit((struct io_kiocb *)ctx[0], true);
}

/* (ctx, req, cqe), or (ctx, req, user_data, res, cflags, ...): req is a
 * void * in both, read with CO-RE. */
SEC("tp_btf/io_uring_complete")
int tb_uring_complete(__u64 *ctx)
{
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)ctx[2];
	__u32 cflags = uring_complete_fields ? (__u32)ctx[4] : BPF_CORE_READ(cqe, flags);
	__s32 res = uring_complete_fields ? (__s32)ctx[3] : BPF_CORE_READ(cqe, res);

	return uring_complete((struct io_kiocb *)ctx[1], res, cflags);
}

SEC("raw_tp/io_uring_submit_req")
int rt_uring_submit(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_submit((struct io_kiocb *)ctx->args[0], false);
}

SEC("raw_tp/io_uring_complete")
int rt_uring_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)ctx->args[2];
	__u32 cflags = uring_complete_fields ? (__u32)ctx->args[4] : BPF_CORE_READ(cqe, flags);
	__s32 res = uring_complete_fields ? (__s32)ctx->args[3] : BPF_CORE_READ(cqe, res);

	return uring_complete((struct io_kiocb *)ctx->args[1], res, cflags);
}

/* The parts: (req, rw), (req, mask, events), (req, mask) since 6.0. */
SEC("tp_btf/io_uring_queue_async_work")
int tb_uring_punt(__u64 *ctx)
{
	return uring_moves((struct io_kiocb *)ctx[0], URING_PART_IOWQ, false);
}

SEC("tp_btf/io_uring_poll_arm")
int tb_uring_poll(__u64 *ctx)
{
	return uring_moves((struct io_kiocb *)ctx[0], URING_PART_POLL, false);
}

/* Task work added for a request: after a poll fired, its retry, which runs
 * in the submitter's context (other task work leaves the part as it is). */
SEC("tp_btf/io_uring_task_add")
int tb_uring_task_add(__u64 *ctx)
{
	return uring_moves((struct io_kiocb *)ctx[0], URING_PART_INLINE, true);
}

SEC("raw_tp/io_uring_queue_async_work")
int rt_uring_punt(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_moves((struct io_kiocb *)ctx->args[0], URING_PART_IOWQ, false);
}

SEC("raw_tp/io_uring_poll_arm")
int rt_uring_poll(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_moves((struct io_kiocb *)ctx->args[0], URING_PART_POLL, false);
}

SEC("raw_tp/io_uring_task_add")
int rt_uring_task_add(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_moves((struct io_kiocb *)ctx->args[0], URING_PART_INLINE, true);
}
