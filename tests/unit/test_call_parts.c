// SPDX-License-Identifier: GPL-2.0
/*
 * The per-call split (bpf/call_parts.h) against hand-made sequences of
 * events, with the answers worked out by hand, and against random valid
 * sequences, whose parts must always add up to the call's latency.
 */
#include <string.h>
#include "unit.h"
#include "call_parts.h"
#include "thread_slots.h"

static struct thread_starts ts;

/* A switch out (preempted) and back in, due between a program's clock and its split. */
static __u64 preempt_out, preempt_in;

static void preempt_next(__u64 out, __u64 in)
{
	preempt_out = out;
	preempt_in = in;
}

/* The sched_switch programs run while the thread's program is preempted. */
static void preempted(void)
{
	if (!preempt_in)
		return;
	parts_switch_out(&ts, preempt_out, PART_RUNQUEUE);
	parts_switch_in(&ts, preempt_in);
	preempt_out = preempt_in = 0;
}

static bool nests(unsigned int layer)
{
	return layer != LAYER_SYSCALL;
}

/* What layer_enter does, with its clock read at now. */
static void enter(unsigned int layer, __u64 now)
{
	if (!slot_enter(&ts, layer, nests(layer)))
		return;
	preempted();
	slot_begin(&ts, layer, nests(layer), parts_enter(&ts, layer, now));
}

/* What layer_exit closed last, and the layer's latency (0: untimed). */
static struct slot_end end;
static __u64 layer_ns;
/* What layer_exit counted since the test began: lost exits, evictions. */
static unsigned int missed, evicted;

/* What layer_exit does, with its clock read at now. Returns the call's
 * latency when the root ended, else 0. */
static __u64 leave(unsigned int layer, __u64 now)
{
	int root;

	layer_ns = 0;
	preempted();
	end = slot_exit(&ts, layer, nests(layer), ~0U);
	missed += end.missed;
	evicted += end.evicted;
	if (!end.start)
		return 0;
	root = parts_exit(&ts, layer, &now);
	layer_ns = now - end.start;
	return root ? layer_ns : 0;
}

/* A clock never reads 0: a start of 0 says "none". */
#define T0 1000000

static void reset(void)
{
	missed = evicted = 0;
	memset(&ts, 0, sizeof(ts));
	ts.inner = NO_LAYER;
}

static void expect_parts(const __u64 want[NR_PARTS])
{
	for (unsigned int p = 0; p < NR_PARTS; p++) {
		cr_assert_eq(parts_ns(&ts, p), want[p], "part %u: %llu, want %llu", p,
			     (unsigned long long)parts_ns(&ts, p), (unsigned long long)want[p]);
		/* The mask names exactly the parts charged (record_call). */
		cr_assert_eq(!!(ts.parts_mask & (1U << p)), !!want[p], "part %u: mask %#x", p,
			     ts.parts_mask);
	}
}

Test(call_parts, one_layer_is_all_self_time)
{
	const __u64 want[NR_PARTS] = { [LAYER_SYSCALL] = 250 };

	reset();
	enter(LAYER_SYSCALL, 100);
	cr_assert_eq(leave(LAYER_SYSCALL, 350), 250);
	expect_parts(want);
	cr_assert_not(parts_open(&ts));
}

/*
 * syscall > vfs > ext4, ext4 sleeps in io_schedule:
 *   100 syscall | 110 vfs | 120 ext4 | 150 out (io) | 650 in | 700 -ext4
 *   | 710 -vfs | 720 -syscall
 */
Test(call_parts, nested_layers_and_io_wait)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 10 + 10,
		[LAYER_VFS] = 10 + 10,
		[LAYER_EXT4] = 30 + 50,
		[PART_IO_WAIT] = 500,
	};

	reset();
	enter(LAYER_SYSCALL, 100);
	enter(LAYER_VFS, 110);
	enter(LAYER_EXT4, 120);
	parts_switch_out(&ts, 150, PART_IO_WAIT);
	parts_switch_in(&ts, 650);
	cr_assert_eq(leave(LAYER_EXT4, 700), 0);
	cr_assert_eq(leave(LAYER_VFS, 710), 0);
	cr_assert_eq(leave(LAYER_SYSCALL, 720), 620);
	expect_parts(want);
}

/* Off CPU at each depth, each kind charged to its own part. */
Test(call_parts, switches_at_every_depth)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 5 + 5 + 5, [LAYER_VFS] = 5 + 5 + 5, [LAYER_XFS] = 5,
		[PART_RUNQUEUE] = 100 + 7,   [PART_BLOCKED] = 1000,   [PART_IO_WAIT] = 20,
	};

	reset();
	enter(LAYER_SYSCALL, T0);
	parts_switch_out(&ts, T0 + 5, PART_RUNQUEUE); /* preempted at the syscall */
	parts_switch_in(&ts, T0 + 105);
	enter(LAYER_VFS, T0 + 110);
	parts_switch_out(&ts, T0 + 115, PART_BLOCKED); /* a lock in the vfs */
	parts_switch_in(&ts, T0 + 1115);
	enter(LAYER_XFS, T0 + 1120);
	parts_switch_out(&ts, T0 + 1125, PART_IO_WAIT);
	parts_switch_in(&ts, T0 + 1145);
	leave(LAYER_XFS, T0 + 1145);
	parts_switch_out(&ts, T0 + 1150, PART_RUNQUEUE);
	parts_switch_in(&ts, T0 + 1157);
	leave(LAYER_VFS, T0 + 1157);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 1162), 1162);
	expect_parts(want);
}

/* Woken, a thread waits for a CPU: the rest of its wait is runqueue. */
Test(call_parts, wait_until_woken_then_runqueue)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 10 + 5,
		[PART_IO_WAIT] = 300,
		[PART_BLOCKED] = 50,
		[PART_RUNQUEUE] = 40 + 7,
	};

	reset();
	enter(LAYER_SYSCALL, T0);
	parts_switch_out(&ts, T0 + 10, PART_IO_WAIT);
	parts_wakeup(&ts, T0 + 310);
	parts_switch_in(&ts, T0 + 350);
	parts_switch_out(&ts, T0 + 350, PART_BLOCKED);
	parts_wakeup(&ts, T0 + 400);
	parts_wakeup(&ts, T0 + 401); /* a second wake-up changes nothing */
	parts_switch_in(&ts, T0 + 407);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 412), 412);
	expect_parts(want);
}

/* A thread that switches with no call open is left alone. */
Test(call_parts, switches_outside_a_call_change_nothing)
{
	const __u64 want[NR_PARTS] = { [LAYER_SYSCALL] = 10 };

	reset();
	parts_switch_out(&ts, 0, PART_BLOCKED);
	parts_switch_in(&ts, 50);
	enter(LAYER_SYSCALL, 100);
	parts_switch_in(&ts, 105); /* a switch-in without its switch-out */
	cr_assert_eq(leave(LAYER_SYSCALL, 110), 10);
	expect_parts(want);
}

/* A lost inner exit (a missed kretprobe): the caller's exit closes it. */
Test(call_parts, lost_inner_exit_is_closed_by_its_caller)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 10 + 10,
		[LAYER_VFS] = 10,
		[LAYER_EXT4] = 10,
	};

	reset();
	enter(LAYER_SYSCALL, T0);
	enter(LAYER_VFS, T0 + 10);
	enter(LAYER_EXT4, T0 + 20);
	/* ext4's exit never comes; vfs's does. */
	leave(LAYER_VFS, T0 + 30);
	cr_assert_eq(end.missed, 1, "the lost ext4 exit is counted once");
	cr_assert_eq(ts.inner, LAYER_SYSCALL);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 40), 40);
	expect_parts(want);
}

/* A lost root exit: the next root entry starts a new call from zero. */
Test(call_parts, lost_root_exit_starts_afresh)
{
	const __u64 want[NR_PARTS] = { [LAYER_VFS] = 50 };

	reset();
	enter(LAYER_VFS, T0);
	ts.depth[LAYER_VFS] = 0; /* as if the exit had been missed and healed */
	ts.start_ns[LAYER_VFS] = 0;
	enter(LAYER_VFS, T0 + 100);
	cr_assert_eq(leave(LAYER_VFS, T0 + 150), 50);
	expect_parts(want);
}

/*
 * Preempted inside the exit's own program, after its clock read (300) and
 * before the split: the switch is charged with later clocks (310 out, 400
 * in). Nothing wraps, nothing is charged twice, and the call ends for the
 * split and its latency alike at 400: it could not return before.
 */
Test(call_parts, clock_steps_back_between_exit_and_charge)
{
	const __u64 want[NR_PARTS] = { [LAYER_SYSCALL] = 210, [PART_RUNQUEUE] = 90 };

	reset();
	enter(LAYER_SYSCALL, T0 + 100);
	preempt_next(T0 + 310, T0 + 400);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 300), 300);
	expect_parts(want);
	cr_assert_not(parts_open(&ts));
}

/* The same at an inner layer's exit and at an inner layer's entry. */
Test(call_parts, clock_steps_back_at_inner_exit_and_entry)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 10 + 10 + 5,
		[LAYER_VFS] = 20 + 5,
		[LAYER_EXT4] = 30,
		[PART_RUNQUEUE] = 40 + 60,
	};

	reset();
	enter(LAYER_SYSCALL, T0);
	/* vfs's clock reads 10, the switch is charged at 20 and 60 */
	preempt_next(T0 + 20, T0 + 60);
	enter(LAYER_VFS, T0 + 10);
	cr_assert_eq(ts.start_ns[LAYER_VFS], T0 + 60, "vfs begins when the split says");
	enter(LAYER_EXT4, T0 + 80);
	leave(LAYER_EXT4, T0 + 110);
	cr_assert_eq(layer_ns, 30);
	/* vfs's clock reads 115, the switch is charged at 115 and 175 */
	preempt_next(T0 + 115, T0 + 175);
	leave(LAYER_VFS, T0 + 115);
	cr_assert_eq(layer_ns, 175 - 60);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 180), 180);
	expect_parts(want);
}

/* A lost inner exit heals when its caller ends: the layer is timed again. */
Test(call_parts, lost_inner_exit_heals)
{
	reset();
	enter(LAYER_SYSCALL, T0);
	enter(LAYER_VFS, T0 + 10);
	enter(LAYER_EXT4, T0 + 20); /* its exit is lost */
	leave(LAYER_VFS, T0 + 30);
	cr_assert_eq(end.missed, 1, "counted by the first caller that ends");
	leave(LAYER_SYSCALL, T0 + 40);
	cr_assert_eq(missed, 1, "and once");
	cr_assert_eq(ts.depth[LAYER_EXT4], 0);
	cr_assert_eq(ts.start_ns[LAYER_EXT4], 0);

	enter(LAYER_SYSCALL, T0 + 100);
	enter(LAYER_VFS, T0 + 110);
	enter(LAYER_EXT4, T0 + 120);
	leave(LAYER_EXT4, T0 + 150);
	cr_assert_eq(layer_ns, 30, "ext4 is timed again");
	leave(LAYER_VFS, T0 + 160);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 170), 70);
	cr_assert_eq(missed, 1);
}

/*
 * slot_heal tests only the layers the run times (timed_layers): those of
 * -T syscall are the system call's alone, and a stale vfs depth there
 * (a state no such run makes) is left as it is, and not counted.
 */
Test(call_parts, heal_looks_only_at_timed_layers)
{
	reset();
	enter(LAYER_SYSCALL, T0);
	ts.depth[LAYER_VFS] = 1;
	ts.start_ns[LAYER_EXT4] = T0 + 5;
	end = slot_exit(&ts, LAYER_SYSCALL, false, 1U << LAYER_SYSCALL);
	cr_assert_eq(end.start, T0);
	cr_assert_eq(end.missed, 0);
	cr_assert_eq(ts.depth[LAYER_VFS], 1);
	cr_assert_eq(ts.start_ns[LAYER_EXT4], T0 + 5);

	/* timed, the same two are lost exits: closed and counted */
	ts.start_ns[LAYER_SYSCALL] = T0 + 10;
	end = slot_exit(&ts, LAYER_SYSCALL, false,
			(1U << LAYER_SYSCALL) | (1U << LAYER_VFS) | (1U << LAYER_EXT4));
	cr_assert_eq(end.missed, 2);
	cr_assert_eq(ts.depth[LAYER_VFS], 0);
	cr_assert_eq(ts.start_ns[LAYER_EXT4], 0);
}

/*
 * A layer re-entered (overlayfs) whose inner call loses its exit: the
 * outer exit only leaves a depth of 1, and the system call's end heals it.
 */
Test(call_parts, lost_nested_exit_of_one_layer_heals_at_the_root)
{
	reset();
	enter(LAYER_SYSCALL, T0);
	enter(LAYER_VFS, T0 + 10);
	enter(LAYER_VFS, T0 + 20); /* its exit is lost */
	leave(LAYER_VFS, T0 + 30);
	cr_assert_eq(layer_ns, 0, "taken for the inner call's exit");
	cr_assert_eq(ts.depth[LAYER_VFS], 1);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 40), 40);
	cr_assert_eq(end.missed, 1);

	enter(LAYER_SYSCALL, T0 + 100);
	enter(LAYER_VFS, T0 + 110);
	leave(LAYER_VFS, T0 + 130);
	cr_assert_eq(layer_ns, 20, "vfs is timed again");
	leave(LAYER_SYSCALL, T0 + 140);
}

/* Calls that end in order lose nothing: no heal, no count. */
Test(call_parts, ordered_calls_heal_nothing)
{
	reset();
	for (__u64 t = T0; t < T0 + 1000; t += 100) {
		enter(LAYER_SYSCALL, t);
		enter(LAYER_VFS, t + 10);
		enter(LAYER_VFS, t + 20);
		enter(LAYER_BTRFS, t + 30);
		leave(LAYER_BTRFS, t + 40);
		leave(LAYER_VFS, t + 50);
		leave(LAYER_VFS, t + 60);
		cr_assert_eq(layer_ns, 50);
		cr_assert_eq(leave(LAYER_SYSCALL, t + 70), 70);
	}
	cr_assert_eq(missed + evicted, 0);
}

/*
 * The LRU map takes a thread's slot: what a layer_enter finding none does
 * (the slot a fresh one; the counts go on).
 */
static void evict_then_enter(unsigned int layer, __u64 now)
{
	unsigned int m = missed, e = evicted;

	reset();
	missed = m;
	evicted = e;
	slot_recreated(&ts, layer);
	enter(layer, now);
}

/*
 * A system call waits; its slot goes to another thread; the vfs call it
 * makes next finds none, and makes a new one. The system call's exit is
 * counted as evicted, once, and not timed; the next call is whole again.
 */
Test(call_parts, slot_evicted_inside_a_call_is_counted_once)
{
	reset();
	enter(LAYER_SYSCALL, T0);
	evict_then_enter(LAYER_VFS, T0 + 10);
	leave(LAYER_VFS, T0 + 20);
	cr_assert_eq(layer_ns, 10);
	cr_assert_not(end.evicted);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 30), 0);
	cr_assert(end.evicted);
	cr_assert_eq(end.start, 0, "its start is gone: not timed");

	enter(LAYER_SYSCALL, T0 + 100);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 150), 50);
	cr_assert_eq(evicted, 1);
}

/* Two layers were open when the slot went: still one loss. */
Test(call_parts, one_eviction_is_one_loss)
{
	reset();
	enter(LAYER_SYSCALL, T0);
	enter(LAYER_VFS, T0 + 10);
	evict_then_enter(LAYER_EXT4, T0 + 20);
	leave(LAYER_EXT4, T0 + 30);
	leave(LAYER_VFS, T0 + 40);
	leave(LAYER_SYSCALL, T0 + 50);
	cr_assert_eq(evicted, 1);
	cr_assert_eq(missed, 0, "an eviction is no lost exit");
}

/*
 * A slot taken while no call was open is no loss: a thread's next call
 * enters its outermost layer first (or, a kernel thread that makes no
 * system calls, never ends a system call), and the entry clears the mark.
 */
Test(call_parts, slot_evicted_between_calls_is_no_loss)
{
	reset();
	evict_then_enter(LAYER_SYSCALL, T0);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 10), 10);

	/* a kworker's vfs calls: the syscall layer is marked, never ended */
	evict_then_enter(LAYER_VFS, T0 + 100);
	leave(LAYER_VFS, T0 + 120);
	cr_assert_eq(layer_ns, 20);
	enter(LAYER_VFS, T0 + 200);
	leave(LAYER_VFS, T0 + 230);
	cr_assert_eq(layer_ns, 30);
	/* and its first system call, if any, begins with an entry */
	enter(LAYER_SYSCALL, T0 + 300);
	cr_assert_eq(leave(LAYER_SYSCALL, T0 + 310), 10);
	cr_assert_eq(evicted + missed, 0);
}

/* A call --file leaves out clears the mark: its exit is no loss either. */
Test(call_parts, left_out_call_clears_the_mark)
{
	reset();
	evict_then_enter(LAYER_VFS, T0);
	leave(LAYER_VFS, T0 + 10);
	if (slot_enter(&ts, LAYER_SYSCALL, false))
		slot_left_out(&ts, LAYER_SYSCALL);
	leave(LAYER_SYSCALL, T0 + 20);
	cr_assert_eq(evicted, 0);
	cr_assert_eq(end.start, 0);
}

/*
 * A write behind the inode's rwsem: it spins (on CPU), sleeps, is woken and
 * waits for a CPU, takes the lock; a spinlock of the wait list inside is
 * part of the rwsem's contention. Self time and the sleep become lock; the
 * wait for a CPU stays runqueue.
 *   100 syscall | 110 begin rwsem W | 120 begin spin | 125 end spin
 *   | 130 out (blocked) | 630 woken | 640 in | 650 end rwsem | 660 -syscall
 */
Test(call_parts, lock_contention_is_the_lock_part)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 10 + 10,
		[PART_LOCK] = 20 + 500 + 10,
		[PART_RUNQUEUE] = 10,
	};

	reset();
	enter(LAYER_SYSCALL, 100);
	parts_lock_begin(&ts, 110, 0xa000, LOCK_RWSEM_WRITE);
	parts_lock_begin(&ts, 120, 0xb000, LOCK_OTHER);
	parts_lock_end(&ts, 125, 0xb000);
	parts_switch_out(&ts, 130, PART_BLOCKED);
	parts_wakeup(&ts, 630);
	parts_switch_in(&ts, 640);
	parts_lock_end(&ts, 650, 0xa000);
	cr_assert_eq(leave(LAYER_SYSCALL, 660), 560);
	/* the spinlock's 5 are the rwsem's: the contention began with it */
	cr_assert_eq(parts_lock_ns(&ts, LOCK_RWSEM_WRITE), 20 + 500 + 10);
	cr_assert_eq(parts_lock_ns(&ts, LOCK_OTHER), 0);
	expect_parts(want);
}

/*
 * A call does not zero the sums of every part as it begins (parts_mask): a
 * part of the call before, a sleep and a lock, is not the next call's.
 *   call 1: 100 syscall | 110 begin mutex | 120 out (blocked) | 320 woken
 *           | 330 in | 340 end mutex | 350 -syscall
 *   call 2: 400 syscall | 470 -syscall
 */
Test(call_parts, the_last_calls_parts_are_not_this_ones)
{
	const __u64 want1[NR_PARTS] = {
		[LAYER_SYSCALL] = 10 + 10,
		[PART_LOCK] = 10 + 200 + 10,
		[PART_RUNQUEUE] = 10,
	};
	const __u64 want2[NR_PARTS] = { [LAYER_SYSCALL] = 70 };

	reset();
	enter(LAYER_SYSCALL, 100);
	parts_lock_begin(&ts, 110, 0xa000, LOCK_MUTEX);
	parts_switch_out(&ts, 120, PART_BLOCKED);
	parts_wakeup(&ts, 320);
	parts_switch_in(&ts, 330);
	parts_lock_end(&ts, 340, 0xa000);
	cr_assert_eq(leave(LAYER_SYSCALL, 350), 250);
	expect_parts(want1);
	cr_assert_eq(parts_lock_ns(&ts, LOCK_MUTEX), 220);
	enter(LAYER_SYSCALL, 400);
	cr_assert_eq(leave(LAYER_SYSCALL, 470), 70);
	expect_parts(want2);
	for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
		cr_assert_eq(parts_lock_ns(&ts, k), 0, "lock kind %u", k);
	/* the stale sums are still there: only the mask says they are gone */
	cr_assert_eq(ts.part_ns[PART_LOCK], 220);
}

/*
 * A call's counts (block requests, journal, pages, its longest contention)
 * are not zeroed as it begins, only as it counts its first (call_counts):
 * a call that counts nothing reads zeros, never the call before's.
 *   call 1: 100 syscall | 2 requests, 8 KiB, 3 pages | contention 110..150
 *           | 200 -syscall
 *   call 2: 300 syscall | 360 -syscall
 *   call 3: 400 syscall | 1 page | 450 -syscall
 */
Test(call_parts, the_last_calls_counts_are_not_this_ones)
{
	reset();
	enter(LAYER_SYSCALL, 100);
	call_counts(&ts)->blk_requests += 2;
	call_counts(&ts)->blk_bytes += 8192;
	call_counts(&ts)->cache_miss_pages += 3;
	parts_lock_begin(&ts, 110, 0xa000, LOCK_MUTEX);
	parts_lock_end(&ts, 150, 0xa000);
	cr_assert_eq(leave(LAYER_SYSCALL, 200), 100);
	cr_assert(ts.counting);
	cr_assert_eq(call_counts(&ts)->blk_requests, 2);
	cr_assert_eq(ts.blk_bytes, 8192);
	cr_assert_eq(ts.lock_max_ns, 40);
	cr_assert_eq(ts.lock_max_addr, 0xa000);

	enter(LAYER_SYSCALL, 300);
	cr_assert_not(ts.counting, "a call begins counting nothing");
	cr_assert_eq(ts.blk_requests, 2, "and does not zero the last call's counts");
	cr_assert_eq(leave(LAYER_SYSCALL, 360), 60);
	cr_assert_not(ts.counting);
	cr_assert_eq(call_counts(&ts)->blk_requests, 0, "read, they are this call's: none");
	cr_assert_eq(ts.blk_bytes, 0);
	cr_assert_eq(ts.cache_miss_pages, 0);
	cr_assert_eq(ts.lock_max_ns, 0);
	cr_assert_eq(ts.lock_max_addr, 0);

	enter(LAYER_SYSCALL, 400);
	call_counts(&ts)->cache_miss_pages += 1;
	cr_assert_eq(leave(LAYER_SYSCALL, 450), 50);
	cr_assert_eq(ts.cache_miss_pages, 1);
	cr_assert_eq(ts.blk_requests, 0);
}

/*
 * An interrupt lands while the thread's exit program is changing its slot
 * (busy): a lock contended in it fires contention_begin and _end with the
 * thread as current. Those change nothing; the outer change is the only
 * one, and the parts still sum to the latency.
 *   100 syscall | exit at 400, interrupted: contention 300..350
 */
Test(call_parts, a_contention_inside_a_change_changes_nothing)
{
	const __u64 want[NR_PARTS] = { [LAYER_SYSCALL] = 300 };

	reset();
	enter(LAYER_SYSCALL, 100);
	ts.busy = 1; /* the exit program is inside parts_exit */
	parts_lock_begin(&ts, 300, 0xc000, LOCK_OTHER);
	cr_assert_eq(parts_lock_end(&ts, 350, 0xc000), 0);
	cr_assert_eq(ts.last_ns, 100);
	cr_assert_eq(ts.lock_kind, 0);
	ts.busy = 0;
	cr_assert_eq(leave(LAYER_SYSCALL, 400), 300);
	expect_parts(want);
	cr_assert_eq(parts_lock_ns(&ts, LOCK_OTHER), 0);
}

/*
 * The thread's enter program is preempted while it opens the call (the
 * system call tracepoints are preemptible from 6.14): sched_switch out
 * and in run inside it. They change nothing, so the call starts whole at
 * its own time, not at the last call's end; the preemption, inside the
 * program, is its self time.
 *   last call ended at 50 | 100 syscall, preempted 120..170 | 400 exit
 */
Test(call_parts, a_switch_inside_the_enter_program_changes_nothing)
{
	const __u64 want[NR_PARTS] = { [LAYER_SYSCALL] = 300 };

	reset();
	enter(LAYER_SYSCALL, 10);
	cr_assert_eq(leave(LAYER_SYSCALL, 50), 40);
	/* parts_enter(100), up to the call opened with last_ns still 50: */
	ts.busy = 1;
	parts_reset_counts(&ts);
	ts.root = ts.inner = LAYER_SYSCALL;
	ts.off = 0;
	/* preempted there */
	parts_switch_out(&ts, 120, PART_RUNQUEUE);
	parts_switch_in(&ts, 170);
	/* the rest of parts_enter, then slot_begin */
	ts.last_ns = 100;
	ts.busy = 0;
	slot_begin(&ts, LAYER_SYSCALL, false, 100);
	cr_assert_eq(leave(LAYER_SYSCALL, 400), 300);
	expect_parts(want);
}

/*
 * The same contention between two charges (the interrupt came outside
 * any charge): its time is the lock part, and each ns is charged once.
 */
Test(call_parts, a_contention_between_charges_is_the_lock_part)
{
	const __u64 want[NR_PARTS] = { [LAYER_SYSCALL] = 200 + 50, [PART_LOCK] = 50 };

	reset();
	enter(LAYER_SYSCALL, 100);
	parts_lock_begin(&ts, 300, 0xc000, LOCK_OTHER);
	parts_lock_end(&ts, 350, 0xc000);
	cr_assert_eq(ts.busy, 0);
	cr_assert_eq(leave(LAYER_SYSCALL, 400), 300);
	expect_parts(want);
}

/*
 * An fsync sleeps until the journal's thread wakes it: journal; a sleep in
 * io_schedule the journal thread ends stays io_wait.
 *   100 syscall | 150 out (blocked) | 900 woken by jbd2 | 910 in
 *   | 920 out (io) | 980 woken by jbd2 | 990 in | 1000 -syscall
 */
Test(call_parts, a_sleep_the_journal_ends_is_the_journal_part)
{
	const __u64 want[NR_PARTS] = {
		[LAYER_SYSCALL] = 50 + 10 + 10,
		[PART_JOURNAL] = 750,
		[PART_IO_WAIT] = 60,
		[PART_RUNQUEUE] = 10 + 10,
	};

	reset();
	enter(LAYER_SYSCALL, 100);
	parts_switch_out(&ts, 150, PART_BLOCKED);
	parts_journal_wake(&ts);
	parts_wakeup(&ts, 900);
	parts_switch_in(&ts, 910);
	parts_switch_out(&ts, 920, PART_IO_WAIT);
	parts_journal_wake(&ts);
	parts_wakeup(&ts, 980);
	parts_switch_in(&ts, 990);
	cr_assert_eq(leave(LAYER_SYSCALL, 1000), 900);
	expect_parts(want);
}

/*
 * Random valid sequences, with programs preempted between their clock read
 * and their split: the parts always sum to the latency, and none wraps.
 */
Test(call_parts, random_sequences_add_up)
{
	uint64_t seed = 42;

	for (int round = 0; round < 20000; round++) {
		unsigned int stack[NR_CALL_LAYERS], n = 0, layer;
		__u64 now = unit_rand_range(&seed, T0, 2 * T0), start = now, got = 0, sum = 0;
		__u64 lock_sum = 0;
		bool off = false;

		reset();
		layer = (unsigned int)unit_rand_range(&seed, 0, 1); /* syscall or vfs root */
		enter(layer, now);
		stack[n++] = layer;
		while (n) {
			unsigned int what = (unsigned int)unit_rand_range(&seed, 0, 3);
			__u64 in = 0;

			now += unit_rand_range(&seed, 0, 5000);
			if (!off && what && unit_rand_range(&seed, 0, 3) == 0) {
				in = now + unit_rand_range(&seed, 50, 500);
				preempt_next(now + unit_rand_range(&seed, 0, 50), in);
			}
			if (off && what == 0) {
				if (unit_rand_range(&seed, 0, 1))
					parts_journal_wake(&ts); /* the waker: jbd2 */
				parts_wakeup(&ts, now);
			} else if (!off && what == 2 && unit_rand_range(&seed, 0, 1)) {
				/* a contention begins or ends (another lock's end: none) */
				__u64 lock = 0x1000 * unit_rand_range(&seed, 1, 2);

				if (ts.lock_kind)
					parts_lock_end(&ts, now, lock);
				else
					parts_lock_begin(&ts, now, lock,
							 (__u32)unit_rand_range(&seed, 0,
										NR_LOCK_KINDS - 1));
			} else if (off) {
				parts_switch_in(&ts, now);
				off = false;
			} else if (what == 0) {
				parts_switch_out(
				    &ts, now,
				    (__u32)unit_rand_range(&seed, PART_IO_WAIT, PART_RUNQUEUE));
				off = true;
			} else if (what == 1 && stack[n - 1] < LAYER_BTRFS) {
				layer = (unsigned int)unit_rand_range(&seed, stack[n - 1] + 1,
								      LAYER_BTRFS);
				enter(layer, now);
				stack[n++] = layer;
			} else {
				got = leave(stack[--n], now);
				cr_assert_lt(layer_ns, 1ULL << 40, "round %d: layer %u took %llu",
					     round, stack[n], (unsigned long long)layer_ns);
			}
			/* the thread goes on after its preemption */
			if (in)
				now = in;
		}
		for (unsigned int p = 0; p < NR_PARTS; p++) {
			cr_assert_leq(parts_ns(&ts, p), got, "round %d: part %u wrapped", round, p);
			sum += parts_ns(&ts, p);
		}
		for (unsigned int k = 0; k < NR_LOCK_KINDS; k++)
			lock_sum += parts_lock_ns(&ts, k);
		cr_assert_eq(lock_sum, parts_ns(&ts, PART_LOCK), "round %d: lock kinds", round);
		cr_assert_eq(ts.lock_kind, 0, "round %d: a contention outlived its call", round);
		cr_assert_eq(got, now - start, "round %d: latency %llu, want %llu", round,
			     (unsigned long long)got, (unsigned long long)(now - start));
		cr_assert_eq(sum, got, "round %d: parts %llu, latency %llu", round,
			     (unsigned long long)sum, (unsigned long long)got);
	}
}
