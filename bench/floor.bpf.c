// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of the overhead benchmark: empty programs on exactly the attach
 * points iostackbreak uses for a layer. What they cost is what any tracer
 * pays to be called there at all; iostackbreak's own work is the difference.
 *
 * One source, one object per layer, chosen at compile time:
 *   -DFLOOR_SYSCALL      syscalls:sys_enter_X / sys_exit_X of the 16 calls
 *   -DFLOOR_BLK          tp_btf block_rq_issue + block_rq_complete
 *   -DFLOOR_BLK_DONE     tp_btf block_rq_complete alone (-Q from block_io_start
 *                        needs no issue program)
 *   -DFLOOR_BLK_START    tp_btf block_io_start  (-Q origin, 6.5+)
 *   -DFLOOR_BLK_INSERT   tp_btf block_rq_insert (-Q origin, older kernels)
 *   -DFLOOR_EXT4         ext4:ext4_sync_file_enter / exit
 *   -DFLOOR_RAW          tp_btf sys_enter + sys_exit, each reading the clock
 *                        once and storing it: the cheapest a syscall latency
 *                        tracer can be (issue 12's floor)
 *   -DFLOOR_TASK         the same pair, the entry's clock kept in the
 *                        thread's task storage and the exit's delta taken
 *                        from it: the least a tracer must do to pair a
 *                        call's entry with its exit when the call can sleep,
 *                        migrate or be preempted between them
 *   -DFLOOR_TASK_HIST    FLOOR_TASK plus the delta added to a per-CPU
 *                        log-linear histogram (the tool's hist_bucket.h):
 *                        the least a latency-histogram tracer must do
 * Program names are the tool's own, so per-program statistics line up.
 * With -DFLOOR_CLOCK the syscall programs also read the clock once: the
 * least any latency tracer must do there (bench/per_program.sh).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hist_bucket.h"

char LICENSE[] SEC("license") = "GPL";

#ifdef FLOOR_CLOCK
#define BODY()                                                                 \
	do {                                                                   \
		volatile __u64 now = bpf_ktime_get_ns();                       \
		(void)now;                                                     \
	} while (0)
#else
#define BODY()                                                                 \
	do {                                                                   \
	} while (0)
#endif

#ifdef FLOOR_SYSCALL
#define EMPTY_SYSCALL(name)                                                    \
	SEC("tracepoint/syscalls/sys_enter_" #name)                            \
	int se_##name(void *ctx)                                               \
	{                                                                      \
		BODY();                                                        \
		return 0;                                                      \
	}                                                                      \
	SEC("tracepoint/syscalls/sys_exit_" #name)                             \
	int sx_##name(void *ctx)                                               \
	{                                                                      \
		BODY();                                                        \
		return 0;                                                      \
	}

EMPTY_SYSCALL(read)
EMPTY_SYSCALL(pread64)
EMPTY_SYSCALL(readv)
EMPTY_SYSCALL(preadv)
EMPTY_SYSCALL(preadv2)
EMPTY_SYSCALL(write)
EMPTY_SYSCALL(pwrite64)
EMPTY_SYSCALL(writev)
EMPTY_SYSCALL(pwritev)
EMPTY_SYSCALL(pwritev2)
EMPTY_SYSCALL(open)
EMPTY_SYSCALL(openat)
EMPTY_SYSCALL(openat2)
EMPTY_SYSCALL(creat)
EMPTY_SYSCALL(fsync)
EMPTY_SYSCALL(fdatasync)
#endif

#ifdef FLOOR_RAW
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_clock SEC(".maps");

static __always_inline int store_clock(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&floor_clock, &zero);

	if (v)
		*v = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_enter")
int tb_sys_enter(__u64 *ctx)
{
	return store_clock();
}

SEC("tp_btf/sys_exit")
int tb_sys_exit(__u64 *ctx)
{
	return store_clock();
}
#endif

#if defined(FLOOR_TASK) || defined(FLOOR_TASK_HIST)
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} floor_start SEC(".maps");

struct floor_hist {
	__u64 buckets[HIST_NR_BUCKETS];
	__u64 count;
	__u64 sum_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct floor_hist);
} floor_hist SEC(".maps");

SEC("tp_btf/sys_enter")
int tb_sys_enter(__u64 *ctx)
{
	__u64 *start = bpf_task_storage_get(&floor_start, bpf_get_current_task_btf(), 0,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (start)
		*start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int tb_sys_exit(__u64 *ctx)
{
	__u64 now = bpf_ktime_get_ns(), delta;
	__u64 *start = bpf_task_storage_get(&floor_start, bpf_get_current_task_btf(), 0, 0);
	struct floor_hist *h;
	__u32 zero = 0, b;

	if (!start || !*start)
		return 0;
	delta = now - *start;
	*start = 0;
	h = bpf_map_lookup_elem(&floor_hist, &zero);
	if (!h)
		return 0;
#ifdef FLOOR_TASK_HIST
	b = hist_bucket(delta);
	asm volatile("" : "+r"(b));
	if (b < HIST_NR_BUCKETS)
		h->buckets[b]++;
	h->count++;
#else
	(void)b;
#endif
	h->sum_ns += delta;
	return 0;
}
#endif

#ifdef FLOOR_BLK
SEC("tp_btf/block_rq_issue")
int tb_rq_issue(__u64 *ctx)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int tb_rq_complete(__u64 *ctx)
{
	return 0;
}
#endif

#ifdef FLOOR_BLK_DONE
SEC("tp_btf/block_rq_complete")
int tb_rq_complete(__u64 *ctx)
{
	return 0;
}
#endif

#ifdef FLOOR_BLK_START
SEC("tp_btf/block_io_start")
int tb_io_start(__u64 *ctx)
{
	return 0;
}
#endif

#ifdef FLOOR_BLK_INSERT
SEC("tp_btf/block_rq_insert")
int tb_rq_insert(__u64 *ctx)
{
	return 0;
}
#endif

#ifdef FLOOR_EXT4
SEC("tracepoint/ext4/ext4_sync_file_enter")
int tp_ext4_fsync_enter(void *ctx)
{
	return 0;
}

SEC("tracepoint/ext4/ext4_sync_file_exit")
int tp_ext4_fsync_exit(void *ctx)
{
	return 0;
}
#endif
