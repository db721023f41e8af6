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
#include "call_parts.h"

char LICENSE[] SEC("license") = "GPL";

/* From include/uapi/asm-generic/errno-base.h: vmlinux.h has no macros. */
#define EEXIST 17

/*
 * Request operations, cmd_flags & REQ_OP_MASK (the low 8 bits since Linux
 * 4.10, "block: better op and flags encoding"). The values
 * are fixed by include/linux/blk_types.h and used by blktrace's ABI; the
 * enum's name changed (req_opf -> req_op, 6.0), so CO-RE cannot name it
 * portably.
 */
#define KREQ_OP_MASK 0xff
#define KREQ_OP_READ 0
#define KREQ_OP_WRITE 1
#define KREQ_OP_FLUSH 2
#define KREQ_OP_DISCARD 3

/* Knobs, set by user space between open and load. */
const volatile __u32 nr_targ_tgids; /* 0: every process */
const volatile __u32 targ_tgids[MAX_PID_FILTER];
const volatile __u32 targ_tid; /* 0: every thread */
const volatile bool filter_comm;
const volatile char targ_comm[COMM_LEN];
const volatile bool filter_cgroup; /* cgroup_filter[0] and descendants */
const volatile bool by_pid;	   /* -P */
const volatile bool by_disk;	   /* -D */
const volatile bool by_flags;	   /* -F */
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

/*
 * Where the time of each call goes (bpf/call_parts.h): calls of root_layer,
 * the outermost traced layer of threads, are split into parts. Per op:
 * the totals, and per part a histogram of its time per call (calls where a
 * part took no time are not added: user space adds them as zeros).
 */
const volatile bool split_calls;
const volatile __u32 root_layer;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_FS_OPS *NR_PARTS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} call_parts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_FS_OPS);
	__type(key, __u32);
	__type(value, struct call_totals);
} call_ops SEC(".maps");

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

/*
 * Descendants of the traced processes, when following children: added at
 * fork (in the kernel, so no child's first I/O is missed), removed when
 * the last thread of the process exits.
 */
const volatile bool follow_children;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, __u8);
} followed SEC(".maps");

/*
 * Events and the file filter. want_args: read each call's file (and, for
 * events, its position and size) from its arguments; off, the programs
 * never touch them. Calls of root_layer at least slower_ns long are sent to
 * user space (events_on); trace_on adds the slices of layers and waits
 * within calls, and the block requests calls submitted.
 */
const volatile bool want_args;
const volatile bool events_on;
const volatile bool trace_on;
const volatile bool full_path;
const volatile __u64 slower_ns;
const volatile __u32 nr_files; /* --file: 0, every file */
const volatile struct file_id targ_files[MAX_FILE_FILTER];

/* User space sizes it (a power of two of pages); one page when unused. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/* The slowest request of each thread's current call, for its event. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct call_blk);
} call_blk SEC(".maps");

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		(*n)++;
}

/* Adds one value to a per-CPU histogram of map at idx. */
static __always_inline void hist_add(void *map, __u32 idx, __u64 delta)
{
	struct cell_hist *c = bpf_map_lookup_elem(map, &idx);
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

static __always_inline void record(__u32 layer, __u32 op, __u64 delta)
{
	hist_add(&cells, CELL_INDEX(layer, op), delta);
}

/* A block request that failed: counted and timed beside the histogram. */
static __always_inline void record_error(__u32 layer, __u32 op, __u64 delta)
{
	__u32 idx = CELL_INDEX(layer, op);
	struct cell_hist *c = bpf_map_lookup_elem(&cells, &idx);

	if (!c)
		return;
	c->errors++;
	c->error_sum_ns += delta;
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

static __always_inline struct breakdown_cell *breakdown_cell_of(__u32 full,
								struct breakdown_key *key);

/* A key's cell of the breakdown map, made if new; a full map is counted as
 * the reason `full`. */
static __always_inline struct breakdown_cell *breakdown_cell_of(__u32 full,
								struct breakdown_key *key)
{
	struct breakdown_cell *v = bpf_map_lookup_elem(&breakdown_cells, key);
	__u32 zero = 0;

	if (!v) {
		struct breakdown_cell *z = bpf_map_lookup_elem(&breakdown_zero, &zero);
		long err;

		if (!z)
			return NULL;
		err = bpf_map_update_elem(&breakdown_cells, key, z, BPF_NOEXIST);
		if (err && err != -EEXIST) { /* EEXIST: another CPU made it */
			count_drop(full);
			return NULL;
		}
		v = bpf_map_lookup_elem(&breakdown_cells, key);
	}
	return v;
}

static __always_inline void record_breakdown_or(__u32 full, struct breakdown_key *key,
						const char *comm, __u64 delta);

/* A key's cell of the breakdown map; a full map is counted as its reason. */
static __always_inline void record_breakdown(struct breakdown_key *key, const char *comm,
					     __u64 delta)
{
	record_breakdown_or(DROP_BREAKDOWN_MAP_FULL, key, comm, delta);
}

/* A failed block request of a key: counted apart, as in record_error(). */
static __always_inline void record_breakdown_error(struct breakdown_key *key, const char *comm,
						   __u64 delta)
{
	struct breakdown_cell *v = breakdown_cell_of(DROP_BREAKDOWN_MAP_FULL, key);

	if (!v)
		return;
	if (comm)
		__builtin_memcpy(v->comm, comm, COMM_LEN);
	__sync_fetch_and_add(&v->cell.errors, 1);
	__sync_fetch_and_add(&v->cell.error_sum_ns, delta);
}

static __always_inline void record_breakdown_or(__u32 full, struct breakdown_key *key,
						const char *comm, __u64 delta)
{
	struct breakdown_cell *v = breakdown_cell_of(full, key);
	__u32 b;

	if (!v)
		return;
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

/* Is this process traced: named with -p (or the command), or, when
 * following children, forked by one that is? */
static __always_inline bool tgid_traced(__u32 tgid)
{
	for (__u32 i = 0; i < MAX_PID_FILTER; i++) {
		if (i >= nr_targ_tgids)
			break;
		if (targ_tgids[i] == tgid)
			return true;
	}
	return follow_children && bpf_map_lookup_elem(&followed, &tgid);
}

/* The process filter alone: all that exits check, their entry did the rest. */
static __always_inline bool tgid_wanted(__u64 id)
{
	if (!nr_targ_tgids)
		return true;
	return tgid_traced(id >> 32);
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

/* ---- a call's file, position and size (events, --file) ---- */

/*
 * How a program reaches its function's arguments: the same argument sits in
 * a fentry context slot, a kprobe's registers, a syscall tracepoint's record,
 * or the registers of the user's system call (raw sys_enter, and the arch's
 * syscall wrappers under fentry or kprobe).
 */
enum arg_method {
	AM_FENTRY,     /* ctx: the function's arguments, then its return value */
	AM_KPROBE,     /* ctx: pt_regs at the function's entry or return */
	AM_SYS_TP,     /* ctx: syscalls:sys_enter_* / sys_exit_* record */
	AM_SYS_RAW,    /* ctx: raw sys_enter/sys_exit (regs, id or ret) */
	AM_SYS_FENTRY, /* ctx: the wrapper's (regs), then its return value */
	AM_SYS_KPROBE, /* ctx: pt_regs of the wrapper, whose first argument is regs */
	AM_CELL_TP,    /* ctx: a cell's own tracepoint record */
};

/* Argument n (0-3) of the user's system call, from its saved registers. */
static __always_inline __u64 sys_arg(struct pt_regs *regs, int n)
{
	switch (n) {
	case 0:
		return PT_REGS_PARM1_CORE_SYSCALL(regs);
	case 1:
		return PT_REGS_PARM2_CORE_SYSCALL(regs);
	case 2:
		return PT_REGS_PARM3_CORE_SYSCALL(regs);
	default:
		return PT_REGS_PARM4_CORE_SYSCALL(regs);
	}
}

static __always_inline __u64 arg_n(void *ctx, int method, int n)
{
	struct pt_regs *regs = ctx;

	switch (method) {
	case AM_FENTRY:
		return ((__u64 *)ctx)[n];
	case AM_KPROBE:
		if (n == 0)
			return PT_REGS_PARM1(regs);
		if (n == 1)
			return PT_REGS_PARM2(regs);
		if (n == 2)
			return PT_REGS_PARM3(regs);
		return PT_REGS_PARM4(regs);
	case AM_SYS_TP: {
		/* Copied, not loaded: clang may fold the field's offset into a
		 * moved context pointer, which the verifier refuses to load. */
		__u64 v = 0;

		bpf_probe_read_kernel(&v, sizeof(v),
				      &((struct trace_event_raw_sys_enter *)ctx)->args[n]);
		return v;
	}
	case AM_SYS_RAW:
	case AM_SYS_FENTRY:
		return sys_arg((struct pt_regs *)((__u64 *)ctx)[0], n);
	case AM_SYS_KPROBE:
		return sys_arg((struct pt_regs *)PT_REGS_PARM1(regs), n);
	}
	return 0;
}

/* The arguments of a function of each kind (fexit finds its return value
 * after them). */
static __always_inline int args_count(int args)
{
	switch (args) {
	case ARGS_FILE_VEC:
		return 5;
	case ARGS_FILE_RW:
	case ARGS_FILE_ITER:
	case ARGS_FILE:
		return 4;
	case ARGS_KIOCB:
	case ARGS_OPEN_PATH:
	case ARGS_OPEN_INODE:
		return 2;
	}
	return 1; /* a syscall wrapper: (regs) */
}

/* The value the call returned, seen by its exit program. */
static __always_inline __s64 ret_of(void *ctx, int method, int args)
{
	switch (method) {
	case AM_FENTRY:
	case AM_SYS_FENTRY:
		return ((__s64 *)ctx)[args_count(args)];
	case AM_KPROBE:
	case AM_SYS_KPROBE:
		return PT_REGS_RC((struct pt_regs *)ctx);
	case AM_SYS_TP:
		return ((struct trace_event_raw_sys_exit *)ctx)->ret;
	case AM_SYS_RAW:
		return ((__s64 *)ctx)[1];
	}
	return 0;
}

/* The open file behind a descriptor of the current task, or NULL. */
static __always_inline struct file *file_of_fd(__u64 fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if ((__s64)fd < 0 || !fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* Is (superblock dev, inode number) one of the --file files? */
static __always_inline bool file_id_wanted(__u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < MAX_FILE_FILTER; i++) {
		if (i >= nr_files)
			break;
		if (targ_files[i].ino == ino && targ_files[i].dev == dev)
			return true;
	}
	return false;
}

static __always_inline bool inode_wanted(struct inode *inode)
{
	if (!inode)
		return false;
	return file_id_wanted(BPF_CORE_READ(inode, i_sb, s_dev), BPF_CORE_READ(inode, i_ino));
}

/* A loff_t the function takes by pointer (NULL for streams: no position). */
static __always_inline __u64 pos_at(__u64 ppos)
{
	__s64 pos = 0;

	if (!ppos || bpf_probe_read_kernel(&pos, sizeof(pos), (void *)ppos))
		return NO_POS;
	return (__u64)pos;
}

/*
 * What a layer's call is about: its file (and, under --file, whether it is
 * one of ours), its position and size. Returns false when --file leaves the
 * call out. An open's file is only known at its exit (ARGS_OPEN: pending).
 */
static __always_inline bool call_args_read(struct thread_starts *ts, void *ctx, int method,
					   int args, __u32 layer, __u32 op)
{
	struct file *f = NULL;
	struct inode *inode = NULL;
	__u64 pos = NO_POS, bytes = NO_POS; /* NO_POS: not known, or none */
	bool root = layer == root_layer;

	switch (args) {
	case ARGS_FD:
	case ARGS_FD_POS:
	case ARGS_FD_VEC:
	case ARGS_FD_VEC_POS:
		f = file_of_fd(arg_n(ctx, method, 0));
		if (!f || op == FSOP_FSYNC)
			break;
		if (args == ARGS_FD || args == ARGS_FD_POS)
			bytes = arg_n(ctx, method, 2);
		if (args == ARGS_FD_POS || args == ARGS_FD_VEC_POS)
			pos = arg_n(ctx, method, 3);
		/* preadv2/pwritev2 take -1 for "the file position" */
		if (args == ARGS_FD || args == ARGS_FD_VEC || pos == NO_POS)
			pos = BPF_CORE_READ(f, f_pos);
		break;
	case ARGS_OPEN:
		if (nr_files)
			ts->file_pending = 1;
		if (root) {
			ts->file = 0;
			ts->pos = NO_POS;
			ts->bytes = NO_POS;
		}
		return true;
	case ARGS_FILE_RW:
		f = (struct file *)arg_n(ctx, method, 0);
		bytes = arg_n(ctx, method, 2);
		pos = pos_at(arg_n(ctx, method, 3));
		break;
	case ARGS_FILE_VEC:
		f = (struct file *)arg_n(ctx, method, 0);
		pos = pos_at(arg_n(ctx, method, 3));
		break;
	case ARGS_FILE_ITER:
		f = (struct file *)arg_n(ctx, method, 0);
		bytes = BPF_CORE_READ((struct iov_iter *)arg_n(ctx, method, 1), count);
		pos = pos_at(arg_n(ctx, method, 2));
		break;
	case ARGS_KIOCB: {
		struct kiocb *iocb = (struct kiocb *)arg_n(ctx, method, 0);

		f = BPF_CORE_READ(iocb, ki_filp);
		pos = BPF_CORE_READ(iocb, ki_pos);
		bytes = BPF_CORE_READ((struct iov_iter *)arg_n(ctx, method, 1), count);
		break;
	}
	case ARGS_FILE:
		f = (struct file *)arg_n(ctx, method, 0);
		break;
	case ARGS_OPEN_PATH: /* the file is not set up yet: its path is */
		f = (struct file *)arg_n(ctx, method, 1);
		inode = BPF_CORE_READ((struct path *)arg_n(ctx, method, 0), dentry, d_inode);
		break;
	case ARGS_OPEN_INODE:
		f = (struct file *)arg_n(ctx, method, 1);
		inode = (struct inode *)arg_n(ctx, method, 0);
		break;
	}
	if (nr_files && args != ARGS_TP_DEV_INO) {
		if (!inode && f)
			inode = BPF_CORE_READ(f, f_inode);
		if (!inode_wanted(inode))
			return false;
	}
	if (root) {
		ts->file = (__u64)f;
		ts->pos = op == FSOP_READ || op == FSOP_WRITE ? pos : NO_POS;
		ts->bytes = op == FSOP_READ || op == FSOP_WRITE ? bytes : NO_POS;
	}
	return true;
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

/*
 * nest: the layer can be re-entered by the same thread (overlayfs, loop over
 * a file): count depth and time the outermost call. A system call cannot
 * nest, so its slot is simply overwritten, which also heals a lost exit.
 */
static __always_inline int layer_enter(__u32 layer, __u32 op, bool nest, void *ctx, int method,
				       int args)
{
	/* The ids cost a helper call: only filters and the hash need them. */
	bool need_id = nr_targ_tgids || targ_tid || !use_task_storage;
	__u64 id = need_id ? bpf_get_current_pid_tgid() : 0;
	__u32 tid = (__u32)id;
	struct thread_starts *ts;
	__u64 now;

	if (layer >= NR_LAYERS || !task_wanted(id))
		return 0;
	if (use_task_storage) {
		ts = bpf_task_storage_get(&task_starts, bpf_get_current_task_btf(),
					  (void *)&fresh_slots, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts) {
			count_drop(DROP_THREAD_MAP_FULL);
			return 0;
		}
		goto have_slot;
	}
	ts = bpf_map_lookup_elem(&thread_starts, &tid);
	if (!ts) {
		bpf_map_update_elem(&thread_starts, &tid, &fresh_slots, BPF_NOEXIST);
		ts = bpf_map_lookup_elem(&thread_starts, &tid);
		if (!ts) {
			count_drop(DROP_THREAD_MAP_FULL);
			return 0;
		}
	}
have_slot:
	if (nest && ts->depth[layer]) {
		ts->depth[layer]++;
		return 0;
	}
	/* Only an outermost call asks: its exit must find what its entry did. */
	if (want_args && !call_args_read(ts, ctx, method, args, layer, op))
		return 0;
	if (nest)
		ts->depth[layer] = 1;
	now = bpf_ktime_get_ns();
	ts->start_ns[layer] = now;
	if (split_calls) {
		parts_enter(ts, layer, now);
	} else if (events_on && layer == root_layer) {
		ts->blk_requests = 0;
		ts->blk_bytes = 0;
	}
	return 0;
}

/* A call of the root layer ended: its parts, per op. */
static __always_inline void record_call(struct thread_starts *ts, __u32 op, __u64 delta)
{
	struct call_totals *t = bpf_map_lookup_elem(&call_ops, &op);

	if (!t || op >= NR_FS_OPS)
		return;
	t->count++;
	t->total_ns += delta;
	t->blk_requests += ts->blk_requests;
	t->blk_bytes += ts->blk_bytes;
	for (__u32 p = 0; p < NR_PARTS; p++)
		if (ts->part_ns[p])
			hist_add(&call_parts, op * NR_PARTS + p, ts->part_ns[p]);
}

/*
 * -P: the same per process, in the breakdown map, under cell indexes past
 * the cells': CALL_PART_INDEX(op, part) per part (calls with the part > 0)
 * and CALL_TOTAL_INDEX(op) for the calls themselves.
 */
static __always_inline void record_call_by_pid(struct thread_starts *ts, __u32 op, __u64 delta,
					       struct breakdown_key *key, const char *comm)
{
	if (op >= NR_FS_OPS)
		return;
	key->cell_idx = CALL_TOTAL_INDEX(op);
	record_breakdown_or(DROP_PARTS_MAP_FULL, key, comm, delta);
	for (__u32 p = 0; p < NR_PARTS; p++) {
		if (!ts->part_ns[p])
			continue;
		key->cell_idx = CALL_PART_INDEX(op, p);
		record_breakdown_or(DROP_PARTS_MAP_FULL, key, comm, ts->part_ns[p]);
	}
}

/* Room for an event in the ring buffer; no room is counted, never silent. */
static __always_inline void *event_reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e)
		count_drop(DROP_EVENT_LOST);
	return e;
}

/*
 * --full-path: the names on the way from the file up to the root of the
 * mount tree, crossing mounts (struct mount is the kernel's own, read with
 * CO-RE). path[i] is what step i passed: the file's own name first, then
 * each directory; a step that crossed from a mount's root to where it is
 * mounted passes no name (""). Each step writes its own slot, so the
 * verifier sees one state per step, whatever the way went.
 */
static __always_inline void fill_path(struct call_path_event *pe, struct file *f)
{
	__u64 mnt_off = bpf_core_field_offset(struct mount, mnt);
	struct dentry *d = BPF_CORE_READ(f, f_path.dentry), *parent;
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct mount *m = (struct mount *)((__u64)vm - mnt_off), *up;

	if (!d || !vm) {
		pe->call.flags |= EVF_PATH_NONE;
		return;
	}
	for (int i = 0; i < PATH_DEPTH; i++) {
		pe->path[i][0] = '\0';
		if (d == BPF_CORE_READ(vm, mnt_root)) {
			up = BPF_CORE_READ(m, mnt_parent);
			if (up == m || !up) {
				pe->call.path_depth = (__u8)i; /* the root */
				return;
			}
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = up;
			vm = (struct vfsmount *)((__u64)m + mnt_off);
			continue;
		}
		parent = BPF_CORE_READ(d, d_parent);
		if (parent == d || !parent) {
			/* the root of a tree no mount shows (a pipe, a socket) */
			pe->call.path_depth = (__u8)i;
			pe->call.flags |= EVF_PATH_NONE;
			return;
		}
		bpf_probe_read_kernel_str(pe->path[i], FILE_NAME_LEN,
					  BPF_CORE_READ(d, d_name.name));
		d = parent;
	}
	pe->call.path_depth = PATH_DEPTH;
	pe->call.flags |= EVF_PATH_CUT;
}

/* A call of the root layer ended, at least slower_ns long (or --trace). */
static __always_inline void emit_call(struct thread_starts *ts, __u32 layer, __u32 op, __u64 start,
				      __u64 now, __s64 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct call_event *e;
	struct call_blk *cb;
	struct file *f;

	if (full_path)
		e = event_reserve(sizeof(struct call_path_event));
	else
		e = event_reserve(sizeof(struct call_event));
	if (!e)
		return;
	e->kind = EV_CALL;
	e->layer = (__u8)layer;
	e->op = (__u8)op;
	e->path_depth = 0;
	e->flags = 0;
	e->pid = id >> 32;
	e->tid = tid;
	e->call_ns = start;
	e->end_ns = now;
	e->ret = ret;
	e->pos = ts->pos;
	e->bytes = ts->bytes;
	for (__u32 p = 0; p < NR_PARTS; p++)
		e->part_ns[p] = split_calls ? ts->part_ns[p] : 0;
	e->blk_requests = ts->blk_requests;
	e->blk_bytes = ts->blk_bytes;
	e->blk_max_ns = 0;
	e->blk_max_dev = 0;
	cb = ts->blk_requests ? bpf_map_lookup_elem(&call_blk, &tid) : NULL;
	if (cb && cb->call_ns == start) {
		e->blk_max_ns = cb->max_ns;
		e->blk_max_dev = cb->dev;
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	f = (struct file *)ts->file;
	e->file[0] = '\0';
	e->ino = 0;
	e->dev = 0;
	if (f) {
		struct inode *inode = BPF_CORE_READ(f, f_inode);

		bpf_probe_read_kernel_str(e->file, sizeof(e->file),
					  BPF_CORE_READ(f, f_path.dentry, d_name.name));
		e->ino = BPF_CORE_READ(inode, i_ino);
		e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	} else {
		e->flags |= EVF_NO_FILE;
	}
	if (full_path) {
		if (f)
			fill_path((struct call_path_event *)e, f);
		else
			e->flags |= EVF_PATH_NONE;
	}
	bpf_ringbuf_submit(e, 0);
}

/* --trace: a layer's call, or an off-CPU wait, inside the root's call. */
static __always_inline void emit_slice(__u32 tid, __u64 call_ns, __u32 what, __u32 op, __u64 start,
				       __u64 end)
{
	struct slice_event *e;

	if (!call_ns)
		return;
	e = event_reserve(sizeof(*e));
	if (!e)
		return;
	e->kind = EV_SLICE;
	e->what = (__u8)what;
	e->op = (__u8)op;
	e->pad = 0;
	e->tid = tid;
	e->call_ns = call_ns;
	e->start_ns = start;
	e->end_ns = end;
	bpf_ringbuf_submit(e, 0);
}

/*
 * An open(2) ends: its file is the descriptor it returned, found once here
 * for both --file and its event. Under --file the open is decided on that
 * file: returns true when it is to be left out.
 */
static __always_inline bool open_exit(struct thread_starts *ts, __s64 ret)
{
	struct file *f = ret >= 0 ? file_of_fd((__u64)ret) : NULL;

	ts->file = (__u64)f;
	if (!nr_files || !ts->file_pending)
		return false;
	ts->file_pending = 0;
	return !f || !inode_wanted(BPF_CORE_READ(f, f_inode));
}

static __always_inline int layer_exit(__u32 layer, __u32 op, bool nest, void *ctx, int method,
				      int args)
{
	bool need_id = nr_targ_tgids || !use_task_storage || by_pid;
	__u64 id = need_id ? bpf_get_current_pid_tgid() : 0;
	__u32 tid = (__u32)id;
	struct thread_starts *ts;
	__u64 start, delta, now;
	bool root_done, is_root;
	__s64 ret = 0;

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
	is_root = layer == root_layer;
	if (want_args && (nr_files || (events_on && is_root)))
		ret = ret_of(ctx, method, args);
	if (want_args && layer == LAYER_SYSCALL && op == FSOP_OPEN && open_exit(ts, ret)) {
		/* Closed as if it never was: nothing recorded, the parts reset. */
		ts->start_ns[layer] = 0;
		if (split_calls)
			parts_exit(ts, layer, now);
		return 0;
	}
	if (trace_on && !is_root) {
		__u64 call_ns = call_ns_of(ts);

		if (call_ns && call_ns <= start)
			emit_slice(tid ? tid : (__u32)bpf_get_current_pid_tgid(), call_ns, layer,
				   op, start, now);
	}
	ts->start_ns[layer] = 0;
	delta = now - start;
	record(layer, op, delta);
	/* The root's parts sum to delta: both run from its start to now. */
	root_done = split_calls && parts_exit(ts, layer, now) && is_root;
	if (root_done)
		record_call(ts, op, delta);
	if (events_on && is_root && (delta >= slower_ns || trace_on))
		emit_call(ts, layer, op, start, now, ret);
	if (by_pid) {
		struct breakdown_key key = { .cell_idx = CELL_INDEX(layer, op), .tgid = id >> 32 };
		char comm[COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		record_breakdown(&key, comm, delta);
		if (root_done)
			record_call_by_pid(ts, op, delta, &key, comm);
	}
	return 0;
}

/* Does the layer nest (cells.def)? A constant wherever layer is one. */
static __always_inline bool layer_nests(__u32 layer)
{
	switch (layer) {
#define LAYER(id, name, nests)                                                                     \
	case id:                                                                                   \
		return nests;
#include "cells.def"
	}
	return false;
}

/*
 * The programs of every cell target, from the table of cells. A fentry or
 * kprobe program serves one function, bound by user space before load; the
 * names say what each serves (src/progtab.c resolves them from the
 * skeleton, so a program missing here fails the build there):
 *   se_/sx_<syscall>     syscalls:sys_enter_/sys_exit_<syscall>
 *   fe_/fx_sys_<syscall> fentry/fexit on the arch's syscall wrapper
 *   kp_/kr_sys_<syscall> kprobe/kretprobe on the same
 *   fe_/fx_<func>        fentry/fexit on a kernel function
 *   kp_/kr_<func>        kprobe/kretprobe on the same
 *   tp_<enter>/tp_<exit> a cell's own tracepoint pair
 */
#define ENTRY_EXIT(sec_in, in, sec_out, out, layer, op, method, args)                              \
	SEC(sec_in)                                                                                \
	int in(void *ctx)                                                                          \
	{                                                                                          \
		return layer_enter(layer, op, layer_nests(layer), ctx, method, args);              \
	}                                                                                          \
	SEC(sec_out)                                                                               \
	int out(void *ctx)                                                                         \
	{                                                                                          \
		return layer_exit(layer, op, layer_nests(layer), ctx, method, args);               \
	}

#define SYSCALL(op, name, args)                                                                    \
	ENTRY_EXIT("tracepoint/syscalls/sys_enter_" #name, se_##name,                              \
		   "tracepoint/syscalls/sys_exit_" #name, sx_##name, LAYER_SYSCALL, op, AM_SYS_TP, \
		   args)                                                                           \
	ENTRY_EXIT("fentry", fe_sys_##name, "fexit", fx_sys_##name, LAYER_SYSCALL, op,             \
		   AM_SYS_FENTRY, args)                                                            \
	ENTRY_EXIT("kprobe", kp_sys_##name, "kretprobe", kr_sys_##name, LAYER_SYSCALL, op,         \
		   AM_SYS_KPROBE, args)
#define KFUNC(layer, op, func, args)                                                               \
	ENTRY_EXIT("fentry", fe_##func, "fexit", fx_##func, layer, op, AM_FENTRY, args)            \
	ENTRY_EXIT("kprobe", kp_##func, "kretprobe", kr_##func, layer, op, AM_KPROBE, args)
/* The record names the file by device and inode: --file filters on them. */
#define CELL_TP(layer, op, category, enter, exit)                                                  \
	SEC("tracepoint/" #category "/" #enter)                                                    \
	int tp_##enter(struct trace_event_raw_##enter *ctx)                                        \
	{                                                                                          \
		if (nr_files && !file_id_wanted(ctx->dev, ctx->ino))                               \
			return 0;                                                                  \
		return layer_enter(layer, op, layer_nests(layer), ctx, AM_CELL_TP,                 \
				   ARGS_TP_DEV_INO);                                               \
	}                                                                                          \
	SEC("tracepoint/" #category "/" #exit)                                                     \
	int tp_##exit(struct trace_event_raw_##exit *ctx)                                          \
	{                                                                                          \
		return layer_exit(layer, op, layer_nests(layer), ctx, AM_CELL_TP,                  \
				  ARGS_TP_DEV_INO);                                                \
	}
#include "cells.def"

/* ---- system call layer: the raw sys_enter/sys_exit tracepoints ---- */

/*
 * Two programs see every system call and keep those of the table by
 * number: fewer links than a tracepoint pair per syscall (attach and detach
 * are per link), and a cheaper dispatch per traced call. sysnr_op[nr] is
 * the cell's op + 1, 0 for a syscall we do not trace; user space fills it
 * from the build architecture's numbers (bpf/cells.def); sysnr_args[nr]
 * says where the call's file is in its arguments (enum call_args).
 */
const volatile __u8 sysnr_op[SYSNR_SLOTS];
const volatile __u8 sysnr_args[SYSNR_SLOTS];

/*
 * A 32-bit task on a 64-bit kernel makes its system calls with the other
 * ABI's numbers (ia32 read is 3, x86-64's close): they are left out, as the
 * syscalls:sys_enter_* tracepoints leave them out on x86 (the kernel's
 * ARCH_TRACE_IGNORE_COMPAT_SYSCALLS). TS_COMPAT: arch/x86/include/asm/
 * thread_info.h. x32 calls carry __X32_SYSCALL_BIT and miss the table.
 */
#define X86_TS_COMPAT 0x0002

static __always_inline bool compat_syscall(bool btf)
{
#if defined(__TARGET_ARCH_x86)
	if (btf)
		return bpf_get_current_task_btf()->thread_info.status & X86_TS_COMPAT;
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), thread_info.status) &
	       X86_TS_COMPAT;
#else
	return false; /* arm64 compat tasks: not traced by this source yet */
#endif
}

/* The number of the system call a sys_exit reports, from its registers. */
static __always_inline __u64 exit_syscall_nr(struct pt_regs *regs, bool btf)
{
#if defined(__TARGET_ARCH_x86)
	return btf ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return btf ? regs->syscallno : BPF_CORE_READ(regs, syscallno);
#else
#error "the raw syscall source needs this architecture's syscall number register"
#endif
}

/* ctx: (regs, id) at entry, (regs, ret) at exit, in both program types. */
static __always_inline int raw_sys_enter(void *ctx, __u64 nr, bool btf)
{
	if (nr >= SYSNR_SLOTS || !sysnr_op[nr] || compat_syscall(btf))
		return 0;
	return layer_enter(LAYER_SYSCALL, sysnr_op[nr] - 1, false, ctx, AM_SYS_RAW, sysnr_args[nr]);
}

static __always_inline int raw_sys_exit(void *ctx, struct pt_regs *regs, bool btf)
{
	__u64 nr = exit_syscall_nr(regs, btf);
	__u32 op;

	/* Compat exits too: an execve of a 32-bit binary returns as one. */
	if (nr >= SYSNR_SLOTS || !sysnr_op[nr] || compat_syscall(btf))
		return 0;
	op = sysnr_op[nr] - 1;
	return layer_exit(LAYER_SYSCALL, op, false, ctx, AM_SYS_RAW, sysnr_args[nr]);
}

SEC("tp_btf/sys_enter")
int tb_sys_enter(__u64 *ctx)
{
	return raw_sys_enter(ctx, ctx[1], true);
}

SEC("tp_btf/sys_exit")
int tb_sys_exit(__u64 *ctx)
{
	return raw_sys_exit(ctx, (struct pt_regs *)ctx[0], true);
}

SEC("raw_tp/sys_enter")
int rt_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return raw_sys_enter(ctx, ctx->args[1], false);
}

SEC("raw_tp/sys_exit")
int rt_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return raw_sys_exit(ctx, (struct pt_regs *)ctx->args[0], false);
}

/* ---- off CPU: sched_switch, for the parts of a call ---- */

/* Before 5.14 the task's state was "long state" ("sched: Change
 * task_struct::state", 5.14). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

#define KTASK_RUNNING 0x0000 /* include/linux/sched.h */

/* Why a thread leaves the CPU: preempted (still runnable), waiting for I/O
 * (io_schedule sets in_iowait), or any other sleep. */
static __always_inline __u32 offcpu_part(struct task_struct *prev, bool preempt, bool btf)
{
	long state;

	if (bpf_core_field_exists(((struct task_struct___pre514 *)0)->state))
		state = BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
	else
		state = btf ? prev->__state : BPF_CORE_READ(prev, __state);
	if (preempt || state == KTASK_RUNNING)
		return PART_RUNQUEUE;
	if (btf ? BPF_CORE_READ_BITFIELD(prev, in_iowait)
		: BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		return PART_IO_WAIT;
	return PART_BLOCKED;
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

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	struct thread_starts *ts = slots_of(prev, btf);
	__u64 now = 0;

	if (ts && parts_open(ts)) {
		now = bpf_ktime_get_ns();
		parts_switch_out(ts, now, offcpu_part(prev, preempt, btf));
	}
	ts = slots_of(next, btf);
	if (ts && parts_open(ts) && ts->off) {
		if (!now)
			now = bpf_ktime_get_ns();
		if (trace_on)
			emit_slice(btf ? next->pid : BPF_CORE_READ(next, pid), call_ns_of(ts),
				   ts->off - 1, 0, ts->last_ns, now);
		parts_switch_in(ts, now);
	}
	return 0;
}

/* A sleeping thread is woken: the rest of its wait is for a CPU. */
static __always_inline int on_wakeup(struct task_struct *task, bool btf)
{
	struct thread_starts *ts = slots_of(task, btf);
	__u64 now;

	if (!ts || !parts_open(ts) || !ts->off || ts->off == PART_RUNQUEUE + 1)
		return 0;
	now = bpf_ktime_get_ns();
	if (trace_on)
		emit_slice(btf ? task->pid : BPF_CORE_READ(task, pid), call_ns_of(ts), ts->off - 1,
			   0, ts->last_ns, now);
	parts_wakeup(ts, now);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int tb_wakeup(__u64 *ctx)
{
	return on_wakeup((struct task_struct *)ctx[0], true);
}

SEC("raw_tp/sched_wakeup")
int rt_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((struct task_struct *)ctx->args[0], false);
}

SEC("tp_btf/sched_switch")
int tb_switch(__u64 *ctx)
{
	return on_switch((bool)ctx[0], (struct task_struct *)ctx[1], (struct task_struct *)ctx[2],
			 true);
}

SEC("raw_tp/sched_switch")
int rt_switch(struct bpf_raw_tracepoint_args *ctx)
{
	return on_switch((bool)ctx->args[0], (struct task_struct *)ctx->args[1],
			 (struct task_struct *)ctx->args[2], false);
}

/* ---- following the children of traced processes ---- */

static __always_inline int on_fork(__u32 parent_tgid, __u32 child_tgid)
{
	__u8 one = 1;
	long err;

	/* A new thread of a traced process is traced already. */
	if (parent_tgid == child_tgid || !tgid_traced(parent_tgid))
		return 0;
	err = bpf_map_update_elem(&followed, &child_tgid, &one, BPF_NOEXIST);
	if (err && err != -EEXIST)
		count_drop(DROP_PROCESS_SET_FULL);
	return 0;
}

/* The last thread of a process is gone (signal->live reached 0 before this
 * tracepoint in do_exit()): forget it, its pid may be reused. */
static __always_inline int on_exit(__u32 tgid, int live)
{
	if (!live)
		bpf_map_delete_elem(&followed, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int tb_fork(__u64 *ctx)
{
	struct task_struct *parent = (void *)ctx[0], *child = (void *)ctx[1];

	return on_fork(parent->tgid, child->tgid);
}

SEC("tp_btf/sched_process_exit")
int tb_exit(__u64 *ctx)
{
	struct task_struct *task = (void *)ctx[0];

	return on_exit(task->tgid, task->signal->live.counter);
}

SEC("raw_tp/sched_process_fork")
int rt_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (void *)ctx->args[0], *child = (void *)ctx->args[1];

	return on_fork(BPF_CORE_READ(parent, tgid), BPF_CORE_READ(child, tgid));
}

SEC("raw_tp/sched_process_exit")
int rt_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (void *)ctx->args[0];

	return on_exit(BPF_CORE_READ(task, tgid), BPF_CORE_READ(task, signal, live.counter));
}

/* ---- block layer ---- */

/* Before Linux 5.17 the disk hung off the request itself ("block: remove
 * the ->rq_disk field in struct request", 5.17). */
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
	switch (cmd_flags & KREQ_OP_MASK) {
	case KREQ_OP_READ:
		return BLKOP_READ;
	case KREQ_OP_WRITE:
		return BLKOP_WRITE;
	case KREQ_OP_FLUSH:
		return BLKOP_FLUSH;
	case KREQ_OP_DISCARD:
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

/* The current thread's slots when a call of the root layer is open in it. */
static __always_inline struct thread_starts *current_call(bool btf)
{
	struct task_struct *task =
	    btf ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();
	struct thread_starts *ts = slots_of(task, btf);

	if (!ts)
		return NULL;
	if (split_calls)
		return parts_open(ts) ? ts : NULL;
	return call_ns_of(ts) ? ts : NULL;
}

/* A request started by a thread inside a traced call: the call's block I/O. */
static __always_inline void count_call_request(struct thread_starts *ts, struct request *rq,
					       bool btf)
{
	ts->blk_requests++;
	ts->blk_bytes += btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
}

/*
 * Records a request's first sighting. The key (the struct request) may still
 * hold an entry: the same request started again after a requeue (same
 * allocation time: it replaces its own entry), or a new request in a struct
 * whose last use never reached block_rq_complete (the kernel completed it
 * without the tracepoint reporting it to us): that one is counted, never
 * silently replaced.
 */
static __always_inline void rq_record(__u64 key, struct rq_start *v)
{
	struct rq_start *old;
	long err;

	err = bpf_map_update_elem(&rq_starts, &key, v, BPF_NOEXIST);
	if (err == -EEXIST) {
		old = bpf_map_lookup_elem(&rq_starts, &key);
		if (old && !(old->alloc_ns && old->alloc_ns == v->alloc_ns))
			count_drop(DROP_RQ_COMPLETION_MISSED);
		err = bpf_map_update_elem(&rq_starts, &key, v, BPF_ANY);
	}
	if (err)
		count_drop(DROP_RQ_MAP_FULL);
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
	struct thread_starts *call = NULL;

	if (wanted && (split_calls || events_on || nr_files))
		call = current_call(btf);
	/* --file: only requests of calls on those files (an open is not yet). */
	if (nr_files && (!call || call->file_pending))
		wanted = false;
	if (bpf_core_field_exists(rq->start_time_ns))
		v.alloc_ns = btf ? rq->start_time_ns : BPF_CORE_READ(rq, start_time_ns);

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
		rq_record(key, &v);
		return 0;
	}
	if (by_pid)
		bpf_get_current_comm(v.comm, sizeof(v.comm));
	if (call && (split_calls || events_on))
		count_call_request(call, rq, btf);
	if (call && events_on) {
		v.tid = (__u32)id;
		v.call_ns = call_ns_of(call);
	}
	v.origin_ns = now;
	v.issue_ns = issue_ns;
	v.tgid = id >> 32;
	rq_record(key, &v);
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

/*
 * A request of a call completed (events): the slowest of the call so far,
 * for its event, and with --trace the request itself.
 */
static __always_inline void call_request_done(struct request *rq, struct rq_start *v, __u64 start,
					      __u64 delta, __u32 op, int error, __u32 nr_bytes,
					      bool btf)
{
	__u32 dev = v->dev ? v->dev : rq_dev(rq, btf);
	struct call_blk *cb = bpf_map_lookup_elem(&call_blk, &v->tid);
	struct request_event *e;

	if (cb && cb->call_ns == v->call_ns) {
		if (delta > cb->max_ns) {
			cb->max_ns = delta;
			cb->dev = dev;
		}
	} else {
		struct call_blk fresh = { .call_ns = v->call_ns, .max_ns = delta, .dev = dev };

		bpf_map_update_elem(&call_blk, &v->tid, &fresh, BPF_ANY);
	}
	if (!trace_on)
		return;
	e = event_reserve(sizeof(*e));
	if (!e)
		return;
	e->kind = EV_REQUEST;
	e->op = (__u8)op;
	e->error = error ? 1 : 0;
	e->pad = 0;
	e->tid = v->tid;
	e->pid = v->tgid;
	e->dev = dev;
	e->call_ns = v->call_ns;
	e->start_ns = start;
	e->end_ns = start + delta;
	e->bytes = nr_bytes;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int blk_complete(struct request *rq, int error, __u32 nr_bytes, bool btf)
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

		if (error)
			record_error(LAYER_BLK, op, delta);
		else
			record(LAYER_BLK, op, delta);
		if (events_on && v->call_ns)
			call_request_done(rq, v, start, delta, op, error, nr_bytes, btf);
		if (by_pid || by_disk || by_flags) {
			struct breakdown_key k = {
				.cell_idx = CELL_INDEX(LAYER_BLK, op),
				.tgid = by_pid ? v->tgid : 0,
				.dev = by_disk ? v->dev : 0,
				.flags = by_flags ? rq_flags(cmd_flags) : 0,
			};

			if (error)
				record_breakdown_error(&k, by_pid ? v->comm : NULL, delta);
			else
				record_breakdown(&k, by_pid ? v->comm : NULL, delta);
		}
	}
	bpf_map_delete_elem(&rq_starts, &key);
	return 0;
}

/* Before Linux 5.11 insert and issue had the queue as their first argument
 * ("block: remove the request_queue to argument request based
 * tracepoints", 5.11). */
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
	/* (rq, blk_status_t error, nr_bytes): any status but 0 is a failure. */
	return blk_complete((struct request *)ctx[0], (__u8)ctx[1], (__u32)ctx[2], true);
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
	return blk_complete((struct request *)ctx->args[0], (__u8)ctx->args[1], (__u32)ctx->args[2],
			    false);
}
