/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread's start slots: which call of a layer is timed, and how the
 * slots heal when an exit, or the slot itself, was lost. Pure logic on
 * struct thread_starts, shared by the BPF programs (layer_enter and
 * layer_exit run it) and the unit tests, like call_parts.h.
 *
 * A layer that nests (overlayfs, a loop over a file) counts its depth and
 * times its outermost call; the system call layer cannot nest, so its slot
 * is simply overwritten by the next entry, which also heals a lost exit.
 * Layers nest in their order (syscall, vfs, then a file system): a call of
 * a layer ends after every call of a later layer it made.
 */
#ifndef THREAD_SLOTS_H
#define THREAD_SLOTS_H

/*
 * start_ns of a layer whose call may have been in progress when the
 * thread's slot was taken for another thread (the LRU hash fallback): no
 * real start is this close to boot. Its exit is counted, not timed.
 */
#define SLOT_EVICTED 1ULL

/*
 * A call of layer begins. Returns 1 when it is the one to time (then
 * slot_begin, or slot_left_out), 0 when it is an inner call of a layer
 * already open, only counted in depth.
 */
static inline int slot_enter(struct thread_starts *ts, __u32 layer, bool nest)
{
	if (layer >= NR_LAYERS)
		return 0;
	if (nest && ts->depth[layer]) {
		ts->depth[layer]++;
		return 0;
	}
	return 1;
}

/* The call to time begins at now. */
static inline void slot_begin(struct thread_starts *ts, __u32 layer, bool nest, __u64 now)
{
	if (layer >= NR_LAYERS)
		return;
	if (nest)
		ts->depth[layer] = 1;
	ts->start_ns[layer] = now;
}

/*
 * The call is left out (--file): its exit must find no start, not one a
 * lost exit or an eviction left behind.
 */
static inline void slot_left_out(struct thread_starts *ts, __u32 layer)
{
	if (layer < NR_LAYERS)
		ts->start_ns[layer] = 0;
}

/*
 * The thread's slot is new, but the thread had one before: the LRU map
 * gave it to another thread. The calls of the layers outside the one that
 * made the slot may be in progress (a system call whose slot went while it
 * waited): their starts are gone. Marked, their exits count the loss; an
 * entry of the layer overwrites the mark, so a layer that was not open is
 * never counted.
 */
static inline void slot_recreated(struct thread_starts *ts, __u32 layer)
{
	for (__u32 l = 0; l < NR_CALL_LAYERS; l++)
		if (l < layer)
			ts->start_ns[l] = SLOT_EVICTED;
}

/* What an exit closed. */
struct slot_end {
	__u64 start;  /* the timed call's start; 0: nothing to time */
	__u32 missed; /* calls of later layers whose exits were lost */
	bool evicted; /* a call in progress when the slot was lost */
};

/*
 * The outermost call of layer ended: no call of a later layer can still
 * be open in the thread. One that is lost its exit (a kretprobe out of
 * instances): closed here, or its layer would stay open (depth above 0)
 * and never be timed again. Returns how many were closed. timed: bit l
 * set for each layer this run times; no other layer has a call to close
 * (a constant in the programs: the others' tests are not even run).
 */
static inline __u32 slot_heal(struct thread_starts *ts, __u32 layer, __u32 timed)
{
	__u32 missed = 0;

	for (__u32 l = 0; l < NR_CALL_LAYERS; l++) {
		if (l <= layer || !(timed & (1U << l)))
			continue;
		if (!ts->depth[l] && !ts->start_ns[l])
			continue; /* most: a test, not two stores */
		if (ts->depth[l] || ts->start_ns[l] > SLOT_EVICTED)
			missed++;
		ts->depth[l] = 0;
		ts->start_ns[l] = 0;
	}
	return missed;
}

/*
 * A call of layer ends. An inner call of a nesting layer only leaves its
 * depth; the outermost (or a call entered before tracing began, depth 0)
 * clears the layer's start, heals the later layers (of those timed, as
 * slot_heal) and says what it was.
 */
static inline struct slot_end slot_exit(struct thread_starts *ts, __u32 layer, bool nest,
					__u32 timed)
{
	struct slot_end end = { 0 };
	__u64 start;

	if (layer >= NR_LAYERS)
		return end;
	if (nest && ts->depth[layer] > 1) {
		ts->depth[layer]--;
		return end;
	}
	if (nest)
		ts->depth[layer] = 0;
	start = ts->start_ns[layer];
	ts->start_ns[layer] = 0;
	end.missed = slot_heal(ts, layer, timed);
	if (start != SLOT_EVICTED) {
		end.start = start;
		return end;
	}
	/* One eviction is one loss: the marks of the outer layers go too. */
	end.evicted = true;
	for (__u32 l = 0; l < NR_CALL_LAYERS; l++)
		if (ts->start_ns[l] == SLOT_EVICTED)
			ts->start_ns[l] = 0;
	return end;
}

#endif /* THREAD_SLOTS_H */
