// SPDX-License-Identifier: GPL-2.0
/*
 * iostackbreak: latency of I/O per layer of the storage stack.
 *
 * Every (layer, op) cell is timed by an entry/exit pair. User space decides
 * which programs load and where they attach (the plan); the programs here
 * only know their layer and op. Hot paths touch a per-CPU array and, for
 * start times, one hash lookup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "iostackbreak.h"

char LICENSE[] SEC("license") = "GPL";

/* Knobs, set by user space between open and load. */
const volatile __u32 nr_targ_tgids; /* 0: every process */
const volatile __u32 targ_tgids[MAX_PID_FILTER];
const volatile __u32 targ_tid; /* 0: every thread */
const volatile bool filter_comm;
const volatile char targ_comm[COMM_LEN];
const volatile bool filter_cgroup; /* cgroup_filter[0] and descendants */
const volatile bool by_pid;	   /* -P */
const volatile bool by_disk;	   /* -D */
const volatile bool by_flags;   /* -F */
const volatile bool filter_dev;
const volatile __u32 targ_dev;		 /* kernel dev_t of the disk */
const volatile bool blk_queued;		 /* -Q: time from origin, not issue */
const volatile bool blk_origin_attached; /* block_io_start or insert is attached */
const volatile bool blk_origin_sees_all; /* it is block_io_start: every request */
const volatile __u32 blk_rq_argn;	 /* index of the request in insert/issue */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_CELLS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} cells SEC(".maps");

/* Breakdowns by process, disk or flags; entries appear as keys are seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BREAKDOWN_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct breakdown_key);
	__type(value, struct breakdown_cell);
} breakdown_cells SEC(".maps");

/* Never written: the zeroed value a new breakdown key starts from (a
 * breakdown_cell is too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct breakdown_cell);
} breakdown_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_DROP_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

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

/* Requests in flight; deleted at completion, so a plain hash that can fill. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_INFLIGHT_RQS);
	__type(key, __u64);
	__type(value, struct rq_start);
} rq_starts SEC(".maps");

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		(*n)++;
}

static __always_inline void record(__u32 layer, __u32 op, __u64 delta)
{
	__u32 idx = CELL_INDEX(layer, op);
	struct cell_hist *c = bpf_map_lookup_elem(&cells, &idx);
	__u32 b;

	if (!c)
		return;
	b = hist_bucket(delta);
	/*
	 * hist_bucket() caps the index, but the verifier cannot see that: hide
	 * b from clang so it keeps a check the verifier can.
	 */
	asm volatile("" : "+r"(b));
	if (b >= HIST_NR_BUCKETS)
		return;
	c->buckets[b]++;
	if (!c->count || delta < c->min_ns)
		c->min_ns = delta;
	if (delta > c->max_ns)
		c->max_ns = delta;
	c->count++;
	c->sum_ns += delta;
}

/* Keeps the smallest (or largest) value seen, against other CPUs. */
static __always_inline void atomic_min(__u64 *p, __u64 v)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *p;

		if (old && old <= v) /* 0: no value yet */
			return;
		if (__sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}

static __always_inline void atomic_max(__u64 *p, __u64 v)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *p;

		if (old >= v)
			return;
		if (__sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}

static __always_inline void record_breakdown(struct breakdown_key *key, const char *comm, __u64 delta)
{
	struct breakdown_cell *v = bpf_map_lookup_elem(&breakdown_cells, key);
	__u32 zero = 0, b;

	if (!v) {
		struct breakdown_cell *z = bpf_map_lookup_elem(&breakdown_zero, &zero);
		long err;

		if (!z)
			return;
		err = bpf_map_update_elem(&breakdown_cells, key, z, BPF_NOEXIST);
		if (err && err != -17 /* EEXIST: another CPU made it */) {
			count_drop(DROP_BREAKDOWN_MAP_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&breakdown_cells, key);
		if (!v)
			return;
	}
	/* The latest name: a process that execs after its first I/O renames. */
	if (comm)
		__builtin_memcpy(v->comm, comm, COMM_LEN);
	b = hist_bucket(delta);
	asm volatile("" : "+r"(b));
	if (b >= HIST_NR_BUCKETS)
		return;
	__sync_fetch_and_add(&v->cell.buckets[b], 1);
	__sync_fetch_and_add(&v->cell.count, 1);
	__sync_fetch_and_add(&v->cell.sum_ns, delta);
	atomic_min(&v->cell.min_ns, delta ? delta : 1);
	atomic_max(&v->cell.max_ns, delta);
}

/* The process filter alone: all that exits check, their entry did the rest. */
static __always_inline bool tgid_wanted(__u64 id)
{
	__u32 tgid = id >> 32;

	if (!nr_targ_tgids)
		return true;
	for (__u32 i = 0; i < MAX_PID_FILTER; i++) {
		if (i >= nr_targ_tgids)
			break;
		if (targ_tgids[i] == tgid)
			return true;
	}
	return false;
}

/* Is the current task one we trace? Cheapest checks first. */
static __always_inline bool task_wanted(__u64 id)
{
	if (!tgid_wanted(id))
		return false;
	if (targ_tid && (__u32)id != targ_tid)
		return false;
	if (filter_comm) {
		char comm[COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		for (int i = 0; i < COMM_LEN; i++) {
			if (comm[i] != targ_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

/*
 * nest: the layer can be re-entered by the same thread (overlayfs, loop over
 * a file): count depth and time the outermost call. A system call cannot
 * nest, so its slot is simply overwritten, which also heals a lost exit.
 */
static __always_inline int layer_enter(__u32 layer, bool nest)
{
	/* The ids cost a helper call: only filters and the hash need them. */
	bool need_id = nr_targ_tgids || targ_tid || !use_task_storage;
	__u64 id = need_id ? bpf_get_current_pid_tgid() : 0;
	__u32 tid = (__u32)id;
	struct thread_starts *ts;

	if (layer >= NR_LAYERS || !task_wanted(id))
		return 0;
	if (use_task_storage) {
		ts = bpf_task_storage_get(&task_starts, bpf_get_current_task_btf(), 0,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts) {
			count_drop(DROP_THREAD_MAP_FULL);
			return 0;
		}
		goto have_slot;
	}
	ts = bpf_map_lookup_elem(&thread_starts, &tid);
	if (!ts) {
		static const struct thread_starts zero;

		bpf_map_update_elem(&thread_starts, &tid, &zero, BPF_NOEXIST);
		ts = bpf_map_lookup_elem(&thread_starts, &tid);
		if (!ts) {
			count_drop(DROP_THREAD_MAP_FULL);
			return 0;
		}
	}
have_slot:
	if (nest && ts->depth[layer]++)
		return 0;
	ts->start_ns[layer] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int layer_exit(__u32 layer, __u32 op, bool nest)
{
	bool need_id = nr_targ_tgids || !use_task_storage || by_pid;
	__u64 id = need_id ? bpf_get_current_pid_tgid() : 0;
	__u32 tid = (__u32)id;
	struct thread_starts *ts;
	__u64 start, delta, now;

	if (layer >= NR_LAYERS || !tgid_wanted(id))
		return 0;
	/* First, so that our own lookups are not in the call's latency. */
	now = bpf_ktime_get_ns();
	if (use_task_storage)
		ts = bpf_task_storage_get(&task_starts, bpf_get_current_task_btf(), 0, 0);
	else
		ts = bpf_map_lookup_elem(&thread_starts, &tid);
	if (!ts)
		return 0;
	if (nest) {
		if (!ts->depth[layer])
			return 0; /* entered before we attached */
		if (--ts->depth[layer])
			return 0; /* an inner call of the same layer */
	}
	start = ts->start_ns[layer];
	if (!start)
		return 0;
	ts->start_ns[layer] = 0;
	delta = now - start;
	record(layer, op, delta);
	if (by_pid) {
		struct breakdown_key key = { .cell_idx = CELL_INDEX(layer, op), .tgid = id >> 32 };
		char comm[COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		record_breakdown(&key, comm, delta);
	}
	return 0;
}

/* ---- system call layer: syscalls:sys_enter_X / sys_exit_X ---- */

#define SYSCALL_TP(name, op)                                                                       \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                                \
	int se_##name(void *ctx)                                                                   \
	{                                                                                          \
		return layer_enter(LAYER_SYSCALL, false);                                          \
	}                                                                                          \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                                 \
	int sx_##name(void *ctx)                                                                   \
	{                                                                                          \
		return layer_exit(LAYER_SYSCALL, op, false);                                       \
	}

SYSCALL_TP(read, FSOP_READ)
SYSCALL_TP(pread64, FSOP_READ)
SYSCALL_TP(readv, FSOP_READ)
SYSCALL_TP(preadv, FSOP_READ)
SYSCALL_TP(preadv2, FSOP_READ)
SYSCALL_TP(write, FSOP_WRITE)
SYSCALL_TP(pwrite64, FSOP_WRITE)
SYSCALL_TP(writev, FSOP_WRITE)
SYSCALL_TP(pwritev, FSOP_WRITE)
SYSCALL_TP(pwritev2, FSOP_WRITE)
SYSCALL_TP(open, FSOP_OPEN)
SYSCALL_TP(openat, FSOP_OPEN)
SYSCALL_TP(openat2, FSOP_OPEN)
SYSCALL_TP(creat, FSOP_OPEN)
SYSCALL_TP(fsync, FSOP_FSYNC)
SYSCALL_TP(fdatasync, FSOP_FSYNC)

/* ---- kernel functions: fentry/fexit slots and kprobe/kretprobe ---- */

/*
 * A fentry program is bound to one function at load time, so each cell has
 * numbered slots that user space points at the functions it chose. A kprobe
 * program can be attached to many functions, so one pair per cell.
 */
#define FN_SLOT(lname, layer, oname, op, nest, i)                                                  \
	SEC("fentry")                                                                              \
	int fe_##lname##_##oname##_##i(void *ctx)                                                  \
	{                                                                                          \
		return layer_enter(layer, nest);                                                   \
	}                                                                                          \
	SEC("fexit")                                                                               \
	int fx_##lname##_##oname##_##i(void *ctx)                                                  \
	{                                                                                          \
		return layer_exit(layer, op, nest);                                                \
	}

#define FN_KPROBE(lname, layer, oname, op, nest)                                                   \
	SEC("kprobe")                                                                              \
	int kp_##lname##_##oname(void *ctx)                                                        \
	{                                                                                          \
		return layer_enter(layer, nest);                                                   \
	}                                                                                          \
	SEC("kretprobe")                                                                           \
	int kr_##lname##_##oname(void *ctx)                                                        \
	{                                                                                          \
		return layer_exit(layer, op, nest);                                                \
	}

#define FN_CELL1(l, L, o, O, nest)                                                                 \
	FN_KPROBE(l, L, o, O, nest)                                                                \
	FN_SLOT(l, L, o, O, nest, 0)
#define FN_CELL2(l, L, o, O, nest)                                                                 \
	FN_CELL1(l, L, o, O, nest)                                                                 \
	FN_SLOT(l, L, o, O, nest, 1)
#define FN_CELL3(l, L, o, O, nest)                                                                 \
	FN_CELL2(l, L, o, O, nest)                                                                 \
	FN_SLOT(l, L, o, O, nest, 2)
#define FN_CELL4(l, L, o, O, nest)                                                                 \
	FN_CELL3(l, L, o, O, nest)                                                                 \
	FN_SLOT(l, L, o, O, nest, 3)
#define FN_CELL5(l, L, o, O, nest)                                                                 \
	FN_CELL4(l, L, o, O, nest)                                                                 \
	FN_SLOT(l, L, o, O, nest, 4)

/* Slot counts must match fn_slots[] in src/planner.c. */
FN_CELL5(syscall, LAYER_SYSCALL, read, FSOP_READ, false)
FN_CELL5(syscall, LAYER_SYSCALL, write, FSOP_WRITE, false)
FN_CELL4(syscall, LAYER_SYSCALL, open, FSOP_OPEN, false)
FN_CELL2(syscall, LAYER_SYSCALL, fsync, FSOP_FSYNC, false)
FN_CELL3(vfs, LAYER_VFS, read, FSOP_READ, true)
FN_CELL3(vfs, LAYER_VFS, write, FSOP_WRITE, true)
FN_CELL1(vfs, LAYER_VFS, open, FSOP_OPEN, true)
FN_CELL1(vfs, LAYER_VFS, fsync, FSOP_FSYNC, true)
FN_CELL1(ext4, LAYER_EXT4, read, FSOP_READ, true)
FN_CELL1(ext4, LAYER_EXT4, write, FSOP_WRITE, true)
FN_CELL1(ext4, LAYER_EXT4, open, FSOP_OPEN, true)
FN_CELL1(ext4, LAYER_EXT4, fsync, FSOP_FSYNC, true)
FN_CELL1(xfs, LAYER_XFS, read, FSOP_READ, true)
FN_CELL1(xfs, LAYER_XFS, write, FSOP_WRITE, true)
FN_CELL1(xfs, LAYER_XFS, open, FSOP_OPEN, true)
FN_CELL1(xfs, LAYER_XFS, fsync, FSOP_FSYNC, true)
FN_CELL1(btrfs, LAYER_BTRFS, read, FSOP_READ, true)
FN_CELL1(btrfs, LAYER_BTRFS, write, FSOP_WRITE, true)
FN_CELL1(btrfs, LAYER_BTRFS, open, FSOP_OPEN, true)
FN_CELL1(btrfs, LAYER_BTRFS, fsync, FSOP_FSYNC, true)

/* ext4 fsync also has tracepoints, for kernels without fentry or kprobes. */
SEC("tracepoint/ext4/ext4_sync_file_enter")
int tp_ext4_fsync_enter(void *ctx)
{
	return layer_enter(LAYER_EXT4, true);
}

SEC("tracepoint/ext4/ext4_sync_file_exit")
int tp_ext4_fsync_exit(void *ctx)
{
	return layer_exit(LAYER_EXT4, FSOP_FSYNC, true);
}

/* ---- block layer ---- */

/* Before 5.17 the disk hung off the request itself. */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/*
 * btf: the program is tp_btf, whose request pointer the verifier knows, so
 * fields are plain loads; raw_tp programs must copy them with probe reads.
 * The flag is a constant in every caller, so only one path is compiled in.
 */
static __always_inline __u32 rq_dev(struct request *rq, bool btf)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(((struct request___rq_disk *)0)->rq_disk))
		disk = BPF_CORE_READ((struct request___rq_disk *)rq, rq_disk);
	else if (btf)
		disk = rq->q->disk;
	else
		disk = BPF_CORE_READ(rq, q, disk);
	if (!disk)
		return 0;
	if (btf)
		return KDEV_MAKE(disk->major, disk->first_minor);
	return KDEV_MAKE(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

static __always_inline __u32 rq_cmd_flags(struct request *rq, bool btf)
{
	return btf ? rq->cmd_flags : BPF_CORE_READ(rq, cmd_flags);
}

static __always_inline __u32 rq_op(__u32 cmd_flags)
{
	/* REQ_OP_MASK is the low 8 bits; these op numbers are stable ABI. */
	switch (cmd_flags & 0xff) {
	case 0:
		return BLKOP_READ;
	case 1:
		return BLKOP_WRITE;
	case 2:
		return BLKOP_FLUSH;
	case 3:
		return BLKOP_DISCARD;
	default:
		return BLKOP_OTHER;
	}
}

static __always_inline __u32 rq_flags(__u32 f)
{
	__u32 out = 0;

	/* Bit positions moved between kernels: CO-RE reads this kernel's. */
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		out |= RQ_FLAG_SYNC;
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		out |= RQ_FLAG_META;
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		out |= RQ_FLAG_FUA;
	if (f & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		out |= RQ_FLAG_PREFLUSH;
	return out;
}

/*
 * The first sighting of a request, in the submitter's context: filters are
 * applied here, and who and where are recorded for the completion.
 */
static __always_inline int blk_first_seen(struct request *rq, __u64 key, __u64 now, __u64 issue_ns,
					  bool btf)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rq_start v = {};
	bool wanted = task_wanted(id);

	if (wanted && (filter_dev || by_disk)) {
		v.dev = rq_dev(rq, btf);
		wanted = !filter_dev || v.dev == targ_dev;
	}
	if (!wanted) {
		/*
		 * Insert does not see requests issued directly (no scheduler),
		 * so issue must take those as first sightings; a request that
		 * insert saw and filtered out is marked so that issue, maybe in
		 * another task's context, does not take it as new.
		 */
		if (issue_ns || blk_origin_sees_all)
			return 0;
		v.excluded = 1;
		if (bpf_map_update_elem(&rq_starts, &key, &v, BPF_ANY))
			count_drop(DROP_RQ_MAP_FULL);
		return 0;
	}
	if (by_pid)
		bpf_get_current_comm(v.comm, sizeof(v.comm));
	v.origin_ns = now;
	v.issue_ns = issue_ns;
	v.tgid = id >> 32;
	if (bpf_map_update_elem(&rq_starts, &key, &v, BPF_ANY))
		count_drop(DROP_RQ_MAP_FULL);
	return 0;
}

/* Origin (block_io_start, else insert). */
static __always_inline int blk_origin(struct request *rq, bool btf)
{
	return blk_first_seen(rq, (__u64)rq, bpf_ktime_get_ns(), 0, btf);
}

static __always_inline int blk_issue(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct rq_start *v;

	/* Without an origin point issue is always the first sighting. */
	if (!blk_origin_attached)
		return blk_first_seen(rq, key, now, now, btf);
	v = bpf_map_lookup_elem(&rq_starts, &key);
	if (v) {
		if (!v->excluded)
			v->issue_ns = now;
		return 0;
	}
	/* block_io_start sees every request: this one began before we did. */
	if (blk_origin_sees_all)
		return 0;
	/* Insert was bypassed (no scheduler): issue is the first sighting. */
	return blk_first_seen(rq, key, now, now, btf);
}

static __always_inline int blk_complete(struct request *rq, __u32 nr_bytes, bool btf)
{
	__u64 key = (__u64)rq, start;
	struct rq_start *v;
	__u32 data_len;

	v = bpf_map_lookup_elem(&rq_starts, &key);
	if (!v)
		return 0;
	/* A partial completion: the request goes on with the rest. */
	data_len = btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	if (nr_bytes < data_len)
		return 0;
	start = v->excluded ? 0 : blk_queued ? v->origin_ns : v->issue_ns;
	if (start) {
		__u32 cmd_flags = rq_cmd_flags(rq, btf), op = rq_op(cmd_flags);
		__u64 delta = bpf_ktime_get_ns() - start;

		record(LAYER_BLK, op, delta);
		if (by_pid || by_disk || by_flags) {
			struct breakdown_key k = {
				.cell_idx = CELL_INDEX(LAYER_BLK, op),
				.tgid = by_pid ? v->tgid : 0,
				.dev = by_disk ? v->dev : 0,
				.flags = by_flags ? rq_flags(cmd_flags) : 0,
			};

			record_breakdown(&k, by_pid ? v->comm : NULL, delta);
		}
	}
	bpf_map_delete_elem(&rq_starts, &key);
	return 0;
}

/* Before 5.11 insert and issue had the queue as their first argument. */
#define RQ_ARG(args) ((struct request *)(blk_rq_argn ? (args)[1] : (args)[0]))

SEC("tp_btf/block_io_start")
int tb_io_start(__u64 *ctx)
{
	return blk_origin((struct request *)ctx[0], true);
}

SEC("tp_btf/block_rq_insert")
int tb_rq_insert(__u64 *ctx)
{
	return blk_origin(RQ_ARG(ctx), true);
}

SEC("tp_btf/block_rq_issue")
int tb_rq_issue(__u64 *ctx)
{
	return blk_issue(RQ_ARG(ctx), true);
}

SEC("tp_btf/block_rq_complete")
int tb_rq_complete(__u64 *ctx)
{
	return blk_complete((struct request *)ctx[0], (__u32)ctx[2], true);
}

SEC("raw_tp/block_io_start")
int rt_io_start(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_origin((struct request *)ctx->args[0], false);
}

SEC("raw_tp/block_rq_insert")
int rt_rq_insert(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_origin(RQ_ARG(ctx->args), false);
}

SEC("raw_tp/block_rq_issue")
int rt_rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_issue(RQ_ARG(ctx->args), false);
}

SEC("raw_tp/block_rq_complete")
int rt_rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	return blk_complete((struct request *)ctx->args[0], (__u32)ctx->args[2], false);
}
