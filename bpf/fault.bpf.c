// SPDX-License-Identifier: GPL-2.0
/*
 * The fault layer: major page faults, the I/O a thread does by touching
 * memory (a file mapping's page read in, anonymous memory back from swap),
 * each timed as a call of its thread.
 *
 * handle_mm_fault(vma, address, flags, regs) (mm/memory.c, the same
 * prototype in Debian's 6.1 and 6.12 and in 6.18) handles every fault on
 * user memory: the arch's fault handler calls it for a user access, and
 * get_user_pages (a read() into a mapped buffer, O_DIRECT) for the kernel's.
 * Where it must wait for a page under I/O it may drop the mmap lock and
 * return VM_FAULT_RETRY; its caller calls it again, with FAULT_FLAG_TRIED
 * (or, on 6.4+, from the per-vma lock path to the mmap lock path). So a
 * fault is the thread's calls for one page until one returns without
 * VM_FAULT_RETRY, and it is major exactly where mm_account_fault(), at
 * the end of that call, counts current->maj_flt: no VM_FAULT_ERROR, and
 * VM_FAULT_MAJOR in the return or FAULT_FLAG_TRIED in the flags (6.1 and
 * 6.12 alike). Its ops: file_read, file_write (FAULT_FLAG_WRITE on a file
 * mapping: the page read before it is written), swapin (anonymous), other
 * (anonymous under userfaultfd: the wait for its handler).
 *
 * Minor faults (far more frequent) pay an entry in faults and its delete;
 * they are counted nowhere. A major fault is an event (--slower, --trace)
 * of the fault layer: its file and the page's offset in it, its block
 * requests.
 *
 * Included by iostackbreak.bpf.c before blk.bpf.c (one compilation unit).
 */

/* Block requests a faulting thread starts are its fault's (with blk). */
const volatile bool fault_blk;
/* log2 of the page size, for a fault's page offset in its file. */
const volatile __u32 fault_page_shift = 12;

/* mm_types.h: VM_FAULT_ERROR is a macro (no BTF). */
#define FAULT_ERROR_MASK                                                                           \
	(VM_FAULT_OOM | VM_FAULT_SIGBUS | VM_FAULT_SIGSEGV | VM_FAULT_HWPOISON |                   \
	 VM_FAULT_HWPOISON_LARGE | VM_FAULT_FALLBACK)

/* Per thread: its fault in progress. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct fault_start);
} faults SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_FAULT_OPS);
	__type(key, __u32);
	__type(value, struct fault_totals);
} fault_ops SEC(".maps");

/* The fault this thread is in (traced), NULL: none. Called by the block
 * layer where a request starts. */
static __always_inline struct fault_start *fault_issuing(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!fault_blk)
		return NULL;
	return bpf_map_lookup_elem(&faults, &tid);
}

/* What the fault is on, at its first call, while the vma is sure to be
 * there. */
static __always_inline void fault_target(struct vm_area_struct *vma, __u64 address, __u32 flags,
					 struct fault_start *v)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);

	v->file = (__u64)f;
	v->file_ok = 1;
	if (f) {
		struct inode *inode = BPF_CORE_READ(f, f_inode);
		__u64 start = BPF_CORE_READ(vma, vm_start);

		v->op = flags & FAULT_FLAG_WRITE ? FOP_FILE_WRITE : FOP_FILE_READ;
		v->pgoff = ((address - start) >> fault_page_shift) + BPF_CORE_READ(vma, vm_pgoff);
		v->ino = BPF_CORE_READ(inode, i_ino);
		v->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		if (nr_files)
			v->file_ok = file_id_wanted(v->dev, v->ino);
		return;
	}
	v->op = FOP_SWAPIN;
	if (bpf_core_field_exists(vma->vm_userfaultfd_ctx) &&
	    BPF_CORE_READ(vma, vm_userfaultfd_ctx.ctx))
		v->op = FOP_OTHER;
	/* --file: a swap-in is on no file. */
	if (nr_files)
		v->file_ok = 0;
}

static __always_inline int fault_enter(struct vm_area_struct *vma, __u64 address, __u32 flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct fault_start *v, fresh = {};
	__u64 page = address & ~((1ULL << fault_page_shift) - 1);

	if (!task_wanted(id))
		return 0;
	v = bpf_map_lookup_elem(&faults, &tid);
	if (v) {
		/* Its retry after VM_FAULT_RETRY: the same fault goes on. */
		if (v->address == page) {
			v->flags = flags;
			return 0;
		}
		count_drop(DROP_FAULT_ABANDONED);
	}
	fresh.address = page;
	fresh.flags = flags;
	fault_target(vma, address, flags, &fresh);
	if (per_cgroup)
		fresh.cgid = bpf_get_current_cgroup_id();
	fresh.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&faults, &tid, &fresh, BPF_ANY))
		count_drop(DROP_FAULT_MAP_FULL);
	return 0;
}

/* A major fault ended at end: its cell, totals, breakdowns, event. */
static __always_inline void fault_record(struct fault_start *v, __u64 end, __u64 id)
{
	__u32 op = v->op < NR_FAULT_OPS ? v->op : FOP_OTHER;
	__u64 delta = end > v->start_ns ? end - v->start_ns : 0;
	struct fault_totals *t = bpf_map_lookup_elem(&fault_ops, &op);

	record(LAYER_FAULT, op, delta);
	if (t) {
		t->count++;
		t->total_ns += delta;
		t->blk_requests += v->blk_requests;
		t->blk_bytes += v->blk_bytes;
	}
	if (per_process || per_cgroup) {
		struct breakdown_key k = { .cell_idx = CELL_INDEX(LAYER_FAULT, op),
					   .tgid = per_process ? id >> 32 : 0,
					   .cgid = per_cgroup ? v->cgid : 0 };
		char comm[COMM_LEN] = {};

		if (per_process)
			bpf_get_current_comm(comm, sizeof(comm));
		if (per_cgroup)
			cgroup_path_note(v->cgid);
		record_breakdown(&k, per_process ? comm : NULL, delta);
	}
}

/* --slower, --trace: a major fault ended, as a call event of its layer. */
static __always_inline void emit_fault(const struct fault_start *v, __u64 end, __u64 id, __u32 ret)
{
	char comm[COMM_LEN] = {};
	struct request_facts r = {
		.layer = LAYER_FAULT,
		.op = v->op < NR_FAULT_OPS ? v->op : FOP_OTHER,
		.pid = id >> 32,
		.tid = (__u32)id,
		.start_ns = v->start_ns,
		.end_ns = end,
		.ret = ret,
		.pos = v->file ? v->pgoff << fault_page_shift : NO_POS,
		.bytes = v->file ? 1ULL << fault_page_shift : NO_POS,
		.blk_requests = v->blk_requests,
		.blk_bytes = v->blk_bytes,
		.comm = comm,
		.file = (struct file *)v->file,
	};

	bpf_get_current_comm(comm, sizeof(comm));
	emit_request(&r);
}

static __always_inline int fault_exit(__u32 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct fault_start *v;
	__u64 now;

	if (ret & VM_FAULT_RETRY)
		return 0; /* called again, or given up (fault_enter sees it) */
	v = bpf_map_lookup_elem(&faults, &tid);
	if (!v)
		return 0;
	/* mm_account_fault()'s test of a major fault. */
	if (!(ret & FAULT_ERROR_MASK) && ((ret & VM_FAULT_MAJOR) || (v->flags & FAULT_FLAG_TRIED)) &&
	    v->file_ok) {
		now = bpf_ktime_get_ns();
		fault_record(v, now, id);
		if (events_on && (now - v->start_ns >= slower_ns || trace_on))
			emit_fault(v, now, id, ret);
	}
	bpf_map_delete_elem(&faults, &tid);
	return 0;
}

SEC("fentry/handle_mm_fault")
int BPF_PROG(fe_fault, struct vm_area_struct *vma, unsigned long address, unsigned int flags)
{
	return fault_enter(vma, address, flags);
}

SEC("fexit/handle_mm_fault")
int BPF_PROG(fx_fault, struct vm_area_struct *vma, unsigned long address, unsigned int flags,
	     struct pt_regs *regs, vm_fault_t ret)
{
	return fault_exit(ret);
}

SEC("kprobe/handle_mm_fault")
int BPF_KPROBE(kp_fault, struct vm_area_struct *vma, unsigned long address, unsigned int flags)
{
	return fault_enter(vma, address, flags);
}

/* No arguments at return: the flags were kept at entry. */
SEC("kretprobe/handle_mm_fault")
int BPF_KRETPROBE(kr_fault, unsigned int ret)
{
	return fault_exit(ret);
}
