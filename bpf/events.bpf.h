/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events to user space (--slower, --trace) through the events ring buffer:
 * a call of the root layer as it ends, and with --trace the slices of
 * layers and waits within it. Owns the maps events and call_blk; a full
 * ring buffer is counted (DROP_EVENT_LOST).
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef EVENTS_BPF_H
#define EVENTS_BPF_H

/*
 * Calls of root_layer at least slower_ns long are sent to user space
 * (events_on); trace_on adds the slices of layers and waits within calls,
 * and the block requests calls submitted; full_path walks each call's path.
 */
const volatile bool events_on;
const volatile bool trace_on;
const volatile bool full_path;
const volatile __u64 slower_ns;
/* --record: every block request counted is sent too (blk.bpf.c), with
 * what its cell and breakdowns took, so that user space can count again. */
const volatile bool record_on;
/* Events with the bio layer: each call's bios by device level. */
const volatile bool bio_calls;
#ifdef BENCH_WITHOUT_OPTIONS
/* bench/sysprog.py's build without --slower and --trace: the knobs stay
 * for user space to set, the code reading them is compiled out. */
#define events_on false
#define trace_on false
#define bio_calls false
#define record_on false
#endif

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

/* Each thread's current call's bios by device level (bio.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct call_bio);
} call_bio SEC(".maps");

/* Room for an event in the ring buffer; no room is counted, never silent. */
static __always_inline void *event_reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e)
		count_drop(DROP_EVENT_LOST);
	return e;
}

/*
 * What the event of a request (io_uring, aio) says, as its layer knows it:
 * a call event of that layer on its submitter's thread, part_ns[] its
 * parts by the layer's own enum (nparts of them; 0: not split).
 */
#define REQUEST_PARTS NR_URING_PARTS
_Static_assert(NR_URING_PARTS == NR_AIO_PARTS && REQUEST_PARTS <= NR_PARTS,
	       "a request's parts fit a call event's");
struct request_facts {
	__u8 layer, op;
	__u32 opcode;
	__u32 pid, tid;
	__u64 start_ns, end_ns;
	__s64 ret;
	__u64 pos, bytes; /* NO_POS: none */
	const __u64 *parts;
	__u32 nparts;
	__u32 blk_requests, blk_flushes, blk_max_dev;
	__u64 blk_bytes, blk_max_ns;
	const char *comm;
	struct file *file; /* NULL: none to name */
};

static __always_inline void event_file(struct call_event *e, struct file *f);

/* --slower, --trace: a request ended, as its layer's call event. */
static __always_inline void emit_request(const struct request_facts *r)
{
	struct call_event *e = event_reserve(sizeof(struct call_event));

	if (!e)
		return;
	e->kind = EV_CALL;
	e->layer = r->layer;
	e->op = r->op;
	e->path_depth = 0;
	e->flags = 0;
	e->pid = r->pid;
	e->tid = r->tid;
	e->call_ns = r->start_ns;
	e->end_ns = r->end_ns;
	e->ret = r->ret;
	e->pos = r->pos;
	e->bytes = r->bytes;
	/* The bound the parts' arrays share, a constant: a part past it is
	 * never read, whatever nparts the verifier sees. */
	for (__u32 p = 0; p < NR_PARTS; p++)
		e->part_ns[p] = p < REQUEST_PARTS && p < r->nparts ? r->parts[p] : 0;
	e->blk_requests = r->blk_requests;
	e->blk_flushes = r->blk_flushes;
	e->parts_mask = 0;
	e->throttle_pauses = 0;
	e->blk_bytes = r->blk_bytes;
	e->blk_max_ns = r->blk_max_ns;
	e->blk_max_dev = r->blk_max_dev;
	e->opcode = r->opcode;
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
	/* A request's bios are not split by device level (bio.bpf.c). */
	__builtin_memset(&e->bio, 0, sizeof(e->bio));
	__builtin_memcpy(e->comm, r->comm, COMM_LEN);
	event_file(e, r->file);
	bpf_ringbuf_submit(e, 0);
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

/* An event's file: its name, inode and device, or EVF_NO_FILE. */
static __always_inline void event_file(struct call_event *e, struct file *f)
{
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
}

/* Is the lock at addr the inode lock of file f (inode_lock() is a
 * down_write of its inode's i_rwsem)? */
static __always_inline bool lock_is_inode(struct file *f, __u64 addr)
{
	return f && addr &&
	       addr ==
		   (__u64)BPF_CORE_READ(f, f_inode) + bpf_core_field_offset(struct inode, i_rwsem);
}

/* A call of the root layer ended, at least slower_ns long (or --trace). */
static __always_inline void emit_call(struct thread_starts *ts, __u32 layer, __u32 op, __u64 start,
				      __u64 now, __s64 ret, bool split)
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
	e->flags = layer == LAYER_SYSCALL ? pattern_verdict() : 0;
	if (split)
		e->flags |= EVF_SPLIT;
	e->pid = id >> 32;
	e->tid = tid;
	e->call_ns = start;
	e->end_ns = now;
	e->ret = ret;
	e->pos = ts->pos;
	e->bytes = ts->bytes;
	for (__u32 p = 0; p < NR_PARTS; p++)
		e->part_ns[p] = split_calls ? parts_ns(ts, p) : 0;
	call_counts(ts); /* read below: this call's, or zeros */
	e->blk_requests = ts->blk_requests;
	e->blk_flushes = ts->blk_flushes;
	e->parts_mask = split_calls ? ts->parts_mask : 0;
	e->throttle_pauses = ts->throttle_pauses;
	e->blk_bytes = ts->blk_bytes;
	e->blk_max_ns = 0;
	e->blk_max_dev = 0;
	e->journal_requests = ts->journal_requests;
	e->journal_flushes = ts->journal_flushes;
	e->journal_bytes = ts->journal_bytes;
	e->cache_miss_pages = ts->cache_miss_pages;
	e->readahead_pages = ts->readahead_pages;
	e->writeback_pages = ts->writeback_pages;
	for (__u32 k = 0; k < NR_LOCK_KINDS; k++)
		e->lock_ns[k] = split_calls ? parts_lock_ns(ts, k) : 0;
	e->lock_addr = split_calls ? ts->lock_max_addr : 0;
	e->lock_max_ns = split_calls ? ts->lock_max_ns : 0;
	cb = ts->blk_requests ? bpf_map_lookup_elem(&call_blk, &tid) : NULL;
	if (cb && cb->call_ns == start) {
		e->blk_max_ns = cb->max_ns;
		e->blk_max_dev = cb->dev;
	}
	__builtin_memset(&e->bio, 0, sizeof(e->bio));
	if (bio_calls) {
		struct call_bio *b = bpf_map_lookup_elem(&call_bio, &tid);

		if (b && b->call_ns == start)
			__builtin_memcpy(&e->bio, b, sizeof(e->bio));
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	f = (struct file *)ts->file;
	event_file(e, f);
	if (lock_is_inode(f, e->lock_addr))
		e->flags |= EVF_LOCK_INODE;
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
	e->flags = 0;
	e->tid = tid;
	e->call_ns = call_ns;
	e->start_ns = start;
	e->end_ns = end;
	e->lock_addr = 0;
	bpf_ringbuf_submit(e, 0);
}

/*
 * --trace: a contention for the lock at addr, of kind, inside the call,
 * from its begin to its end (the waits off CPU within it are slices of
 * their own, nested in it). The lock is named in user space.
 */
static __always_inline void emit_contention(struct thread_starts *ts, __u32 tid, __u32 kind,
					    __u64 addr, __u64 start, __u64 end)
{
	__u64 call_ns = call_ns_of(ts);
	struct slice_event *e;

	if (!call_ns || call_ns > start)
		return;
	e = event_reserve(sizeof(*e));
	if (!e)
		return;
	e->kind = EV_SLICE;
	e->what = PART_LOCK;
	e->op = (__u8)kind;
	e->flags = SLF_CONTENTION;
	if (lock_is_inode((struct file *)ts->file, addr))
		e->flags |= SLF_LOCK_INODE;
	e->tid = tid;
	e->call_ns = call_ns;
	e->start_ns = start;
	e->end_ns = end;
	e->lock_addr = addr;
	bpf_ringbuf_submit(e, 0);
}

#endif /* EVENTS_BPF_H */
