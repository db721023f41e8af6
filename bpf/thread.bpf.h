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

/* A thread's slots, never created here: most threads that switch have no
 * call open, and leave after this one look-up. */
static __always_inline struct thread_starts *slots_of(struct task_struct *task, bool btf)
{
	__u32 tid;

	if (use_task_storage)
		return bpf_task_storage_get(&task_starts, task, 0, 0);
	tid = btf ? task->pid : BPF_CORE_READ(task, pid);
	return bpf_map_lookup_elem(&thread_starts, &tid);
}

#endif /* THREAD_BPF_H */
