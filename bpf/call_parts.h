/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where one call's time goes: the arithmetic that splits a call of the
 * outermost traced layer into parts that add up to its latency exactly.
 * Shared by the BPF programs (which run it) and the unit tests (which feed
 * it hand-made sequences of events), like hist_bucket.h.
 *
 * The thread's state has an innermost open layer and the time of the last
 * transition. At every transition (a layer entered or left, the thread
 * switched out or in) the time since the last one is charged to what was
 * going on: the innermost layer's self time while on CPU, or the kind of
 * off-CPU wait the thread went to sleep with. Every nanosecond between the
 * call's first entry and its last exit is charged to exactly one part, in
 * integers, in this one place: the parts sum to the latency by
 * construction.
 */
#ifndef CALL_PARTS_H
#define CALL_PARTS_H

/* A call is open. */
static inline int parts_open(const struct thread_starts *ts)
{
	return ts->inner < NR_CALL_LAYERS;
}

/* Charges the time since the last transition, and moves it to now. */
static inline void parts_charge(struct thread_starts *ts, __u64 now)
{
	__u32 part = ts->off ? (__u32)ts->off - 1 : ts->inner;

	if (!parts_open(ts))
		return;
	if (part < NR_PARTS)
		ts->part_ns[part] += now - ts->last_ns;
	ts->last_ns = now;
}

/*
 * A layer's outermost call begins at now (the same instant as its start
 * time). A layer at or above the open call's root begins a new call: the
 * old one lost its exit (a missed kretprobe), and is dropped, not counted.
 */
static inline void parts_enter(struct thread_starts *ts, __u32 layer, __u64 now)
{
	if (layer >= NR_CALL_LAYERS)
		return;
	if (!parts_open(ts) || layer <= ts->root) {
		for (__u32 i = 0; i < NR_PARTS; i++)
			ts->part_ns[i] = 0;
		ts->blk_requests = 0;
		ts->blk_bytes = 0;
		ts->root = (__u8)layer;
		ts->inner = (__u8)layer;
		ts->off = 0;
		ts->last_ns = now;
		return;
	}
	parts_charge(ts, now);
	ts->off = 0; /* entering runs on CPU, whatever was missed */
	if (layer > ts->inner)
		ts->inner = (__u8)layer;
}

/*
 * A layer's outermost call ended at now (its start slot already cleared).
 * Returns 1 when it was the root: the parts are then the whole call.
 */
static inline int parts_exit(struct thread_starts *ts, __u32 layer, __u64 now)
{
	__u32 inner;

	if (!parts_open(ts) || layer >= NR_CALL_LAYERS)
		return 0;
	parts_charge(ts, now);
	ts->off = 0;
	if (layer == ts->root) {
		ts->inner = NO_LAYER;
		return 1;
	}
	/*
	 * The innermost layer still open outside this one (an inner one still
	 * marked open lost its exit: it cannot outlive its caller).
	 */
	inner = ts->root;
	for (__u32 l = 0; l < NR_CALL_LAYERS; l++)
		if (l > ts->root && l < layer && ts->start_ns[l])
			inner = l;
	ts->inner = (__u8)inner;
	return 0;
}

/* The thread leaves the CPU inside a call, to wait as part says. */
static inline void parts_switch_out(struct thread_starts *ts, __u64 now, __u32 part)
{
	if (!parts_open(ts))
		return;
	parts_charge(ts, now);
	ts->off = (__u8)(part + 1);
}

/*
 * The thread, asleep, is woken: from now until it runs it waits for a CPU,
 * not for what woke it (as the kernel's delay accounting splits them).
 */
static inline void parts_wakeup(struct thread_starts *ts, __u64 now)
{
	if (!parts_open(ts) || !ts->off || ts->off == PART_RUNQUEUE + 1)
		return;
	parts_charge(ts, now);
	ts->off = PART_RUNQUEUE + 1;
}

/* The thread runs again. */
static inline void parts_switch_in(struct thread_starts *ts, __u64 now)
{
	if (!parts_open(ts) || !ts->off)
		return;
	parts_charge(ts, now);
	ts->off = 0;
}

#endif /* CALL_PARTS_H */
