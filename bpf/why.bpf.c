// SPDX-License-Identifier: GPL-2.0
/*
 * Why a call waited, and what it did to the page cache: the lock and
 * journal parts of a call, the block requests of the journal commits it
 * waited for, and the pages it added to the page cache.
 *
 * - lock:contention_begin/end (5.19+) bracket a contention for a lock;
 *   call_parts.h charges what happens inside to the lock part.
 * - jbd2:jbd2_start_commit/end_commit fire in the journal's thread
 *   (kjournald2) around a commit. That thread's own slot counts the block
 *   requests it submits during the commit (journal_count, in blk_flush.bpf.h),
 *   and sched_waking (in the waker's context) asks journal_waker when the
 *   thread wakes a call's thread: a sleep the journal ended is the journal part,
 *   and a wakeup after the commit ended gives the call that commit's
 *   requests.
 * - filemap:mm_filemap_add_to_page_cache fires in the task that adds a
 *   page; readahead:page_cache_sync_ra/async_ra say which pages the call
 *   asked for (index, req_count): pages added past them are read ahead.
 * - ext4:ext4_writepages_result fires in the task that ran ext4's
 *   writepages (an fsync, an O_SYNC write; else the flusher or the
 *   journal's thread), with the pages that run put under writeback.
 *
 * Every program leaves at once when no call is open in its thread.
 *
 * Included by iostackbreak.bpf.c before blk.bpf.c, which counts commits' requests.
 */

/* The jbd2 programs are attached: blk.bpf.c and sched_waking ask them. */
const volatile bool journal_on;
/* And the commits' requests are counted (plan.journal_blk: 6.5+). */
const volatile bool journal_blk;

/* contention_begin's flags (include/trace/events/lock.h, LCB_F_*). */
#define KLCB_F_SPIN (1U << 0)
#define KLCB_F_READ (1U << 1)
#define KLCB_F_WRITE (1U << 2)
#define KLCB_F_MUTEX (1U << 5)

static __always_inline __u32 lock_kind_of(__u32 flags)
{
	if (flags & KLCB_F_MUTEX)
		return LOCK_MUTEX;
	/* rwlock_t spins with READ or WRITE: a spinning kind, "other". */
	if (flags & KLCB_F_SPIN)
		return LOCK_OTHER;
	if (flags & KLCB_F_READ)
		return LOCK_RWSEM_READ;
	if (flags & KLCB_F_WRITE)
		return LOCK_RWSEM_WRITE;
	return LOCK_OTHER;
}

static __always_inline struct thread_starts *current_slots(bool btf)
{
	struct task_struct *task =
	    btf ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();

	return slots_of(task, btf);
}

/* The same from a classic tracepoint (no task pointer to start from). */
static __always_inline struct thread_starts *current_slots_tp(void)
{
	__u32 tid;

	if (use_task_storage)
		return slots_of(bpf_get_current_task_btf(), true);
	tid = (__u32)bpf_get_current_pid_tgid();
	return bpf_map_lookup_elem(&thread_starts, &tid);
}

static __always_inline int on_contention(__u64 lock, __u32 flags, bool begin, bool btf)
{
	struct thread_starts *ts = current_slots(btf);
	__u32 kind;
	__u64 end;

	if (!ts || !parts_open(ts))
		return 0;
	if (begin) {
		parts_lock_begin(ts, bpf_ktime_get_ns(), lock, lock_kind_of(flags));
		return 0;
	}
	kind = (__u32)ts->lock_kind - 1;
	end = parts_lock_end(ts, bpf_ktime_get_ns(), lock);
	/* --trace: the contention as a slice, named by its lock. */
	if (trace_on && end)
		emit_contention(ts, (__u32)bpf_get_current_pid_tgid(), kind, lock, ts->lock_start,
				end);
	return 0;
}

SEC("tp_btf/contention_begin")
int tb_lock_begin(__u64 *ctx)
{
	return on_contention(ctx[0], (__u32)ctx[1], true, true);
}

SEC("tp_btf/contention_end")
int tb_lock_end(__u64 *ctx)
{
	return on_contention(ctx[0], 0, false, true);
}

SEC("raw_tp/contention_begin")
int rt_lock_begin(struct bpf_raw_tracepoint_args *ctx)
{
	return on_contention(ctx->args[0], (__u32)ctx->args[1], true, false);
}

SEC("raw_tp/contention_end")
int rt_lock_end(struct bpf_raw_tracepoint_args *ctx)
{
	return on_contention(ctx->args[0], 0, false, false);
}

/*
 * The journal's thread begins a commit: its slot (made here, the one slot
 * a thread with no call gets) counts the commit's requests from now.
 */
static __always_inline int on_commit_start(bool btf)
{
	struct task_struct *task =
	    btf ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();
	struct thread_starts *ts;
	__u32 tid;

	if (use_task_storage) {
		ts = my_stored_slots_made(bpf_get_current_task_btf());
	} else {
		tid = btf ? task->pid : BPF_CORE_READ(task, pid);
		ts = bpf_map_lookup_elem(&thread_starts, &tid);
		if (!ts) {
			bpf_map_update_elem(&thread_starts, &tid, &fresh_slots, BPF_NOEXIST);
			ts = bpf_map_lookup_elem(&thread_starts, &tid);
		}
	}
	if (!ts) {
		count_drop(DROP_THREAD_MAP_FULL);
		return 0;
	}
	ts->jbd2_state = JBD2_COMMITTING;
	ts->journal_requests = 0;
	ts->journal_flushes = 0;
	ts->journal_bytes = 0;
	return 0;
}

static __always_inline int on_commit_end(bool btf)
{
	struct thread_starts *ts = current_slots(btf);

	if (ts && ts->jbd2_state == JBD2_COMMITTING)
		ts->jbd2_state = JBD2_COMMITTED;
	return 0;
}

SEC("tp_btf/jbd2_start_commit")
int tb_commit_start(__u64 *ctx)
{
	return on_commit_start(true);
}

SEC("tp_btf/jbd2_end_commit")
int tb_commit_end(__u64 *ctx)
{
	return on_commit_end(true);
}

SEC("raw_tp/jbd2_start_commit")
int rt_commit_start(struct bpf_raw_tracepoint_args *ctx)
{
	return on_commit_start(false);
}

SEC("raw_tp/jbd2_end_commit")
int rt_commit_end(struct bpf_raw_tracepoint_args *ctx)
{
	return on_commit_end(false);
}

/*
 * sched_waking, in the waker's context: ts's thread, in a call and asleep
 * (blocked), is woken. When the waker is a journal thread, the sleep was
 * for the journal; after its commit ended, for that commit, whose
 * requests the call then has. Not added: an fsync that waits for commit
 * T+1 while T commits is woken when T ends too (jbd2 wakes every waiter of
 * j_wait_done_commit), sleeps again, and is woken at T+1's end. The last
 * commit that woke it is the one it waited for.
 */
static __always_inline void journal_waker(struct thread_starts *ts, bool btf)
{
	struct task_struct *task =
	    btf ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();
	struct thread_starts *j = slots_of(task, btf);

	if (!j || !j->jbd2_state)
		return;
	parts_journal_wake(ts);
	if (j->jbd2_state != JBD2_COMMITTED)
		return;
	call_counts(ts)->journal_requests = j->journal_requests;
	ts->journal_flushes = j->journal_flushes;
	ts->journal_bytes = j->journal_bytes;
}

/*
 * sched_waking fires in the waker's context, always (sched_wakeup, which
 * ends the sleep for the split, may fire later on the woken task's CPU, in
 * whatever runs there): a thread asleep in a call (blocked) that a journal
 * thread wakes waited for the journal. Attached with the journal part only.
 */
static __always_inline int on_waking(struct task_struct *task, bool btf)
{
	struct thread_starts *ts = slots_of(task, btf);

	if (!ts || !parts_open(ts) || ts->off != PART_BLOCKED + 1)
		return 0;
	journal_waker(ts, btf);
	return 0;
}

SEC("tp_btf/sched_waking")
int tb_waking(__u64 *ctx)
{
	return on_waking((struct task_struct *)ctx[0], true);
}

SEC("raw_tp/sched_waking")
int rt_waking(struct bpf_raw_tracepoint_args *ctx)
{
	return on_waking((struct task_struct *)ctx->args[0], false);
}

/* A folio added to the page cache by the current thread. */
SEC("tracepoint/filemap/mm_filemap_add_to_page_cache")
int tp_cache_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	struct thread_starts *ts = current_slots_tp();
	__u64 pages = 1, index;

	if (!ts || !parts_open(ts))
		return 0;
	/* The folio's order is in the record since 6.?; before, folios of
	 * the page cache were single pages there. */
	if (bpf_core_field_exists(ctx->order))
		pages = 1ULL << (BPF_CORE_READ(ctx, order) & 31);
	index = BPF_CORE_READ(ctx, index);
	call_counts(ts)->cache_miss_pages += pages;
	if (ts->ra_req_end) {
		if (index >= ts->ra_req_end)
			ts->readahead_pages += pages;
		else if (index + pages > ts->ra_req_end)
			ts->readahead_pages += index + pages - ts->ra_req_end;
	}
	return 0;
}

/*
 * The record of the readahead: tracepoints, with the two fields read here.
 * Spelled out because Debian's 6.12 kernels (vmlinux/arm64/vmlinux.h) do not
 * have these tracepoints; CO-RE matches it to the kernel's
 * trace_event_raw_page_cache_ra_op where they exist.
 */
struct trace_event_raw_page_cache_ra_op___iosb {
	unsigned long index;
	unsigned long req_count;
} __attribute__((preserve_access_index));

/* Readahead for a request of req_count pages at index: the pages past
 * them are read ahead. */
static __always_inline int on_readahead(struct trace_event_raw_page_cache_ra_op___iosb *ctx)
{
	struct thread_starts *ts = current_slots_tp();
	__u64 end;

	if (!ts || !parts_open(ts))
		return 0;
	end = BPF_CORE_READ(ctx, index) + BPF_CORE_READ(ctx, req_count);
	if (end > call_counts(ts)->ra_req_end)
		ts->ra_req_end = end;
	return 0;
}

SEC("tracepoint/readahead/page_cache_sync_ra")
int tp_ra_sync(struct trace_event_raw_page_cache_ra_op___iosb *ctx)
{
	return on_readahead(ctx);
}

SEC("tracepoint/readahead/page_cache_async_ra")
int tp_ra_async(struct trace_event_raw_page_cache_ra_op___iosb *ctx)
{
	return on_readahead(ctx);
}

/*
 * The record of ext4:ext4_writepages_result, with the one field read here
 * (spelled out as the readahead one, for kernels whose vmlinux.h lacks it).
 * pages_written is the writepages run's nr_to_write less what it left:
 * each folio it put under writeback took its pages off (ext4's
 * mpage_submit_folio, and iomap's where ext4 writes through iomap).
 */
struct trace_event_raw_ext4_writepages_result___iosb {
	int pages_written;
} __attribute__((preserve_access_index));

SEC("tracepoint/ext4/ext4_writepages_result")
int tp_writeback(struct trace_event_raw_ext4_writepages_result___iosb *ctx)
{
	struct thread_starts *ts = current_slots_tp();
	int pages;

	if (!ts || !parts_open(ts))
		return 0;
	pages = BPF_CORE_READ(ctx, pages_written);
	if (pages > 0)
		call_counts(ts)->writeback_pages += (__u64)pages;
	return 0;
}
