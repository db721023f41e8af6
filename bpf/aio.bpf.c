// SPDX-License-Identifier: GPL-2.0
/*
 * The aio layer: Linux native AIO (io_submit), each iocb timed from its
 * submission to its completion event being posted in its context's ring.
 *
 * No tracepoint marks either (none in fs/aio.c up to 6.18): these kernel
 * functions do, with the same names and prototypes in the BTF of Debian's
 * 6.1 and 6.12 and of 6.18, by fentry/fexit, else kprobe/kretprobe:
 *
 * - io_submit_one(ctx, user_iocb, compat): io_submit calls it once per
 *   iocb it takes, in order, and stops at the first that fails. Its start
 *   is the request's start. It returns 0 for an iocb accepted; any other
 *   value and the kernel freed the request there, no event will ever be
 *   posted for it (its entry goes at once).
 * - aio_complete(iocb): puts the event in the ring. Its one caller is
 *   iocb_put() (inline), when the last of a request's two references goes:
 *   io_submit_one()'s own, dropped before it returns, and the completion's
 *   (aio_complete_rw for reads and writes, aio_fsync_work, the poll
 *   paths); the request is freed right after. So every accepted iocb
 *   passes it exactly once, and a refused one never.
 * - aio_fsync_work(work): an fsync or fdatasync runs in a kernel worker;
 *   its start ends the wait for a worker, and the block requests the
 *   worker starts until its end are the request's.
 *
 * The request ends where its event is posted, not where io_getevents
 * reaps it: the reap is the application's choice of when to look (one
 * io_getevents takes many events, after any delay), as an io_uring CQE's
 * is. A request completed inline is one whose event was posted inside its
 * own io_submit_one(), by the submitting thread (a cached read, a
 * buffered write, a poll already ready, a device that completes while
 * submitting); it is recorded when io_submit_one() returns.
 *
 * Requests are keyed by their context and the user's iocb (struct
 * aio_key), known at io_submit_one()'s start, before the kernel's own
 * struct exists, and both in that struct at completion (ki_ctx,
 * ki_res.obj). Filters are applied at submission, to the submitter.
 *
 * Included by iostackbreak.bpf.c before blk.bpf.c (one compilation unit).
 */

/* Requests split into parts and their block requests counted per op
 * (--no-parts: off). */
const volatile bool aio_split;
/* Block requests tied to the aio request whose submission or fsync worker
 * started them (with the blk layer and the parts). */
const volatile bool aio_blk;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_INFLIGHT_AIO);
	__type(key, struct aio_key);
	__type(value, struct aio_start);
} aio_starts SEC(".maps");

/* Per thread: the iocb it is submitting, or the fsync it runs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct aio_thread);
} aio_threads SEC(".maps");

/* Per op and part: a histogram of the part's time per request (requests
 * where it took no time are not added: user space adds them as zeros). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_AIO_OPS *NR_AIO_PARTS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} aio_parts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_AIO_OPS);
	__type(key, __u32);
	__type(value, struct aio_totals);
} aio_ops SEC(".maps");

/* The op of an iocb command, from cells.def; others: other. */
static __always_inline __u8 aio_op(__u16 cmd)
{
	switch (cmd) {
#define AIO_OPCODE(op, name)                                                                       \
	case IOCB_CMD_##name:                                                                      \
		return op;
#include "cells.def"
	}
	return AOP_OTHER;
}

/* The op of the user's iocb, its command in v->cmd; NR_AIO_OPS if it
 * cannot be read. */
static __always_inline __u8 aio_user_op(struct iocb *uiocb, struct aio_start *v)
{
	if (bpf_probe_read_user(&v->cmd, sizeof(v->cmd), &uiocb->aio_lio_opcode))
		return NR_AIO_OPS;
	return aio_op(v->cmd);
}

static __always_inline bool aio_key_eq(const struct aio_key *a, const struct aio_key *b)
{
	return a->ctx == b->ctx && a->obj == b->obj;
}

static __always_inline void aio_key_of(struct aio_kiocb *iocb, struct aio_key *key)
{
	key->ctx = (__u64)BPF_CORE_READ(iocb, ki_ctx);
	key->obj = BPF_CORE_READ(iocb, ki_res.obj);
}

/*
 * The aio request (traced, in flight) whose submission or fsync worker
 * runs in this thread now, and its key; NULL: none. Called by the block
 * layer where a request starts. Requests io_submit holds in its plug (more
 * than two iocbs in one call) start when it is flushed, after the last
 * io_submit_one(): none, unless block_io_start (6.5+) sees them start
 * inside it.
 */
static __always_inline struct aio_start *aio_issuing(struct aio_key *key)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct aio_thread *t;

	if (!aio_blk)
		return NULL;
	t = bpf_map_lookup_elem(&aio_threads, &tid);
	if (!t)
		return NULL;
	*key = t->submitting.ctx ? t->submitting : t->working;
	if (!key->ctx)
		return NULL;
	return bpf_map_lookup_elem(&aio_starts, key);
}

/*
 * A block request of an aio request, at its first sighting. flush: it
 * waits for a device flush, one more request, as a call counts them
 * (blk_first_seen).
 */
static __always_inline void aio_count_request(struct aio_start *a, __u32 bytes, bool flush)
{
	a->blk_requests += 1 + flush;
	a->blk_bytes += bytes;
	a->blk_flushes += flush;
}

/* A block request of an aio request completed: its time. */
static __always_inline void aio_blk_done(const struct rq_start *v, __u64 delta)
{
	struct aio_key key = { .ctx = v->aio_ctx, .obj = v->aio_obj };
	struct aio_start *a = bpf_map_lookup_elem(&aio_starts, &key);

	if (!a || a->start_ns != v->aio_ns)
		return;
	a->blk_ns += delta;
	if (delta > a->blk_max_ns) {
		a->blk_max_ns = delta;
		a->blk_max_dev = v->dev;
	}
}

/*
 * The parts of a request that ended at end, from the times its changes
 * were seen: submit until io_submit_one() returned (or the completion, if
 * it came first); then, for an fsync, worker-queued until a worker took it
 * and worker, else async. Each bound is clamped, so they add up to the
 * latency exactly whatever order CPUs saw them in.
 */
static __always_inline void aio_split_parts(const struct aio_start *v, __u64 end,
					    __u64 part[NR_AIO_PARTS])
{
	__u64 start = v->start_ns;
	__u64 sub = v->sub_ns && v->sub_ns < end ? v->sub_ns : end;
	__u64 work = v->work_ns;

	if (sub < start)
		sub = start;
	for (__u32 p = 0; p < NR_AIO_PARTS; p++)
		part[p] = 0;
	if (work) {
		if (work > end)
			work = end;
		if (work < start)
			work = start;
		if (sub > work)
			sub = work;
		part[AIO_PART_SUBMIT] = sub - start;
		part[AIO_PART_WORKER_QUEUED] = work - sub;
		part[AIO_PART_WORKER] = end - work;
		return;
	}
	part[AIO_PART_SUBMIT] = sub - start;
	part[AIO_PART_ASYNC] = end - sub;
}

/* A request ended at end: its cell, parts, block requests, breakdowns. */
static __always_inline void aio_record(struct aio_start *v, __u64 end, bool inl)
{
	__u32 op = v->op < NR_AIO_OPS ? v->op : AOP_OTHER;
	__u64 delta = end > v->start_ns ? end - v->start_ns : 0;

	record(LAYER_AIO, op, delta);
	if (aio_split) {
		struct aio_totals *t = bpf_map_lookup_elem(&aio_ops, &op);
		__u64 part[NR_AIO_PARTS];

		aio_split_parts(v, end, part);
		if (t && op < NR_AIO_OPS) {
			t->count++;
			t->total_ns += delta;
			t->inline_count += inl;
			t->blk_requests += v->blk_requests;
			t->blk_flushes += v->blk_flushes;
			t->blk_bytes += v->blk_bytes;
			t->blk_ns += v->blk_ns;
			for (__u32 p = 0; p < NR_AIO_PARTS; p++)
				if (part[p])
					hist_add(&aio_parts, op * NR_AIO_PARTS + p, part[p], true);
		}
	}
	if (per_process || per_cgroup) {
		struct breakdown_key k = { .cell_idx = CELL_INDEX(LAYER_AIO, op),
					   .tgid = per_process ? v->tgid : 0,
					   .cgid = per_cgroup ? v->cgid : 0 };

		record_breakdown(&k, per_process ? v->comm : NULL, delta);
	}
}

/*
 * Is the request's file one we count, told at completion by the file it
 * used (held until the request is freed)? Storage only without
 * --all-fds (a poll on a pipe or socket is left out, counted); --file:
 * those files only.
 */
static __always_inline bool aio_file_wanted(struct aio_kiocb *iocb, __u32 op)
{
	struct file *f = BPF_CORE_READ(iocb, ki_filp);
	__u32 kind;

	if (!all_fds) {
		kind = file_kind(f);
		if (kind != FD_STORAGE) {
			count_left_out(LAYER_AIO, op < NR_AIO_OPS ? op : AOP_OTHER, kind);
			return false;
		}
	}
	return !nr_files || (f && inode_wanted(BPF_CORE_READ(f, f_inode)));
}

/* This thread's aio state, made on its first use (NULL: the map is full). */
static __always_inline struct aio_thread *aio_thread_of(__u32 tid)
{
	struct aio_thread *t = bpf_map_lookup_elem(&aio_threads, &tid), fresh = {};

	if (t)
		return t;
	bpf_map_update_elem(&aio_threads, &tid, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&aio_threads, &tid);
}

static __always_inline int aio_submit_enter(struct kioctx *ctx, struct iocb *uiocb)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct aio_key key = { .ctx = (__u64)ctx, .obj = (__u64)uiocb };
	struct aio_thread *t;
	struct aio_start v = {};
	__u32 tid = (__u32)id, fd;
	long err;

	if (!task_wanted(id)) {
		/* An entry a completion we never saw left must not time it. */
		if ((nr_targ_tgids || targ_tid || filter_comm || filter_cgroup) &&
		    !bpf_map_delete_elem(&aio_starts, &key))
			count_drop(DROP_AIO_COMPLETION_MISSED);
		return 0;
	}
	v.op = aio_user_op(uiocb, &v);
	v.file_ok = 1;
	v.pos = NO_POS;
	v.bytes = NO_POS;
	/* Events: the range of a read or write, as the user asked for it. */
	if (events_on && (v.op == AOP_READ || v.op == AOP_WRITE)) {
		struct iocb u;

		if (!bpf_probe_read_user(&u, sizeof(u), uiocb)) {
			v.pos = (__u64)u.aio_offset;
			v.bytes = u.aio_nbytes;
		}
	}
	/* --file: the descriptor io_submit_one() is about to look up. */
	if (nr_files) {
		struct file *f;

		if (bpf_probe_read_user(&fd, sizeof(fd), &uiocb->aio_fildes))
			fd = ~0U;
		f = file_of_fd(fd);
		v.file_ok = f && inode_wanted(BPF_CORE_READ(f, f_inode));
	}
	v.tgid = id >> 32;
	v.tid = tid;
	if (per_process || events_on)
		bpf_get_current_comm(v.comm, sizeof(v.comm));
	if (per_cgroup) {
		v.cgid = bpf_get_current_cgroup_id();
		cgroup_path_note(v.cgid);
	}
	v.start_ns = bpf_ktime_get_ns();
	err = map_err(bpf_map_update_elem(&aio_starts, &key, &v, BPF_NOEXIST));
	if (err == -EEXIST) {
		count_drop(DROP_AIO_COMPLETION_MISSED);
		err = bpf_map_update_elem(&aio_starts, &key, &v, BPF_ANY);
	}
	if (err) {
		count_drop(DROP_AIO_MAP_FULL);
		return 0;
	}
	t = aio_thread_of(tid);
	if (t)
		t->submitting = key;
	return 0;
}

static __always_inline int aio_submit_exit(struct iocb *uiocb, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct aio_thread *t = bpf_map_lookup_elem(&aio_threads, &tid);
	struct aio_start *v;
	struct aio_key key;

	if (!t || !t->submitting.ctx)
		return 0;
	key = t->submitting;
	t->submitting.ctx = 0;
	t->submitting.obj = 0;
	v = bpf_map_lookup_elem(&aio_starts, &key);
	if (!v)
		return 0; /* completed by now, elsewhere */
	/* Not read at the start (its page was out): the kernel has copied
	 * the iocb and written its aio_key since, so it is in. */
	if (v->op >= NR_AIO_OPS && uiocb)
		v->op = aio_user_op(uiocb, v);
	if (v->end_ns) {
		/* Its event was posted inside: inline. */
		if (v->file_ok)
			aio_record(v, v->end_ns, true);
	} else if (!ret) {
		v->sub_ns = bpf_ktime_get_ns();
		return 0;
	}
	/* Recorded, or refused (no event will be posted for it). */
	bpf_map_delete_elem(&aio_starts, &key);
	return 0;
}

/*
 * --slower, --trace: a request ended (its event posted, inline or not), as
 * a call event of the aio layer on its submitter's thread; part_ns[] holds
 * its parts, opcode its IOCB_CMD_*.
 */
static __always_inline void emit_aio(struct aio_kiocb *iocb, struct aio_start *v, __u64 now)
{
	__u64 part[NR_AIO_PARTS];
	struct request_facts r = {
		.layer = LAYER_AIO,
		.op = v->op < NR_AIO_OPS ? v->op : AOP_OTHER,
		.opcode = v->cmd,
		.pid = v->tgid,
		.tid = v->tid,
		.start_ns = v->start_ns,
		.end_ns = now,
		.ret = BPF_CORE_READ(iocb, ki_res.res),
		.pos = v->pos,
		.bytes = v->bytes,
		.parts = part,
		.nparts = aio_split ? NR_AIO_PARTS : 0,
		.blk_requests = v->blk_requests,
		.blk_flushes = v->blk_flushes,
		.blk_max_dev = v->blk_max_dev,
		.blk_bytes = v->blk_bytes,
		.blk_max_ns = v->blk_max_ns,
		.comm = v->comm,
		.file = BPF_CORE_READ(iocb, ki_filp),
	};

	aio_split_parts(v, now, part);
	emit_request(&r);
}

static __always_inline int aio_complete_enter(struct aio_kiocb *iocb)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct aio_thread *t;
	struct aio_start *v;
	struct aio_key key;
	__u64 now;
	bool keep;

	aio_key_of(iocb, &key);
	v = bpf_map_lookup_elem(&aio_starts, &key);
	if (!v)
		return 0;
	now = bpf_ktime_get_ns();
	keep = v->file_ok && aio_file_wanted(iocb, v->op);
	if (keep && events_on && (now - v->start_ns >= slower_ns || trace_on))
		emit_aio(iocb, v, now);
	t = bpf_map_lookup_elem(&aio_threads, &tid);
	/* Posted by its own submission, no worker involved: inline, recorded
	 * where io_submit_one() returns (its op is sure to be read there). */
	if (t && aio_key_eq(&t->submitting, &key) && !v->work_ns) {
		v->end_ns = now;
		v->file_ok = keep;
		return 0;
	}
	if (keep)
		aio_record(v, now, false);
	bpf_map_delete_elem(&aio_starts, &key);
	return 0;
}

/* A worker takes an fsync (struct fsync_iocb's work, in struct aio_kiocb). */
static __always_inline int aio_work_enter(struct work_struct *work)
{
	struct aio_kiocb *iocb =
	    (struct aio_kiocb *)((char *)work - bpf_core_field_offset(struct aio_kiocb, fsync.work));
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct aio_thread *t;
	struct aio_start *v;
	struct aio_key key;

	aio_key_of(iocb, &key);
	v = bpf_map_lookup_elem(&aio_starts, &key);
	if (!v)
		return 0;
	v->work_ns = bpf_ktime_get_ns();
	if (!aio_blk)
		return 0;
	t = aio_thread_of(tid);
	if (t)
		t->working = key;
	return 0;
}

static __always_inline int aio_work_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct aio_thread *t = bpf_map_lookup_elem(&aio_threads, &tid);

	if (t) {
		t->working.ctx = 0;
		t->working.obj = 0;
	}
	return 0;
}

SEC("fentry/io_submit_one")
int BPF_PROG(fe_aio_submit, struct kioctx *kctx, struct iocb *uiocb)
{
	return aio_submit_enter(kctx, uiocb);
}

SEC("fexit/io_submit_one")
int BPF_PROG(fx_aio_submit, struct kioctx *kctx, struct iocb *uiocb, bool compat, int ret)
{
	return aio_submit_exit(uiocb, ret);
}

SEC("fentry/aio_complete")
int BPF_PROG(fe_aio_complete, struct aio_kiocb *iocb)
{
	return aio_complete_enter(iocb);
}

SEC("fentry/aio_fsync_work")
int BPF_PROG(fe_aio_work, struct work_struct *work)
{
	return aio_work_enter(work);
}

SEC("fexit/aio_fsync_work")
int BPF_PROG(fx_aio_work, struct work_struct *work)
{
	return aio_work_exit();
}

SEC("kprobe/io_submit_one")
int BPF_KPROBE(kp_aio_submit, struct kioctx *kctx, struct iocb *uiocb)
{
	return aio_submit_enter(kctx, uiocb);
}

/* No arguments at return: the op, if unread, stays "other". */
SEC("kretprobe/io_submit_one")
int BPF_KRETPROBE(kr_aio_submit, int ret)
{
	return aio_submit_exit(NULL, ret);
}

SEC("kprobe/aio_complete")
int BPF_KPROBE(kp_aio_complete, struct aio_kiocb *iocb)
{
	return aio_complete_enter(iocb);
}

SEC("kprobe/aio_fsync_work")
int BPF_KPROBE(kp_aio_work, struct work_struct *work)
{
	return aio_work_enter(work);
}

SEC("kretprobe/aio_fsync_work")
int BPF_KRETPROBE(kr_aio_work)
{
	return aio_work_exit();
}
