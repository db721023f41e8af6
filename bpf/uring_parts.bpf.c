// SPDX-License-Identifier: GPL-2.0
/*
 * Where an io_uring request's part changes: punted to io-wq, taken by a
 * worker, a poll armed, its retry queued as task work (uring_parts.bpf.h
 * charges the time). Attached with the layer's parts (not --no-parts).
 *
 * Included by iostackbreak.bpf.c after uring.bpf.c (one compilation unit).
 */

/* The parts: (req, rw), (req, mask, events), (req, mask) since 6.0. */
SEC("tp_btf/io_uring_queue_async_work")
int tb_uring_punt(__u64 *ctx)
{
	return uring_moves((struct io_kiocb *)ctx[0], uring_punt_part(), URING_ANY_PART);
}

SEC("tp_btf/io_uring_poll_arm")
int tb_uring_poll(__u64 *ctx)
{
	return uring_moves((struct io_kiocb *)ctx[0], URING_PART_POLL, URING_ANY_PART);
}

/* Task work added for a request: after a poll fired, its retry, which runs
 * in the submitter's context (other task work leaves the part as it is). */
SEC("tp_btf/io_uring_task_add")
int tb_uring_task_add(__u64 *ctx)
{
	return uring_moves((struct io_kiocb *)ctx[0], URING_PART_INLINE, URING_PART_POLL);
}

SEC("raw_tp/io_uring_queue_async_work")
int rt_uring_punt(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_moves((struct io_kiocb *)ctx->args[0], uring_punt_part(), URING_ANY_PART);
}

SEC("raw_tp/io_uring_poll_arm")
int rt_uring_poll(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_moves((struct io_kiocb *)ctx->args[0], URING_PART_POLL, URING_ANY_PART);
}

SEC("raw_tp/io_uring_task_add")
int rt_uring_task_add(struct bpf_raw_tracepoint_args *ctx)
{
	return uring_moves((struct io_kiocb *)ctx->args[0], URING_PART_INLINE, URING_PART_POLL);
}

/* A worker takes a punted request (every io-wq work is a request's). */
SEC("fentry/io_wq_submit_work")
int BPF_PROG(fe_uring_iowq_run, struct io_wq_work *work)
{
	struct io_kiocb *req =
	    (struct io_kiocb *)((char *)work - bpf_core_field_offset(struct io_kiocb, work));

	return uring_moves(req, URING_PART_IOWQ, URING_PART_IOWQ_QUEUED);
}
