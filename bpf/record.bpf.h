/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where every timed value lands: the per-CPU histograms of the cells, the
 * breakdown by process, disk, flags or cgroup (-P/-D/-F/-G), and the drops
 * counted
 * when something could not be recorded. Owns the maps cells,
 * breakdown_cells, breakdown_zero and drops.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef RECORD_BPF_H
#define RECORD_BPF_H

/* From include/uapi/asm-generic/errno-base.h: vmlinux.h has no macros. */
#define EEXIST 17

/*
 * A bpf_map_update_elem() error as the int the map returned. Before Linux
 * 6.4 ("bpf: return long from bpf_map_ops funcs") the verifier turned the
 * helper into a direct call of the map's update function, which returned
 * int: an error reached the program zero-extended, -EEXIST as 0xffffffef,
 * and a 64-bit compare with -EEXIST never matched. On 6.1 each bio or
 * request queued again over an open entry was so counted as a full map.
 */
static __always_inline int map_err(long err)
{
	return (int)err;
}

const volatile bool per_process; /* -P */
const volatile bool per_disk;	 /* -D */
const volatile bool per_flags;	 /* -F */
const volatile bool per_cgroup;	 /* -G */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_CELLS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} cells SEC(".maps");

/*
 * Breakdowns by process, disk, flags or cgroup; entries appear as keys are
 * seen. Preallocated: the block layer makes keys at completion, in
 * interrupt context, where a map that allocates per element can fail while
 * its per-CPU cache refills (a new key's first request was counted as
 * breakdown_map_full with room to spare, in 3 of 16 flush tests under
 * load). The map is shrunk to one entry when nothing is broken down.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BREAKDOWN_KEYS);
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
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_DROP_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void count_drops(__u32 reason, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&drops, &reason);

	if (v)
		*v += n;
}

static __always_inline void count_drop(__u32 reason)
{
	count_drops(reason, 1);
}

/* -u, -m: the report's unit in ns (1000, 1000000); 0 when it is ns. */
const volatile __u64 unit_ns = 0;

/* The per-CPU histogram maps hist_add() fills (hist_add.bpf.c). */
enum hist_map {
	HIST_CELLS,
	HIST_CALL_PARTS,
	HIST_URING_PARTS,
	HIST_AIO_PARTS,
};

/* The bucket to pass when the caller has not computed it. */
#define HIST_BUCKET_OF_DELTA 0xffffffffU

/*
 * One value into the histogram c (a per-CPU map's value), in bucket b
 * (hist_bucket(delta), or HIST_BUCKET_OF_DELTA). in_ns: the value is a
 * time, also counted in whole units of the report (a page count is not).
 */
static __always_inline void cell_hist_add(struct cell_hist *c, __u64 delta, __u32 b, bool in_ns)
{
	__u32 u;

	if (b == HIST_BUCKET_OF_DELTA)
		b = hist_bucket(delta);
	/*
	 * hist_bucket() caps the index, but the verifier cannot see that: hide
	 * b from clang so it keeps a check the verifier can.
	 */
	asm volatile("" : "+r"(b));
	if (b >= HIST_NR_BUCKETS)
		return;
	c->buckets[b]++;
	if (in_ns && unit_ns) {
		u = unit_slot(delta / unit_ns);
		asm volatile("" : "+r"(u));
		if (u < UNIT_SLOTS)
			c->unit_slots[u]++;
	}
	if (!c->count || delta < c->min_ns)
		c->min_ns = delta;
	if (delta > c->max_ns)
		c->max_ns = delta;
	c->count++;
	c->sum_ns += delta;
}

/*
 * cell_hist_add() into a per-CPU histogram map at idx. A global function,
 * verified once on its own: inlined, its branches multiplied a call's exit
 * (one per part) past the verifier's million instructions on Linux 6.1 in
 * text mode, which counts whole units. (A bpf_loop step calls
 * cell_hist_add() itself: a call from there would stack one frame more.)
 */
__noinline int hist_add_cells(__u32 idx, __u64 delta, __u32 b, __u32 in_ns);
__noinline int hist_add_call_parts(__u32 idx, __u64 delta, __u32 b, __u32 in_ns);
__noinline int hist_add_uring_parts(__u32 idx, __u64 delta, __u32 b, __u32 in_ns);
__noinline int hist_add_aio_parts(__u32 idx, __u64 delta, __u32 b, __u32 in_ns);

/* map is a constant at every call site: the switch folds away. */
static __always_inline void hist_add_to(__u32 map, __u32 idx, __u64 delta, __u32 b, bool in_ns)
{
	switch (map) {
	case HIST_CELLS:
		hist_add_cells(idx, delta, b, in_ns);
		break;
	case HIST_CALL_PARTS:
		hist_add_call_parts(idx, delta, b, in_ns);
		break;
	case HIST_URING_PARTS:
		hist_add_uring_parts(idx, delta, b, in_ns);
		break;
	case HIST_AIO_PARTS:
		hist_add_aio_parts(idx, delta, b, in_ns);
		break;
	}
}

/*
 * The cell's add that every call pays, inline: a global function's call
 * costs about 12 ns a call here (bench/sysprog.py). The call's exit
 * verifies on 6.1 with this one and the root part inline; what multiplied
 * its states there was the loop over every part (record_call()).
 */
static __always_inline void hist_add_inline(void *map, __u32 idx, __u64 delta, __u32 b)
{
	struct cell_hist *c = bpf_map_lookup_elem(map, &idx);

	if (c)
		cell_hist_add(c, delta, b, true);
}

static __always_inline void hist_add(__u32 map, __u32 idx, __u64 delta, bool in_ns)
{
	hist_add_to(map, idx, delta, HIST_BUCKET_OF_DELTA, in_ns);
}

static __always_inline void record(__u32 layer, __u32 op, __u64 delta)
{
	hist_add(HIST_CELLS, CELL_INDEX(layer, op), delta, true);
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

/* The bytes of a block request or bio just recorded in its cell. */
static __always_inline void record_bytes(__u32 layer, __u32 op, __u64 bytes)
{
	__u32 idx = CELL_INDEX(layer, op);
	struct cell_hist *c = bpf_map_lookup_elem(&cells, &idx);

	if (c)
		c->bytes += bytes;
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
		err = map_err(bpf_map_update_elem(&breakdown_cells, key, z, BPF_NOEXIST));
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

/* A block request or bio of a key with its bytes, failed (error) or not. */
static __always_inline void record_breakdown_io(struct breakdown_key *key, const char *comm,
						__u64 delta, __u64 bytes, int error)
{
	struct breakdown_cell *v;

	if (error)
		record_breakdown_error(key, comm, delta);
	else
		record_breakdown(key, comm, delta);
	v = bpf_map_lookup_elem(&breakdown_cells, key);
	if (v)
		__sync_fetch_and_add(&v->cell.bytes, bytes);
}

#endif /* RECORD_BPF_H */
