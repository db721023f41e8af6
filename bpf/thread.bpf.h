/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-thread slot: the start of each open layer's call, and the call
 * of the root layer split into parts as it goes (call_parts.h). Owns the
 * maps thread_starts and task_starts, and the knobs that say which layer
 * is the root and whether calls are split.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef THREAD_BPF_H
#define THREAD_BPF_H

/*
 * Where the time of each call goes (bpf/call_parts.h): calls of root_layer,
 * the outermost traced layer of threads, are split into parts when
 * split_calls is set (their totals are in layer.bpf.h's maps).
 */
const volatile bool split_calls;
const volatile __u32 root_layer;
/* Bit l: the plan times layer l (a call of it can be open in a thread). */
const volatile __u32 timed_layers;
#ifdef BENCH_WITHOUT_OPTIONS
/* bench/sysprog.py's build without the parts of calls (events.bpf.h). */
#define split_calls false
#endif

/*
 * One entry per thread that did traced I/O, never deleted on the hot path:
 * LRU lets the kernel reuse the slots of threads that are gone.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct thread_starts);
} thread_starts SEC(".maps");

/*
 * The same slots in task-local storage where the kernel allows it (5.11+
 * for the map; tracepoint and kprobe programs may use it on newer kernels):
 * no hashing, and memory only for tasks that did traced I/O. User space
 * tries this first and falls back to the hash.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_starts);
} task_starts SEC(".maps");

const volatile bool use_task_storage;

/*
 * In front of task storage: a slot in an array, at the thread's id modulo
 * its size, for the thread that claimed it first. The array's look-up is
 * inlined by the verifier; bpf_task_storage_get() is a helper call that
 * takes the storage's per-CPU lock, and the syscall layer made two per
 * call: 36 of the 89 ns per call it cost over its floor
 * (bench/results/sysprog-ladder-2026-11-27.md).
 *
 * A slot belongs to one thread from its first traced call to its exit
 * (tb_thread_gone), named in owner by its id and start time together, so
 * that a thread with a reused id never takes a dead one's state. A thread
 * whose slot another thread holds, or that already has its state in task
 * storage, keeps it there: a thread's state is in one place for its life.
 * Threads made one after another have ids one after another, so a pool
 * of up to FAST_SLOTS threads shares no slot. Only with task storage,
 * with tp_btf (use_fast_slots, set by user space; IOSB_FAST_SLOTS=N
 * gives it N slots, 0 none).
 */
#define FAST_SLOT_CLAIMING (~0ULL) /* being made ready for its new owner */

struct fast_slot {
	__u64 owner; /* (tid + 1) << 32 | the low 32 bits of its start time; 0: free */
	struct thread_starts ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FAST_SLOTS); /* user space sets it */
	__type(key, __u32);
	__type(value, struct fast_slot);
} fast_slots SEC(".maps");

const volatile bool use_fast_slots;
const volatile __u32 fast_slots_mask; /* the array's size - 1, a power of 2 */

/*
 * With the hash: which threads had a slot since tracing began, a bit per
 * thread id up to the kernel's PID_MAX_LIMIT on 64 bits (512 KiB; one
 * entry with task storage). An LRU eviction cannot be hooked; this is how
 * a thread whose slot is gone knows it had one (thread_slots.h).
 */
#define TID_LIMIT (4U * 1024 * 1024)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TID_LIMIT / 64);
	__type(key, __u32);
	__type(value, __u64);
} threads_seen SEC(".maps");

/* Marks the thread as having a slot. Returns whether it had one before. */
static __always_inline bool thread_seen_set(__u32 tid)
{
	__u32 k = tid / 64;
	__u64 bit = 1ULL << (tid % 64), *w = bpf_map_lookup_elem(&threads_seen, &k);

	return w && (__sync_fetch_and_or(w, bit) & bit);
}

/* Forgets it. Returns whether it had one. */
static __always_inline bool thread_seen_clear(__u32 tid)
{
	__u32 k = tid / 64;
	__u64 bit = 1ULL << (tid % 64), *w = bpf_map_lookup_elem(&threads_seen, &k);

	return w && (__sync_fetch_and_and(w, ~bit) & bit);
}

/*
 * A thread's slots as they start: no call open. (Zeroes would say that a
 * call of layer 0 is open: a slot made for a call that --file then left
 * out would look busy.)
 */
static const struct thread_starts fresh_slots = { .inner = NO_LAYER };

/* The root call's start: what names the call in events. 0: none open. */
static __always_inline __u64 call_ns_of(struct thread_starts *ts)
{
	__u32 root = root_layer;

	if (root >= NR_LAYERS)
		return 0;
	return ts->start_ns[root];
}

/* What names a thread in a fast slot's owner. */
static __always_inline __u64 fast_owner(__u32 tid, __u64 start_time)
{
	return ((__u64)(tid + 1) << 32) | (__u32)start_time;
}

/* The fast slot a thread's id points at (never NULL while the index is
 * masked into the array; the check is the verifier's). */
static __always_inline struct fast_slot *fast_slot_at(__u32 tid)
{
	__u32 idx = tid & fast_slots_mask;

	return bpf_map_lookup_elem(&fast_slots, &idx);
}

/* A thread's slots, never created here: most threads that switch have no
 * call open, and leave after this one look-up. */
static __always_inline struct thread_starts *slots_of(struct task_struct *task, bool btf)
{
	__u32 tid = btf ? task->pid : BPF_CORE_READ(task, pid);

	if (use_fast_slots) {
		__u64 start = btf ? task->start_time : BPF_CORE_READ(task, start_time);
		struct fast_slot *f = fast_slot_at(tid);

		if (f && f->owner == fast_owner(tid, start))
			return &f->ts;
	}
	if (use_task_storage)
		return bpf_task_storage_get(&task_starts, task, 0, 0);
	return bpf_map_lookup_elem(&thread_starts, &tid);
}

/*
 * The current thread's slots (task: a BTF pointer to it), made fresh when
 * the thread has none: in its fast slot when that is free, or held by a
 * dead thread of the same id (ids are unique among live threads), else in
 * task storage. Only with task storage.
 */
static __always_inline struct thread_starts *my_stored_slots_made(struct task_struct *task)
{
	struct thread_starts *ts;
	struct fast_slot *f;
	__u64 me, old;
	__u32 tid;

	if (!use_fast_slots)
		goto in_task_storage;
	tid = task->pid;
	me = fast_owner(tid, task->start_time);
	f = fast_slot_at(tid);
	if (!f)
		goto in_task_storage;
	old = f->owner;
	if (old == me)
		return &f->ts;
	ts = bpf_task_storage_get(&task_starts, task, 0, 0);
	if (ts)
		return ts;
	if (old && old >> 32 != me >> 32)
		goto in_task_storage;
	if (__sync_val_compare_and_swap(&f->owner, old, FAST_SLOT_CLAIMING) != old)
		goto in_task_storage;
	/* Made fresh while no thread can match it (a dead thread's state, or
	 * the array's zeroes: zeroes say a call of layer 0 is open), then
	 * named its owner's by an atomic exchange, a full barrier on every
	 * JIT: the state is fresh before anyone finds it. */
	f->ts = fresh_slots;
	__sync_val_compare_and_swap(&f->owner, FAST_SLOT_CLAIMING, me);
	return &f->ts;

in_task_storage:
	return bpf_task_storage_get(&task_starts, task, (void *)&fresh_slots,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* A thread exits: its fast slot, if it has one, is free for another
 * (who makes it fresh as it claims it). */
static __always_inline void fast_slot_free(struct task_struct *task)
{
	__u32 tid = task->pid;
	struct fast_slot *f = fast_slot_at(tid);

	if (f)
		__sync_val_compare_and_swap(&f->owner, fast_owner(tid, task->start_time), 0);
}

#endif /* THREAD_BPF_H */
