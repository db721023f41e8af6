// SPDX-License-Identifier: GPL-2.0
/*
 * Off CPU, for the parts of a call: sched_switch charges the time a thread
 * with a call open spends preempted, in io_wait or otherwise blocked, and
 * sched_wakeup ends a sleep (the rest is waiting for a CPU). What the sleep
 * was for, when its waker tells (the journal), sched_waking says before
 * (why.bpf.c).
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

/* Before 5.14 the task's state was "long state" ("sched: Change
 * task_struct::state", 5.14). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

#define KTASK_RUNNING 0x0000 /* include/linux/sched.h */

/* Why a thread leaves the CPU: preempted (still runnable), waiting for I/O
 * (io_schedule sets in_iowait), or any other sleep. */
static __always_inline __u32 offcpu_part(struct task_struct *prev, bool preempt, bool btf)
{
	long state;

	if (bpf_core_field_exists(((struct task_struct___pre514 *)0)->state))
		state = BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
	else
		state = btf ? prev->__state : BPF_CORE_READ(prev, __state);
	if (preempt || state == KTASK_RUNNING)
		return PART_RUNQUEUE;
	if (btf ? BPF_CORE_READ_BITFIELD(prev, in_iowait)
		: BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		return PART_IO_WAIT;
	return PART_BLOCKED;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	struct thread_starts *ts = slots_of(prev, btf);
	__u64 now = 0;

	if (ts && parts_open(ts)) {
		__u32 part = offcpu_part(prev, preempt, btf);

		now = bpf_ktime_get_ns();
		/* The sleep of a pause balance_dirty_pages announced
		 * (throttle.bpf.c); a preemption before it is not. */
		if (ts->throttle_pending && part != PART_RUNQUEUE) {
			ts->throttle_pending = 0;
			part = PART_THROTTLED;
		}
		parts_switch_out(ts, now, part);
	}
	ts = slots_of(next, btf);
	if (ts && parts_open(ts) && ts->off) {
		if (!now)
			now = bpf_ktime_get_ns();
		if (trace_on)
			emit_slice(btf ? next->pid : BPF_CORE_READ(next, pid), call_ns_of(ts),
				   parts_now(ts), 0, ts->last_ns, now);
		parts_switch_in(ts, now);
	}
	return 0;
}

/* A sleeping thread is woken: the rest of its wait is for a CPU. */
static __always_inline int on_wakeup(struct task_struct *task, bool btf)
{
	struct thread_starts *ts = slots_of(task, btf);
	__u64 now;

	if (!ts || !parts_open(ts) || !ts->off || ts->off == PART_RUNQUEUE + 1)
		return 0;
	now = bpf_ktime_get_ns();
	if (trace_on)
		emit_slice(btf ? task->pid : BPF_CORE_READ(task, pid), call_ns_of(ts), parts_now(ts),
			   0, ts->last_ns, now);
	parts_wakeup(ts, now);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int tb_wakeup(__u64 *ctx)
{
	return on_wakeup((struct task_struct *)ctx[0], true);
}

SEC("raw_tp/sched_wakeup")
int rt_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((struct task_struct *)ctx->args[0], false);
}

SEC("tp_btf/sched_switch")
int tb_switch(__u64 *ctx)
{
	return on_switch((bool)ctx[0], (struct task_struct *)ctx[1], (struct task_struct *)ctx[2],
			 true);
}

SEC("raw_tp/sched_switch")
int rt_switch(struct bpf_raw_tracepoint_args *ctx)
{
	return on_switch((bool)ctx->args[0], (struct task_struct *)ctx->args[1],
			 (struct task_struct *)ctx->args[2], false);
}
