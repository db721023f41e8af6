// SPDX-License-Identifier: GPL-2.0
/*
 * The process tree: following the children of traced processes (-f,
 * -- COMMAND) from fork to exit, in the kernel.
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

static __always_inline int on_fork(__u32 parent_tgid, __u32 child_tgid)
{
	__u8 one = 1;
	long err;

	/* A new thread of a traced process is traced already. */
	if (parent_tgid == child_tgid || !tgid_traced(parent_tgid))
		return 0;
	err = map_err(bpf_map_update_elem(&followed, &child_tgid, &one, BPF_NOEXIST));
	if (err && err != -EEXIST)
		count_drop(DROP_PROCESS_SET_FULL);
	return 0;
}

/* The last thread of a process is gone (signal->live reached 0 before this
 * tracepoint in do_exit()): forget it, its pid may be reused. */
static __always_inline int on_exit(__u32 tgid, int live)
{
	if (!live)
		bpf_map_delete_elem(&followed, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int tb_fork(__u64 *ctx)
{
	struct task_struct *parent = (void *)ctx[0], *child = (void *)ctx[1];

	return on_fork(parent->tgid, child->tgid);
}

SEC("tp_btf/sched_process_exit")
int tb_exit(__u64 *ctx)
{
	struct task_struct *task = (void *)ctx[0];

	return on_exit(task->tgid, task->signal->live.counter);
}

SEC("raw_tp/sched_process_fork")
int rt_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (void *)ctx->args[0], *child = (void *)ctx->args[1];

	return on_fork(BPF_CORE_READ(parent, tgid), BPF_CORE_READ(child, tgid));
}

SEC("raw_tp/sched_process_exit")
int rt_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (void *)ctx->args[0];

	return on_exit(BPF_CORE_READ(task, tgid), BPF_CORE_READ(task, signal, live.counter));
}
