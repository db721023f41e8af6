// SPDX-License-Identifier: GPL-2.0
/*
 * The throttled part of a call (policy dirty): a writer that dirties pages
 * faster than its disk writes them back is paused in balance_dirty_pages(),
 * which announces each pause (writeback:balance_dirty_pages, in the
 * writer's context) right before it sleeps in io_schedule_timeout(pause).
 * The pause is noted in the thread's slot; sched_switch (offcpu.bpf.c)
 * charges the sleep that follows to PART_THROTTLED instead of io_wait,
 * until its wake-up, as any sleep is charged. The part is the time off the
 * CPU inside balance_dirty_pages, so the parts still add up to the call.
 *
 * Included by iostackbreak.bpf.c after why.bpf.c (see there).
 */

/*
 * The tracepoint's record, with the one field read here, spelled out so
 * that CO-RE finds it in this kernel's trace_event_raw_balance_dirty_pages
 * wherever the fields before it moved (6.1 and 6.18 differ in the
 * tracepoint's arguments, not in this field).
 */
struct trace_event_raw_balance_dirty_pages___iosb {
	long pause; /* jiffies; <= 0: no sleep */
} __attribute__((preserve_access_index));

SEC("tracepoint/writeback/balance_dirty_pages")
int tp_dirty_pause(struct trace_event_raw_balance_dirty_pages___iosb *ctx)
{
	struct thread_starts *ts = current_slots_tp();

	if (!ts || !parts_open(ts) || BPF_CORE_READ(ctx, pause) <= 0)
		return 0;
	call_counts(ts)->throttle_pauses++;
	ts->throttle_pending = 1;
	return 0;
}
