/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timing one layer's call: the entry and exit every layer of threads
 * shares (syscall, vfs, file systems), with nesting, the parts of the root
 * call, events and -P. Owns the maps call_parts and call_ops. The programs
 * that call it are in syscall.bpf.c and fs.bpf.c.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef LAYER_BPF_H
#define LAYER_BPF_H

/*
 * The calls of the root layer split into parts, per op: the totals, and per
 * part a histogram of its time per call, then per op one of the pages each
 * call added to the page cache (calls where a part took no time, or that
 * added no page, are not added: user space adds them as zeros).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_CALL_PARTS_ENTRIES);
	__type(key, __u32);
	__type(value, struct cell_hist);
} call_parts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_FS_OPS);
	__type(key, __u32);
	__type(value, struct call_totals);
} call_ops SEC(".maps");

/*
 * nest: the layer can be re-entered by the same thread (overlayfs, loop over
 * a file): count depth and time the outermost call (thread_slots.h).
 * cur: the current task as a BTF pointer, if the program read it already
 * (the raw syscall pair under tp_btf); NULL: read here if needed.
 */
static __always_inline int layer_enter(__u32 layer, __u32 op, bool nest, void *ctx, int method,
				       int args, struct task_struct *cur)
{
	/* The ids cost a helper call: only filters and the hash need them. */
	bool need_id = nr_targ_tgids || targ_tid || !use_task_storage;
	__u64 id = need_id ? bpf_get_current_pid_tgid() : 0;
	__u32 tid = (__u32)id;
	struct thread_starts *ts;
	struct file *f = NULL;
	__u32 kind;
	__u64 now;

	if (layer >= NR_LAYERS || !task_wanted(id))
		return 0;
	if (!cur && use_task_storage)
		cur = bpf_get_current_task_btf();
	/* Before any slot is touched: a call on a pipe leaves here. */
	if (!all_fds && LAYER_LEAVES_OUT(layer)) {
		kind = call_kind(ctx, method, args, &f, cur);
		if (kind != FD_STORAGE) {
			if (nest)
				goto left_out_nested;
			count_left_out(layer, op, kind);
			return 0;
		}
	}
	if (use_task_storage) {
		ts = my_stored_slots_made(cur);
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
			/* Counted here: its exits are not evictions. */
			thread_seen_clear(tid);
			count_drop(DROP_THREAD_MAP_FULL);
			return 0;
		}
		if (thread_seen_set(tid))
			slot_recreated(ts, layer);
	}
have_slot:
	if (!slot_enter(ts, layer, nest))
		return 0;
	/* Only an outermost call asks: its exit must find what its entry did. */
	if (want_args && !call_args_read(ts, ctx, method, args, layer, op, f, cur)) {
		slot_left_out(ts, layer);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (split_calls) {
		now = parts_enter(ts, layer, now);
	} else if (events_on && layer == root_layer) {
		parts_reset_counts(ts);
	}
	slot_begin(ts, layer, nest, now);
	return 0;

left_out_nested:
	/*
	 * A layer that nests (vfs): a call on a pipe inside an open call of the
	 * same layer and thread is part of that call, and its exit must find
	 * the depth it adds. The slot is only looked up, never made.
	 */
	if (use_task_storage)
		ts = slots_of(cur, true);
	else
		ts = bpf_map_lookup_elem(&thread_starts, &tid);
	if (ts && ts->depth[layer])
		ts->depth[layer]++;
	else
		count_left_out(layer, op, kind);
	return 0;
}

/*
 * A call of the root layer ended: its parts, per op. bucket: delta's
 * (the call's cell took it): a part that is the whole call, as the self
 * time of most calls that do not wait, is in the same bucket.
 */
static __always_inline void record_call(struct thread_starts *ts, __u32 op, __u64 delta,
					__u32 bucket)
{
	struct call_totals *t = bpf_map_lookup_elem(&call_ops, &op);
	__u32 mask, root;
	__u64 part;

	if (!t || op >= NR_FS_OPS)
		return;
	t->count++;
	t->total_ns += delta;
	/* Most calls counted nothing (call_counts()): nothing to add. */
	if (ts->counting) {
		t->blk_requests += ts->blk_requests;
		t->blk_bytes += ts->blk_bytes;
		t->journal_requests += ts->journal_requests;
		t->journal_flushes += ts->journal_flushes;
		t->journal_bytes += ts->journal_bytes;
		t->cache_miss_pages += ts->cache_miss_pages;
		t->readahead_pages += ts->readahead_pages;
		t->writeback_pages += ts->writeback_pages;
		t->throttle_pauses += ts->throttle_pauses;
		if (ts->cache_miss_pages)
			hist_add(HIST_CALL_PARTS, CALL_PAGES_INDEX(op), ts->cache_miss_pages, false);
	}
	/* lock_ns is the call's only once the lock part was charged (parts_ns()) */
	if (ts->parts_mask & (1U << PART_LOCK))
		for (__u32 k = 0; k < NR_LOCK_KINDS; k++)
			t->lock_ns[k] += ts->lock_ns[k];
	/*
	 * Most calls never leave the CPU nor their own layer: their one part
	 * is the root's self time, the whole call, in delta's bucket. Others
	 * go through every part charged (parts_mask).
	 */
	mask = ts->parts_mask;
	root = ts->root;
	if (root < NR_PARTS && mask == 1U << root) {
		part = ts->part_ns[root];
		hist_add_inline(&call_parts, CALL_PARTS_INDEX(op, root), part,
				part == delta ? bucket : HIST_BUCKET_OF_DELTA);
	} else {
		for (__u32 p = 0; p < NR_PARTS; p++) {
			part = ts->part_ns[p];
			if (mask & (1U << p))
				hist_add(HIST_CALL_PARTS, CALL_PARTS_INDEX(op, p), part, true);
		}
	}
}

/* -P: one of a call's counts (enum process_count), where it is not 0. */
static __always_inline void record_process_count(struct breakdown_key *key, const char *comm,
						 __u32 op, __u32 what, __u64 value)
{
	if (!value)
		return;
	key->cell_idx = PROCESS_COUNT_INDEX(op, what);
	record_breakdown_or(DROP_PARTS_MAP_FULL, key, comm, value);
}

/*
 * -P: the same per process, in the breakdown map, under cell indexes past
 * the cells': CALL_PART_INDEX(op, part) per part (calls with the part > 0),
 * CALL_TOTAL_INDEX(op) for the calls themselves, and PROCESS_COUNT_INDEX
 * for their pages, journal commits' requests and lock part by kind.
 */
static __always_inline void record_call_by_pid(struct thread_starts *ts, __u32 op, __u64 delta,
					       struct breakdown_key *key, const char *comm)
{
	if (op >= NR_FS_OPS)
		return;
	call_counts(ts); /* read below: this call's, or zeros */
	key->cell_idx = CALL_TOTAL_INDEX(op);
	record_breakdown_or(DROP_PARTS_MAP_FULL, key, comm, delta);
	for (__u32 p = 0; p < NR_PARTS; p++) {
		if (!parts_ns(ts, p))
			continue;
		key->cell_idx = CALL_PART_INDEX(op, p);
		record_breakdown_or(DROP_PARTS_MAP_FULL, key, comm, parts_ns(ts, p));
	}
	record_process_count(key, comm, op, PC_CACHE_MISS, ts->cache_miss_pages);
	record_process_count(key, comm, op, PC_READAHEAD, ts->readahead_pages);
	record_process_count(key, comm, op, PC_JOURNAL_REQUESTS, ts->journal_requests);
	record_process_count(key, comm, op, PC_JOURNAL_FLUSHES, ts->journal_flushes);
	record_process_count(key, comm, op, PC_JOURNAL_BYTES, ts->journal_bytes);
	record_process_count(key, comm, op, PC_WRITEBACK, ts->writeback_pages);
	for (__u32 k = 0; k < NR_LOCK_KINDS; k++)
		record_process_count(key, comm, op, PC_LOCK + k, parts_lock_ns(ts, k));
}

static __always_inline int layer_exit(__u32 layer, __u32 op, bool nest, void *ctx, int method,
				      int args, struct task_struct *cur)
{
	bool need_id = nr_targ_tgids || !use_task_storage || per_process;
	__u64 id = need_id ? bpf_get_current_pid_tgid() : 0;
	__u32 tid = (__u32)id;
	struct thread_starts *ts;
	__u64 start, delta, now;
	bool root_done, is_root;
	__u32 bucket;
	struct slot_end end;
	__s64 ret = 0;

	if (layer >= NR_LAYERS || !tgid_wanted(id))
		return 0;
	/* First, so that our own lookups are not in the call's latency. */
	now = bpf_ktime_get_ns();
	if (!cur && use_task_storage)
		cur = bpf_get_current_task_btf();
	if (use_task_storage)
		ts = slots_of(cur, true);
	else
		ts = bpf_map_lookup_elem(&thread_starts, &tid);
	if (!ts) {
		/* Cold: a thread whose slot is gone, though it had one. */
		if (!use_task_storage && task_wanted(id) && thread_seen_clear(tid))
			count_drop(DROP_THREAD_SLOT_EVICTED);
		return 0;
	}
	end = slot_exit(ts, layer, nest, timed_layers);
	if (end.missed)
		count_drops(DROP_CALL_EXIT_MISSED, end.missed);
	if (end.evicted)
		count_drop(DROP_THREAD_SLOT_EVICTED);
	start = end.start;
	if (!start)
		return 0; /* an inner call of the layer, or entered before we attached */
	is_root = layer == root_layer;
	if (want_args && (nr_files || (events_on && is_root)))
		ret = ret_of(ctx, method, args);
	if (layer == LAYER_SYSCALL && op == FSOP_OPEN && open_left_out(ts, ctx, method, args, cur)) {
		/* Closed as if it never was: nothing recorded, the parts reset. */
		if (split_calls)
			parts_exit(ts, layer, &now);
		return 0;
	}
	if (pattern_calls && layer == LAYER_SYSCALL && is_root)
		pattern_syscall_end(ts, op, ctx, method, args, id);
	/*
	 * The root's parts sum to delta: both run from its start to now, the
	 * time the split says the call ended (call_parts.h).
	 */
	root_done = split_calls && parts_exit(ts, layer, &now) && is_root;
	if (trace_on && !is_root) {
		__u64 call_ns = call_ns_of(ts);

		if (call_ns && call_ns <= start)
			emit_slice(tid ? tid : (__u32)bpf_get_current_pid_tgid(), call_ns, layer,
				   op, start, now);
	}
	delta = now - start;
	bucket = hist_bucket(delta);
	hist_add_inline(&cells, CELL_INDEX(layer, op), delta, bucket);
	if (root_done)
		record_call(ts, op, delta, bucket);
	if (stacks_calls && is_root)
		stacks_call(ctx, ts, op, delta, root_done);
	if (events_on && is_root && (delta >= slower_ns || trace_on))
		emit_call(ts, layer, op, start, now, ret, root_done);
	if (per_process || per_cgroup) {
		struct breakdown_key key = { .cell_idx = CELL_INDEX(layer, op) };
		char comm[COMM_LEN];

		/* -G: the cgroup the thread is in now, at the end of its call. */
		if (per_cgroup) {
			key.cgid = bpf_get_current_cgroup_id();
			cgroup_path_note(key.cgid);
		}
		if (per_process) {
			key.tgid = id >> 32;
			bpf_get_current_comm(comm, sizeof(comm));
		}
		record_breakdown(&key, per_process ? comm : NULL, delta);
		/* The calls of a process stay one row per process (JSON's
		 * breakdown_by_process): its parts are found by tgid. */
		if (root_done && per_process) {
			key.cgid = 0;
			record_call_by_pid(ts, op, delta, &key, comm);
		}
	}
	return 0;
}

/* Does the layer nest (cells.def)? A constant wherever layer is one. */
static __always_inline bool layer_nests(__u32 layer)
{
	switch (layer) {
#define LAYER(id, name, kind, nests, module, help)                                                 \
	case id:                                                                                   \
		return nests;
#include "cells.def"
	}
	return false;
}

/*
 * The programs of every cell target, from the table of cells. A fentry or
 * kprobe program serves one function, bound by user space before load; the
 * names say what each serves (src/kernel/progtab.c resolves them from the
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
		return layer_enter(layer, op, layer_nests(layer), ctx, method, args, NULL);        \
	}                                                                                          \
	SEC(sec_out)                                                                               \
	int out(void *ctx)                                                                         \
	{                                                                                          \
		return layer_exit(layer, op, layer_nests(layer), ctx, method, args, NULL);         \
	}

#endif /* LAYER_BPF_H */
