/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Access patterns (--pattern, bpf/pattern.h): each access sequential or
 * random, with its gap and size, per (level, op) and breakdown key. The call
 * level is recorded here, at the exit of a system call that read or wrote at
 * a file position; the block level in pattern_blk.bpf.c. Owns the maps
 * patterns, pattern_zero, pattern_files and pattern_disks.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef PATTERN_BPF_H
#define PATTERN_BPF_H

#include "pattern.h"

const volatile bool pattern_calls; /* --pattern with the syscall layer */
const volatile bool pattern_blk;   /* --pattern with the blk layer */
const volatile bool pattern_bio;   /* --pattern with the bio layer */
#ifdef BENCH_WITHOUT_OPTIONS
#define pattern_calls false
#endif

/* Preallocated, as breakdown_cells: the block level makes keys in any
 * context. Shrunk to one entry without --pattern. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PATTERN_KEYS);
	__type(key, struct pattern_key);
	__type(value, struct pattern_value);
} patterns SEC(".maps");

/* Never written: a new key's zeroed value (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pattern_value);
} pattern_zero SEC(".maps");

/*
 * Per open file description (its struct file) and op, where its last
 * access ended. An open the syscall layer sees forgets the entries of the
 * struct it returns: a struct file freed and reused for a new open must
 * not inherit the old one's ends.
 */
struct pattern_stream {
	__u64 file;
	__u64 op;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_PATTERN_FILES);
	__type(key, struct pattern_stream);
	__type(value, __u64);
} pattern_files SEC(".maps");

/*
 * Events: the verdict on the system call that is ending (EVF_SEQ,
 * EVF_RANDOM, 0: none), for its event, on this CPU; and per block request
 * the verdict of its issue, for its event at completion (--trace).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pattern_verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_INFLIGHT_RQS);
	__type(key, __u64);
	__type(value, __u32);
} pattern_rqs SEC(".maps");

static __always_inline void pattern_verdict_set(__u32 flags)
{
	__u32 zero = 0, *v = bpf_map_lookup_elem(&pattern_verdicts, &zero);

	if (v)
		*v = flags;
}

/* The verdict on the system call ending now (its exit program runs). */
static __always_inline __u32 pattern_verdict(void)
{
	__u32 zero = 0, *v;

	if (!pattern_calls)
		return 0;
	v = bpf_map_lookup_elem(&pattern_verdicts, &zero);
	return v ? *v : 0;
}

/* A request completes: the verdict of its issue, forgotten. */
static __always_inline __u32 pattern_rq_verdict(__u64 rq)
{
	__u32 *v, flags;

	if (!pattern_blk)
		return 0;
	v = bpf_map_lookup_elem(&pattern_rqs, &rq);
	if (!v)
		return 0;
	flags = *v;
	bpf_map_delete_elem(&pattern_rqs, &rq);
	return flags;
}

/* log2 slot of v (> 0), the last slot holding everything above. */
static __always_inline __u32 pattern_slot(__u64 v, __u32 slots)
{
	__u32 s = hist_msb(v);

	return s < slots ? s : slots - 1;
}

/*
 * One access of key's stream: gap is its start minus where the stream's
 * last access ended (0: sequential), in bytes.
 */
static __always_inline void pattern_record(struct pattern_key *key, const char *comm, __s64 gap,
					   __u64 bytes)
{
	struct pattern_value *v = bpf_map_lookup_elem(&patterns, key);
	__u32 zero = 0, s;
	__u64 mag;

	if (!v) {
		struct pattern_value *z = bpf_map_lookup_elem(&pattern_zero, &zero);
		long err;

		if (!z)
			return;
		err = map_err(bpf_map_update_elem(&patterns, key, z, BPF_NOEXIST));
		if (err && err != -EEXIST) { /* EEXIST: another CPU made it */
			count_drop(DROP_BREAKDOWN_MAP_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&patterns, key);
		if (!v)
			return;
	}
	if (comm)
		__builtin_memcpy(v->comm, comm, COMM_LEN);
	__sync_fetch_and_add(&v->h.bytes, bytes);
	s = pattern_slot(bytes ? bytes : 1, PAT_SIZE_SLOTS);
	asm volatile("" : "+r"(s));
	if (s < PAT_SIZE_SLOTS)
		__sync_fetch_and_add(&v->h.size[s], 1);
	if (!gap) {
		__sync_fetch_and_add(&v->h.seq, 1);
		return;
	}
	__sync_fetch_and_add(&v->h.rand, 1);
	mag = gap > 0 ? (__u64)gap : -(__u64)gap;
	s = pattern_slot(mag, PAT_DIST_SLOTS);
	asm volatile("" : "+r"(s));
	if (s >= PAT_DIST_SLOTS)
		return;
	if (gap > 0)
		__sync_fetch_and_add(&v->h.fwd[s], 1);
	else
		__sync_fetch_and_add(&v->h.back[s], 1);
}

/* Per level (blk, bio) and device (kernel dev_t): PATTERN_DISK(level, dev),
 * the sector where its last request or bio ended. */
#define PATTERN_DISK(level, dev) ((__u64)(level) << 32 | (dev))
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_PATTERN_DISKS);
	__type(key, __u64);
	__type(value, __u64);
} pattern_disks SEC(".maps");

/*
 * A request or bio of level on device dev, at sector for bytes: its part
 * in the patterns, against where the device's last one ended (a device's
 * first is compared with its first sector). Returns EVF_SEQ or EVF_RANDOM.
 */
static __always_inline __u32 pattern_sectors(struct pattern_key *key, const char *comm, __u32 level,
					     __u32 dev, __u64 sector, __u64 bytes)
{
	__u64 disk = PATTERN_DISK(level, dev), prev = 0, end = sector + (bytes >> 9), *last;

	last = bpf_map_lookup_elem(&pattern_disks, &disk);
	if (last) {
		prev = *last;
		*last = end;
	} else {
		bpf_map_update_elem(&pattern_disks, &disk, &end, BPF_ANY);
	}
	key->level = (__u8)level;
	if (per_disk)
		key->dev = dev;
	pattern_record(key, comm, (__s64)(sector - prev) * 512, bytes);
	return sector == prev ? EVF_SEQ : EVF_RANDOM;
}

/* --file: the index + 1 of the file f is (0: none; the filter let it in). */
static __always_inline __u16 pattern_file_index(__u64 f)
{
	struct inode *inode = BPF_CORE_READ((struct file *)f, f_inode);
	__u32 dev = BPF_CORE_READ(inode, i_sb, s_dev);
	__u64 ino = BPF_CORE_READ(inode, i_ino);

	for (__u32 i = 0; i < MAX_FILE_FILTER; i++) {
		if (i >= nr_files)
			break;
		if (targ_files[i].ino == ino && targ_files[i].dev == dev)
			return (__u16)(i + 1);
	}
	return 0;
}

/*
 * A read or write system call of the syscall layer (the root layer, so its
 * slot holds the file and the position its entry read: the argument of
 * pread64 and preadv, else the file's f_pos) ended having moved ret bytes.
 * A call that moved nothing (an error, the end of the file) is no access.
 * A file first seen is compared with its start, where an open leaves it.
 * Reads and writes are two streams: a database reads its file at random
 * while it appends to it, and fio keeps a position per direction.
 */
static __always_inline void pattern_call(struct thread_starts *ts, __u32 op, __s64 ret, __u64 id)
{
	struct pattern_key key = { .level = PAT_CALL, .op = (__u8)op };
	struct pattern_stream stream = { .file = ts->file, .op = op };
	__u64 pos = ts->pos, prev = 0, end, *last;
	char comm[COMM_LEN];

	if (ret <= 0 || !stream.file || pos == NO_POS)
		return;
	end = pos + (__u64)ret;
	last = bpf_map_lookup_elem(&pattern_files, &stream);
	if (last) {
		prev = *last;
		*last = end;
	} else {
		bpf_map_update_elem(&pattern_files, &stream, &end, BPF_ANY);
	}
	if (nr_files)
		key.file = pattern_file_index(stream.file);
	if (per_process) {
		key.tgid = id >> 32;
		bpf_get_current_comm(comm, sizeof(comm));
	}
	if (per_cgroup)
		key.cgid = bpf_get_current_cgroup_id();
	pattern_verdict_set(pos == prev ? EVF_SEQ : EVF_RANDOM);
	pattern_record(&key, per_process ? comm : NULL, (__s64)(pos - prev), (__u64)ret);
}

/* An open of the syscall layer returned the file in ts->file: a new open
 * file description, its first access compared with its start. */
static __always_inline void pattern_opened(struct thread_starts *ts)
{
	struct pattern_stream stream = { .file = ts->file, .op = FSOP_READ };

	if (!stream.file)
		return;
	bpf_map_delete_elem(&pattern_files, &stream);
	stream.op = FSOP_WRITE;
	bpf_map_delete_elem(&pattern_files, &stream);
}

/* A call of the syscall layer, its root, ended: its part in the patterns. */
static __always_inline void pattern_syscall_end(struct thread_starts *ts, __u32 op, void *ctx,
						int method, int args, __u64 id)
{
	pattern_verdict_set(0);
	if (op == FSOP_OPEN)
		pattern_opened(ts);
	else if (op == FSOP_READ || op == FSOP_WRITE)
		pattern_call(ts, op, ret_of(ctx, method, args), id);
}

#endif /* PATTERN_BPF_H */
