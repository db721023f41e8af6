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
 *
 * Time never runs backwards here. A program reads the clock, then charges:
 * on a preemptible kernel the thread can be switched out and in between
 * the two, and the switch, charged with its own later clock, moves last_ns
 * past the program's now. Such a transition happened, for the split, at
 * last_ns: nothing is charged (never a wrapped ~1.8e19 ns part, never time
 * twice) and the transition's time is last_ns, which parts_enter and
 * parts_exit hand back. The caller times the layer with those times, so a
 * root call's latency (exit's time - entry's time) is exactly what its
 * parts add up to; the preemption inside the exit's own program is in it,
 * as runqueue time (self time inside the change itself: parts_busy): the
 * call could not return before it ended.
 */
#ifndef CALL_PARTS_H
#define CALL_PARTS_H

/* A call is open. */
static inline int parts_open(const struct thread_starts *ts)
{
	return ts->inner < NR_CALL_LAYERS;
}

/*
 * The part the time goes to now: the innermost layer's self time on CPU,
 * else the wait the thread went off CPU with; inside a lock contention
 * every wait but one for a CPU is the lock's.
 */
static inline __u32 parts_now(const struct thread_starts *ts)
{
	__u32 part = ts->off ? (__u32)ts->off - 1 : ts->inner;

	if (ts->lock_kind && part != PART_RUNQUEUE)
		return PART_LOCK;
	return part;
}

/*
 * A compiler barrier: the stores around a change stay in program order,
 * which is all a program nested on the same CPU can see.
 */
#define PARTS_BARRIER() asm volatile("" ::: "memory")

/*
 * Another program can run on top of one that is changing a thread's
 * split, and change it too: the thread's own program preempted (a switch
 * between a program's clock read and its charge, above, is one) runs
 * sched_switch's in between; a lock contended in a hard or soft interrupt
 * on top of the thread fires lock:contention_begin/end with it as current
 * (ftrace flagged 6 of 815 contentions in 32 O_DIRECT reader threads'
 * context so). A charge nested in a charge counts the time the outer one
 * is counting again; a switch inside parts_enter, after the call is open
 * and before last_ns is set, charges from the last call's end. Either
 * made a call's parts sum more than its latency (18 and 30 us over 20,000
 * reads in two fresh-clone runs).
 *
 * So every change marks the slot busy while it runs, and a change that
 * finds it busy is nested in one: it changes nothing. The nested time is
 * then the outer change's: a preemption inside the thread's own program
 * is its self time, an interrupt's contention the part the thread was
 * in. Only the thread's own programs, or one that wakes it while it
 * sleeps (it is not in a program then), change its slot: one CPU at a
 * time, so program order is enough.
 */
static inline void parts_mark_busy(struct thread_starts *ts)
{
	ts->busy = 1;
	PARTS_BARRIER();
}

/* A change begins: 1 when it is nested in one (then it changes nothing). */
static inline int parts_busy(struct thread_starts *ts)
{
	if (ts->busy)
		return 1;
	parts_mark_busy(ts);
	return 0;
}

static inline void parts_idle(struct thread_starts *ts)
{
	PARTS_BARRIER();
	ts->busy = 0;
}

/*
 * Charges the time since the last transition, and moves it to now; a now
 * before the last transition charges nothing (see above). Returns the
 * transition's time: the later of the two. The caller has the slot busy.
 */
static inline __u64 parts_charge(struct thread_starts *ts, __u64 now)
{
	__u32 part = parts_now(ts);
	__u64 last = ts->last_ns; /* read once: the subtraction sees what was compared */
	__u32 kind = (__u32)ts->lock_kind - 1;

	if (!parts_open(ts))
		return now;
	if (now <= last)
		return last;
	if (part >= NR_PARTS)
		goto moved;
	/* A part's first time in the call: its sums begin here (parts_ns()). */
	if (!(ts->parts_mask & (1U << part))) {
		ts->part_ns[part] = 0;
		if (part == PART_LOCK)
			for (__u32 k = 0; k < NR_LOCK_KINDS; k++)
				ts->lock_ns[k] = 0;
		ts->parts_mask |= (__u16)(1U << part);
	}
	if (part == PART_LOCK && kind < NR_LOCK_KINDS)
		ts->lock_ns[kind] += now - last;
	ts->part_ns[part] += now - last;
moved:
	ts->last_ns = now;
	return now;
}

/*
 * The time charged to part p in the open (or just ended) call, and the lock
 * part's by kind. part_ns[p] is only the call's once the part was charged
 * in it (parts_mask): a call that begins does not zero the sums of every
 * part, 15 stores, where most calls charge one.
 */
static inline __u64 parts_ns(const struct thread_starts *ts, __u32 p)
{
	return p < NR_PARTS && (ts->parts_mask & (1U << p)) ? ts->part_ns[p] : 0;
}

static inline __u64 parts_lock_ns(const struct thread_starts *ts, __u32 k)
{
	return k < NR_LOCK_KINDS && (ts->parts_mask & (1U << PART_LOCK)) ? ts->lock_ns[k] : 0;
}

/*
 * What a call counts besides its parts (its block requests, journal
 * commit, pages and longest contention), begun at 0 by the first program
 * of the call that counts one: most calls (a cached read) count nothing,
 * and neither zero 14 fields as they begin nor add them up as they end.
 * Every writer and reader of a count goes through here; ts->counting says
 * the fields are this call's.
 */
static inline struct thread_starts *call_counts(struct thread_starts *ts)
{
	if (ts->counting)
		return ts;
	ts->lock_max_ns = 0;
	ts->lock_max_addr = 0;
	ts->blk_requests = 0;
	ts->blk_flushes = 0;
	ts->blk_bytes = 0;
	ts->journal_requests = 0;
	ts->journal_flushes = 0;
	ts->journal_bytes = 0;
	ts->cache_miss_pages = 0;
	ts->readahead_pages = 0;
	ts->ra_req_end = 0;
	ts->writeback_pages = 0;
	ts->throttle_pauses = 0;
	ts->counting = 1;
	return ts;
}

/* A root call begins: no part charged, no contention, nothing counted. */
static inline void parts_reset_counts(struct thread_starts *ts)
{
	ts->parts_mask = 0; /* part_ns and lock_ns: zeroed as first charged */
	ts->lock_kind = 0;  /* lock_addr is read only inside a contention */
	ts->counting = 0;   /* the counts: zeroed as first counted */
	ts->throttle_pending = 0;
}

/*
 * A layer's outermost call begins at now. A layer at or above the open
 * call's root begins a new call: the old one lost its exit (a missed
 * kretprobe), and is dropped, not counted. Returns the time the call
 * begins at, its start time: now, or a later switch's (see above).
 * The thread's own program: never nested in a change of its slot.
 */
static inline __u64 parts_enter(struct thread_starts *ts, __u32 layer, __u64 now)
{
	if (layer >= NR_CALL_LAYERS)
		return now;
	parts_mark_busy(ts);
	if (!parts_open(ts) || layer <= ts->root) {
		parts_reset_counts(ts);
		ts->root = (__u8)layer;
		ts->off = 0;
		ts->last_ns = now;
		PARTS_BARRIER();
		ts->inner = (__u8)layer; /* open last: the call starts whole */
	} else {
		now = parts_charge(ts, now);
		ts->off = 0; /* entering runs on CPU, whatever was missed */
		if (layer > ts->inner)
			ts->inner = (__u8)layer;
	}
	parts_idle(ts);
	return now;
}

/*
 * A layer's outermost call ended at *now (its start slot already cleared);
 * *now becomes the time it ends at for the split: the layer's latency is
 * *now - its start. Returns 1 when it was the root: the parts are then the
 * whole call. The thread's own program, as parts_enter.
 */
static inline int parts_exit(struct thread_starts *ts, __u32 layer, __u64 *now)
{
	__u32 inner;
	int root = 0;

	if (!parts_open(ts) || layer >= NR_CALL_LAYERS)
		return 0;
	parts_mark_busy(ts);
	*now = parts_charge(ts, *now);
	ts->off = 0;
	if (layer == ts->root) {
		ts->inner = NO_LAYER;
		ts->lock_kind = 0; /* a contention_end lost: it ends with the call */
		root = 1;
	} else {
		/*
		 * The innermost layer still open outside this one (an inner
		 * one still marked open lost its exit: it cannot outlive its
		 * caller).
		 */
		inner = ts->root;
		for (__u32 l = 0; l < NR_CALL_LAYERS; l++)
			if (l > ts->root && l < layer && ts->start_ns[l])
				inner = l;
		ts->inner = (__u8)inner;
	}
	parts_idle(ts);
	return root;
}

/* The thread leaves the CPU inside a call, to wait as part says. */
static inline void parts_switch_out(struct thread_starts *ts, __u64 now, __u32 part)
{
	if (!parts_open(ts) || parts_busy(ts))
		return;
	parts_charge(ts, now);
	ts->off = (__u8)(part + 1);
	parts_idle(ts);
}

/*
 * The thread, asleep, is woken: from now until it runs it waits for a CPU,
 * not for what woke it (as the kernel's delay accounting splits them).
 */
static inline void parts_wakeup(struct thread_starts *ts, __u64 now)
{
	if (!parts_open(ts) || !ts->off || ts->off == PART_RUNQUEUE + 1 || parts_busy(ts))
		return;
	parts_charge(ts, now);
	ts->off = PART_RUNQUEUE + 1;
	parts_idle(ts);
}

/*
 * The thread, on CPU inside a call, begins to contend for the lock at
 * addr. A contention inside one (a spinlock that guards a sleeping lock's
 * wait list; a mutex that stops spinning to sleep begins again) is part
 * of the outer one, which only its own end closes.
 */
static inline void parts_lock_begin(struct thread_starts *ts, __u64 now, __u64 addr, __u32 kind)
{
	if (!parts_open(ts) || ts->lock_kind || kind >= NR_LOCK_KINDS || parts_busy(ts))
		return;
	ts->lock_start = parts_charge(ts, now);
	ts->lock_addr = addr;
	ts->lock_kind = (__u8)(kind + 1);
	parts_idle(ts);
}

/*
 * The contention for the lock at addr ended (taken, or given up). Returns
 * the time it ended at for the split (it began at lock_start), or 0 when
 * it was not the one in progress.
 */
static inline __u64 parts_lock_end(struct thread_starts *ts, __u64 now, __u64 addr)
{
	if (!parts_open(ts) || !ts->lock_kind || ts->lock_addr != addr || parts_busy(ts))
		return 0;
	now = parts_charge(ts, now);
	call_counts(ts);
	if (now - ts->lock_start > ts->lock_max_ns) {
		ts->lock_max_ns = now - ts->lock_start;
		ts->lock_max_addr = addr;
	}
	ts->lock_kind = 0;
	ts->lock_addr = 0;
	parts_idle(ts);
	return now;
}

/*
 * The journal's thread wakes the thread from a sleep not otherwise named
 * (blocked): the sleep was a wait for the journal (a commit, or a
 * transaction's credits). Its time is charged at the wakeup that follows.
 */
static inline void parts_journal_wake(struct thread_starts *ts)
{
	if (parts_open(ts) && ts->off == PART_BLOCKED + 1 && !ts->busy)
		ts->off = PART_JOURNAL + 1;
}

/* The thread runs again. */
static inline void parts_switch_in(struct thread_starts *ts, __u64 now)
{
	if (!parts_open(ts) || !ts->off || parts_busy(ts))
		return;
	parts_charge(ts, now);
	ts->off = 0;
	parts_idle(ts);
}

#endif /* CALL_PARTS_H */
