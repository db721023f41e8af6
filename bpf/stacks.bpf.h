// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks (-K, -U), summed in the kernel by stack id: of block requests
 * (stacks_blk.bpf.h), or of the calls of the root layer (stacks_call
 * below). Owns stack_traces, stack_counts, stack_losses and stack_proc_news.
 *
 * Included by iostackbreak.bpf.c before layer.bpf.h, whose exit counts a
 * call's stack.
 */
#include "stacks.h"

#define EFAULT 14

const volatile bool stacks_kernel; /* -K */
const volatile bool stacks_user;   /* -U */
const volatile __u32 stacks_ops;   /* --io: a bit per enum blk_op counted */
const volatile bool stacks_calls;  /* -U without blk: the root layer's calls */

/* The stacks, by id; sized by user space from --max-stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__uint(value_size, STACK_DEPTH * sizeof(__u64));
} stack_traces SEC(".maps");

/* The counts by (stacks, process, disk, op): --max-stacks keys. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct stack_key);
	__type(value, struct stack_counts);
} stack_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_STACK_LOSSES);
	__type(key, __u32);
	__type(value, __u64);
} stack_losses SEC(".maps");

/*
 * -U: each new key with a user stack is told to user space at once (its
 * tgid and stack id), so that it reads the process's maps while the
 * process lives, and reads them again when the stack has an address they
 * did not map (a library loaded since). Keys are few: one message each.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} stack_proc_news SEC(".maps");

static __always_inline void stack_loss(__u32 what, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stack_losses, &what);

	if (v)
		*v += n;
}

static __always_inline bool stacks_on(void)
{
	return stacks_kernel || stacks_user;
}

/* The id of the current stack (flags: 0 kernel, BPF_F_USER_STACK user). */
static __always_inline __s32 stack_of(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stack_traces, flags);

	if (id >= 0)
		return (__s32)id;
	/* No frame to take: a kernel thread has no user stack. */
	if (id == -EFAULT)
		return STACK_NONE;
	/* -EEXIST: its bucket holds another stack; -ENOMEM: the map is full. */
	stack_loss(STACK_LOSS_TRACES, 1);
	return STACK_LOST;
}

/* A new key with a user stack: user space reads the maps it needs. */
static __always_inline void stack_key_new(const struct stack_key *key)
{
	struct stack_news *e;

	if (key->ustack < 0)
		return;
	e = bpf_ringbuf_reserve(&stack_proc_news, sizeof(*e), 0);
	if (!e) {
		/* Not told: its maps are read at the report if it still lives. */
		stack_loss(STACK_LOSS_PROCS, 1);
		return;
	}
	e->tgid = key->tgid;
	e->ustack = key->ustack;
	bpf_ringbuf_submit(e, 0);
}

/* The counts of key, made if new; NULL when the map is full. */
static __always_inline struct stack_counts *stack_counts_of(struct stack_key *key)
{
	static const struct stack_counts fresh;
	struct stack_counts *c = bpf_map_lookup_elem(&stack_counts, key);

	if (c)
		return c;
	if (!bpf_map_update_elem(&stack_counts, key, &fresh, BPF_NOEXIST))
		stack_key_new(key);
	return bpf_map_lookup_elem(&stack_counts, key);
}

/*
 * Counts requests and bytes of op under the current thread's stacks;
 * comm: the submitter's name when known (an io_uring request's), else
 * empty. Fills key for the completion. Returns false when not counted.
 */
static __always_inline bool stacks_count(void *ctx, struct stack_key *key, __u32 tgid, __u32 dev,
					 __u32 op, const char *comm, __u64 requests, __u64 bytes)
{
	struct stack_counts *c;

	if (!(stacks_ops & (1U << op)))
		return false;
	key->kstack = stacks_kernel ? stack_of(ctx, 0) : STACK_NONE;
	key->ustack = stacks_user ? stack_of(ctx, BPF_F_USER_STACK) : STACK_NONE;
	key->tgid = per_process || stacks_user ? tgid : 0;
	key->dev = per_disk ? dev : 0;
	key->op = op;
	if (comm && comm[0])
		__builtin_memcpy(key->comm, comm, sizeof(key->comm));
	else
		bpf_get_current_comm(key->comm, sizeof(key->comm));
	c = stack_counts_of(key);
	if (!c) {
		stack_loss(STACK_LOSS_KEYS, requests);
		stack_loss(STACK_LOSS_KEY_BYTES, bytes);
		return false;
	}
	__sync_fetch_and_add(&c->requests, requests);
	__sync_fetch_and_add(&c->bytes, bytes);
	return true;
}

/*
 * A call of the root layer ended after delta ns (layer_exit), in its
 * thread: its user stack (the same at exit as at entry) counts the call
 * and its time, split into its parts, each under its own key (part + 1),
 * or whole (part 0) where calls are not split.
 */
static __always_inline void stacks_call(void *ctx, struct thread_starts *ts, __u32 op,
					__u64 delta, bool split)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct stack_key key = {};
	struct stack_counts *c;

	if (!(stacks_ops & (1U << op)))
		return;
	key.kstack = STACK_NONE;
	key.ustack = stack_of(ctx, BPF_F_USER_STACK);
	key.tgid = id >> 32;
	key.op = op;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	for (__u32 p = 0; p <= NR_PARTS; p++) {
		__u64 ns = p == NR_PARTS ? (split ? 0 : delta) : split ? parts_ns(ts, p) : 0;

		if (!ns)
			continue;
		key.part = p == NR_PARTS ? 0 : p + 1;
		c = stack_counts_of(&key);
		if (!c) {
			stack_loss(STACK_LOSS_KEYS, 1);
			continue;
		}
		__sync_fetch_and_add(&c->requests, 1);
		__sync_fetch_and_add(&c->time_ns, ns);
		__sync_fetch_and_add(&c->timed, 1);
	}
}

