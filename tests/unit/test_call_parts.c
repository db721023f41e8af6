// SPDX-License-Identifier: GPL-2.0
/*
 * The per-call split (bpf/call_parts.h) against hand-made sequences of
 * events, with the answers worked out by hand, and against random valid
 * sequences, whose parts must always add up to the call's latency.
 */
#include <string.h>
#include "unit.h"
#include "call_parts.h"

static struct thread_starts ts;

/* What layer_enter/layer_exit do around the split, for fs-like nesting. */
static void enter(unsigned int layer, __u64 now)
{
	if (ts.depth[layer]++)
		return;
	ts.start_ns[layer] = now;
	parts_enter(&ts, layer, now);
}

/* Returns the call's latency when the root ended, else 0. */
static __u64 leave(unsigned int layer, __u64 now)
{
	__u64 start = ts.start_ns[layer];

	if (!ts.depth[layer] || --ts.depth[layer])
		return 0;
	ts.start_ns[layer] = 0;
	return parts_exit(&ts, layer, now) ? now - start : 0;
}

static void reset(void)
{
	memset(&ts, 0, sizeof(ts));
	ts.inner = NO_LAYER;
}

static void expect_parts(const __u64 want[NR_PARTS])
{
	for (unsigned int p = 0; p < NR_PARTS; p++)
		cr_assert_eq(ts.part_ns[p], want[p], "part %u: %llu, want %llu", p,
			     (unsigned long long)ts.part_ns[p], (unsigned long long)want[p]);
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
	enter(LAYER_SYSCALL, 0);
	parts_switch_out(&ts, 5, PART_RUNQUEUE); /* preempted at the syscall */
	parts_switch_in(&ts, 105);
	enter(LAYER_VFS, 110);
	parts_switch_out(&ts, 115, PART_BLOCKED); /* a lock in the vfs */
	parts_switch_in(&ts, 1115);
	enter(LAYER_XFS, 1120);
	parts_switch_out(&ts, 1125, PART_IO_WAIT);
	parts_switch_in(&ts, 1145);
	leave(LAYER_XFS, 1145);
	parts_switch_out(&ts, 1150, PART_RUNQUEUE);
	parts_switch_in(&ts, 1157);
	leave(LAYER_VFS, 1157);
	cr_assert_eq(leave(LAYER_SYSCALL, 1162), 1162);
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
	enter(LAYER_SYSCALL, 0);
	parts_switch_out(&ts, 10, PART_IO_WAIT);
	parts_wakeup(&ts, 310);
	parts_switch_in(&ts, 350);
	parts_switch_out(&ts, 350, PART_BLOCKED);
	parts_wakeup(&ts, 400);
	parts_wakeup(&ts, 401); /* a second wake-up changes nothing */
	parts_switch_in(&ts, 407);
	cr_assert_eq(leave(LAYER_SYSCALL, 412), 412);
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
	enter(LAYER_SYSCALL, 0);
	enter(LAYER_VFS, 10);
	enter(LAYER_EXT4, 20);
	/* ext4's exit never comes; vfs's does. */
	leave(LAYER_VFS, 30);
	cr_assert_eq(ts.inner, LAYER_SYSCALL);
	cr_assert_eq(leave(LAYER_SYSCALL, 40), 40);
	expect_parts(want);
}

/* A lost root exit: the next root entry starts a new call from zero. */
Test(call_parts, lost_root_exit_starts_afresh)
{
	const __u64 want[NR_PARTS] = { [LAYER_VFS] = 50 };

	reset();
	enter(LAYER_VFS, 0);
	ts.depth[LAYER_VFS] = 0; /* as if the exit had been missed and healed */
	ts.start_ns[LAYER_VFS] = 0;
	enter(LAYER_VFS, 100);
	cr_assert_eq(leave(LAYER_VFS, 150), 50);
	expect_parts(want);
}

/* Random valid sequences: the parts always sum to the latency. */
Test(call_parts, random_sequences_add_up)
{
	uint64_t seed = 42;

	for (int round = 0; round < 20000; round++) {
		unsigned int stack[NR_CALL_LAYERS], n = 0, layer;
		__u64 now = unit_rand_range(&seed, 0, 1000000), start = now, got = 0, sum = 0;
		bool off = false;

		reset();
		layer = (unsigned int)unit_rand_range(&seed, 0, 1); /* syscall or vfs root */
		enter(layer, now);
		stack[n++] = layer;
		while (n) {
			unsigned int what = (unsigned int)unit_rand_range(&seed, 0, 3);

			now += unit_rand_range(&seed, 0, 5000);
			if (off && what == 0) {
				parts_wakeup(&ts, now);
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
			}
		}
		for (unsigned int p = 0; p < NR_PARTS; p++)
			sum += ts.part_ns[p];
		cr_assert_eq(got, now - start, "round %d: latency %llu, want %llu", round,
			     (unsigned long long)got, (unsigned long long)(now - start));
		cr_assert_eq(sum, got, "round %d: parts %llu, latency %llu", round,
			     (unsigned long long)sum, (unsigned long long)got);
	}
}
