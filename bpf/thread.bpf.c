// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's fast slot (thread.bpf.h) freed as the thread exits, for the
 * next thread whose id points at it. Attached whenever fast slots are on,
 * before any layer: no slot is claimed that its exit does not free.
 *
 * sched_process_exit fires in do_exit(), in the exiting thread, after its
 * last system call and before its files are closed: no traced call of the
 * thread begins after it. One missed (a program already running on the
 * CPU) leaves the slot to its dead owner; a thread with the same id later
 * claims it again, and until then the threads that point at it use task
 * storage: slower, never wrong.
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

SEC("tp_btf/sched_process_exit")
int tb_thread_gone(__u64 *ctx)
{
	fast_slot_free(bpf_get_current_task_btf());
	return 0;
}
