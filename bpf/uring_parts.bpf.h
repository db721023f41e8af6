/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of io_uring requests (inline, io-wq queued, io-wq, poll): the
 * part each request is in, the time charged to it at each change, and per
 * op the totals and a histogram per part. Owns the maps uring_parts and
 * uring_ops. The programs that see the changes are uring_parts.bpf.c.
 *
 * Included by uring.bpf.c after the uring_starts map.
 */
#ifndef URING_PARTS_BPF_H
#define URING_PARTS_BPF_H

/*
 * Requests split into parts (uring_split; off with --no-parts): per op the
 * totals, and per part a histogram of its time per request (requests where
 * the part took no time are not added: user space adds them as zeros).
 */
const volatile bool uring_split;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_URING_OPS *NR_URING_PARTS);
	__type(key, __u32);
	__type(value, struct cell_hist);
} uring_parts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_URING_OPS);
	__type(key, __u32);
	__type(value, struct call_totals);
} uring_ops SEC(".maps");

/* The time since the last change goes to the request's part; it moves on
 * to `part`. One place splits, so the parts add up to the latency. */
static __always_inline void uring_charge(struct uring_start *v, __u64 now, __u32 part)
{
	__u32 cur = v->part;

	if (cur < NR_URING_PARTS)
		v->part_ns[cur] += now - v->last_ns;
	v->last_ns = now;
	v->part = (__u8)part;
}

/* Any part: what uring_moves() moves from. */
#define URING_ANY_PART 0xff

/*
 * io-wq-queued is told from io-wq (uring_iowq_run): the planner attaches
 * fentry on io_wq_submit_work, where a worker takes a request.
 */
const volatile bool uring_iowq_run;

/* A request's part changes (punted, taken by a worker, a poll armed or
 * fired), from part `from` only unless URING_ANY_PART. */
static __always_inline int uring_moves(struct io_kiocb *req, __u32 part, __u32 from)
{
	__u64 key = (__u64)req;
	struct uring_start *v = bpf_map_lookup_elem(&uring_starts, &key);

	if (!v || (from != URING_ANY_PART && v->part != from))
		return 0;
	uring_charge(v, bpf_ktime_get_ns(), part);
	return 0;
}

/* A request (or one completion of a multishot one) ended: its parts. */
static __always_inline void uring_record_parts(struct uring_start *v, __u32 op, __u64 delta)
{
	struct call_totals *t = bpf_map_lookup_elem(&uring_ops, &op);

	if (!t || op >= NR_URING_OPS)
		return;
	t->count++;
	t->total_ns += delta;
	t->blk_requests += v->blk_requests;
	t->blk_bytes += v->blk_bytes;
	for (__u32 p = 0; p < NR_URING_PARTS; p++)
		if (v->part_ns[p])
			hist_add(HIST_URING_PARTS, op * NR_URING_PARTS + p, v->part_ns[p], true);
}

/* A punted request waits for a worker, or is in io-wq as a whole. */
static __always_inline __u32 uring_punt_part(void)
{
	return uring_iowq_run ? URING_PART_IOWQ_QUEUED : URING_PART_IOWQ;
}

#endif /* URING_PARTS_BPF_H */
