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

#include "uring_parts.bpf.h" /* the parts of requests: their maps, the split */

/*
 * Block requests per io_uring request (uring_blk, with the blk layer and
 * the parts or events): the block layer's first sighting of a request, in
 * the context that started it, asks which io_uring request's issue runs
 * there (uring_issuing). An io-wq worker names its own: the work it runs
 * (its io_worker's cur_work, set before the work runs and cleared after).
 * A submitter (io_uring_enter, the SQPOLL thread) issues requests inline
 * one after another, each right after its io_uring_submit_req: the last
 * one it submitted is the one whose issue runs, as long as the submission
 * goes on (below). Anything else (task work, a linked request's head
 * issued at its last member's submission) is tied to no request.
 */
const volatile bool uring_blk;

/* The request a thread submitted last, and its ring. req 0: none to
 * tie block requests to (a link, a forced punt, a request not traced). */
struct uring_issue {
	__u64 req;
	__u64 ctx;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct uring_issue);
} uring_issuing_map SEC(".maps");

/* PF_IO_WORKER (include/linux/sched.h): an io-wq worker or SQPOLL thread. */
#define KPF_IO_WORKER 0x00000010
/* REQ_F_LINK, REQ_F_HARDLINK, REQ_F_FORCE_ASYNC: IOSQE_IO_LINK,
 * IOSQE_IO_HARDLINK, IOSQE_ASYNC bits (see KREQ_F_CQE_SKIP). */
#define KREQ_F_NOT_INLINE ((1ULL << 2) | (1ULL << 3) | (1ULL << 4))

/* Lock owner flag bits in struct mutex's owner (kernel/locking/mutex.h). */
#define KMUTEX_FLAGS 0x07UL

/* At submission: the request whose inline issue follows, or none. */
static __always_inline void uring_note_issue(struct io_kiocb *req, __u64 flags, bool traced)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct io_ring_ctx *ctx = BPF_CORE_READ(req, ctx);
	struct uring_issue m = { .ctx = (__u64)ctx };

	/*
	 * A request of a link is issued when its last member is submitted,
	 * the head first: while a link is being gathered no request is named.
	 */
	if (traced && !(flags & KREQ_F_NOT_INLINE) && !BPF_CORE_READ(ctx, submit_state.link.head))
		m.req = (__u64)req;
	bpf_map_update_elem(&uring_issuing_map, &tid, &m, BPF_ANY);
}

/*
 * Is the submission that named the thread's last request still going on?
 * The thread holds the ring's uring_lock through io_submit_sqes, and the
 * ring's consumed-entries head (cached_sq_head) runs ahead of the head it
 * shows user space (rings->sq.head) until the end of that submission: so
 * not in task work run later under the same lock, nor in a later call.
 */
static __always_inline bool uring_submitting(struct io_ring_ctx *ctx, struct task_struct *task)
{
	__u64 owner;

	if (!bpf_core_field_exists(ctx->uring_lock.owner))
		return false; /* PREEMPT_RT: an rt_mutex, not told here */
	owner = BPF_CORE_READ(ctx, uring_lock.owner.counter);
	if ((owner & ~KMUTEX_FLAGS) != (__u64)task)
		return false;
	return BPF_CORE_READ(ctx, cached_sq_head) != BPF_CORE_READ(ctx, rings, sq.head);
}

/*
 * The io_uring request (traced, in flight) whose issue runs in this
 * thread now, and its key; NULL: none. Called by the block layer where a
 * request starts. Without block_io_start, requests under the ring's own
 * plug start when it is flushed, after the issues that made them: none.
 */
static __always_inline struct uring_start *uring_issuing(__u64 *key, bool sees_all)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct uring_issue *m;
	void *worker;

	if (!uring_blk)
		return NULL;
	*key = 0;
	/* Before 5.17 the worker hung off pf_io_worker: not read there. */
	worker = bpf_core_field_exists(task->worker_private) &&
				 (BPF_CORE_READ(task, flags) & KPF_IO_WORKER)
			 ? BPF_CORE_READ(task, worker_private)
			 : NULL;
	if (worker) {
		struct io_wq_work *work = BPF_CORE_READ((struct io_worker *)worker, cur_work);

		if (work)
			*key = (__u64)work - bpf_core_field_offset(struct io_kiocb, work);
	} else {
		struct io_ring_ctx *ctx;

		m = bpf_map_lookup_elem(&uring_issuing_map, &tid);
		if (!m || !m->req)
			return NULL;
		ctx = (struct io_ring_ctx *)m->ctx;
		if (!uring_submitting(ctx, task))
			return NULL;
		/*
		 * Under the ring's own plug (a submission of more than two
		 * entries), a request starts at the flush, at the end of the
		 * submission; a plug the issue itself started (iomap's direct
		 * I/O) is flushed before the issue returns.
		 */
		if (!sees_all && (__u64)BPF_CORE_READ(task, plug) ==
					 m->ctx + bpf_core_field_offset(ctx->submit_state.plug))
			return NULL;
		*key = m->req;
	}
	if (!*key)
		return NULL;
	return bpf_map_lookup_elem(&uring_starts, key);
}

/* Is the request's file one --file keeps? (No count: uring_file_wanted
 * does that at completion.) */
static __always_inline bool uring_blk_file_wanted(__u64 key)
{
	struct file *f;

	if (!nr_files)
		return true;
	f = BPF_CORE_READ((struct io_kiocb *)key, file);
	return f && inode_wanted(BPF_CORE_READ(f, f_inode));
}

/* A block request of an io_uring request completed: the slowest so far. */
static __always_inline void uring_blk_done(__u64 key, __u64 start_ns, __u64 delta, __u32 dev)
{
	struct uring_start *u = bpf_map_lookup_elem(&uring_starts, &key);

	if (!u || u->start_ns != start_ns || delta <= u->blk_max_ns)
		return;
	u->blk_max_ns = delta;
	u->blk_max_dev = dev;
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

/* IORING_SETUP_SQPOLL (include/uapi/linux/io_uring.h). */
#define KIORING_SETUP_SQPOLL (1U << 1)

/*
 * The thread that made a SQPOLL ring's kernel thread, from that thread's
 * name, "iou-sqp-TID", which the kernel gives it from its creator when it
 * starts (io_sq_data's task_pid was the creator's before Linux 6.x, and is
 * the SQ thread's own now: not usable). 0: not such a name.
 */
static __always_inline __u32 sqpoll_owner(void)
{
	static const char prefix[] = "iou-sqp-";
	char comm[COMM_LEN];
	__u32 tid = 0;
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < (int)sizeof(prefix) - 1; i++)
		if (comm[i] != prefix[i])
			return 0;
	for (; i < COMM_LEN && comm[i]; i++) {
		if (comm[i] < '0' || comm[i] > '9')
			return 0;
		tid = tid * 10 + (__u32)(comm[i] - '0');
	}
	return tid;
}

/*
 * The filters, applied to the submitter. With SQPOLL the ring's kernel
 * thread (iou-sqp-TID) submits: -t and -c are applied to the thread that
 * made it (TID: the ring's creator, or with IORING_SETUP_ATTACH_WQ the
 * creator of the ring whose thread it shares), -p and --cgroup to the
 * thread itself (of the same process and cgroup). -c reads that thread's
 * name when it is its process's main thread (the thread group's leader,
 * which the SQ thread reaches); a ring made by another thread has a name no
 * tracepoint program can reach on every kernel, and -c matches none of its
 * requests.
 */
static __always_inline bool uring_submitter_wanted(struct io_kiocb *req, __u64 id)
{
	struct io_ring_ctx *ctx;
	struct task_struct *owner;
	char comm[COMM_LEN] = {};
	__u32 owner_tid;

	if (!targ_tid && !filter_comm)
		return task_wanted(id);
	ctx = BPF_CORE_READ(req, ctx);
	if (!(BPF_CORE_READ(ctx, flags) & KIORING_SETUP_SQPOLL))
		return task_wanted(id);
	if (!tgid_wanted(id))
		return false;
	owner_tid = sqpoll_owner();
	if (!owner_tid || (targ_tid && owner_tid != targ_tid))
		return false;
	if (filter_comm) {
		if (owner_tid != id >> 32)
			return false;
		owner = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), group_leader);
		if (bpf_probe_read_kernel_str(comm, sizeof(comm), &owner->comm) <= 0 ||
		    !comm_is_targ(comm))
			return false;
	}
	return !filter_cgroup || bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
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
	if (!uring_submitter_wanted(req, id) || (flags & KREQ_F_CQE_SKIP)) {
		if (uring_blk)
			uring_note_issue(req, flags, false);
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
	if (per_process || events_on)
		bpf_get_current_comm(v.comm, sizeof(v.comm));
	if (per_cgroup) {
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
	if (uring_blk)
		uring_note_issue(req, flags, !err);
	return 0;
}

/*
 * Is the request's file one we count? Storage only without --all-fds,
 * told by the file the request used (its file is set for fixed and plain
 * descriptors alike by the time it completes, and put only after); opens
 * have none yet and are kept, as they look a path up in a file system.
 * res: the request's result (an open's new descriptor).
 */
static __always_inline bool uring_file_wanted(struct io_kiocb *req, struct uring_start *v,
					      __s32 res)
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
	/*
	 * --file: only requests on those files; an open on the file it made,
	 * as open(2) is: its descriptor, in the table of the task posting the
	 * completion (the submitter, or an io-wq or SQPOLL thread of its
	 * process, which share its table). An open into a fixed-file slot
	 * posts no descriptor (res 0 or the slot): it finds no such file.
	 */
	if (nr_files && v->op == UOP_OPEN)
		f = res >= 0 ? file_of_fd((__u64)res) : NULL;
	return !nr_files || (f && inode_wanted(BPF_CORE_READ(f, f_inode)));
}

/*
 * --slower, --trace: a request ended, as a call event of the io_uring
 * layer, on its submitter's thread; part_ns[] holds its parts.
 */
static __always_inline void emit_uring(struct io_kiocb *req, struct uring_start *v, __u32 op,
				       __u64 now, __s32 res)
{
	struct request_facts r = {
		.layer = LAYER_IO_URING,
		.op = (__u8)op,
		.opcode = v->opcode,
		.pid = v->tgid,
		.tid = v->tid,
		.start_ns = v->start_ns,
		.end_ns = now,
		.ret = res,
		.pos = v->pos,
		.bytes = v->bytes,
		.parts = v->part_ns,
		.nparts = uring_split ? NR_URING_PARTS : 0,
		.blk_requests = v->blk_requests,
		.blk_max_dev = v->blk_max_dev,
		.blk_bytes = v->blk_bytes,
		.blk_max_ns = v->blk_max_ns,
		.comm = v->comm,
		/* An open's file is not its own yet (the one it makes is in res). */
		.file = v->op != UOP_OPEN ? BPF_CORE_READ(req, file) : NULL,
	};

	emit_request(&r);
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
	if (uring_file_wanted(req, v, res)) {
		record(LAYER_IO_URING, op, delta);
		if (uring_split) {
			uring_charge(v, now, v->part);
			uring_record_parts(v, op, delta);
		}
		if (events_on && (delta >= slower_ns || trace_on))
			emit_uring(req, v, op, now, res);
		if (per_process || per_cgroup) {
			struct breakdown_key k = { .cell_idx = CELL_INDEX(LAYER_IO_URING, op),
						   .tgid = per_process ? v->tgid : 0,
						   .cgid = per_cgroup ? v->cgid : 0 };

			record_breakdown(&k, per_process ? v->comm : NULL, delta);
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
		v->blk_requests = 0;
		v->blk_bytes = 0;
		v->blk_max_ns = 0;
		v->blk_max_dev = 0;
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
