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

_Static_assert(NR_PARTS + 1 <= USTACK_NS, "a call's copy carries each part's time");

const volatile bool stacks_kernel; /* -K */
const volatile bool stacks_user;   /* -U */
const volatile __u32 stacks_ops;   /* --io: a bit per enum blk_op counted */
const volatile bool stacks_calls;  /* -U without blk: the root layer's calls */
const volatile __u32 ustack_mode;  /* --user-stack: enum ustack_mode */
const volatile __u32 ustack_size;  /* --user-stack-size: bytes copied, dwarf */

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

/* DWARF: the copies' numbers (struct ustack_head's seq). */
__u32 ustack_seq;

/* DWARF: the copy being made, per CPU (far more than the BPF stack holds). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_snap);
} ustack_buf SEC(".maps");

/* DWARF: the copies, to user space, which unwinds them; sized by it. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ustack_snaps SEC(".maps");

/* auto: the walk user space chose for a process (tgid: enum ustack_mode). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ustack_modes SEC(".maps");

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

/*
 * Is the current thread's user stack copied for DWARF unwinding? Not a
 * kernel thread's (it has none); in auto, a process user space has not
 * looked at yet is copied: its first stacks are then whole too.
 */
static __always_inline bool ustack_dwarf(void)
{
	struct task_struct *task;
	__u32 tgid, *mode;

	if (ustack_mode == USTACK_FP)
		return false;
	task = bpf_get_current_task_btf();
	if (!task->mm)
		return false;
	if (ustack_mode == USTACK_DWARF)
		return true;
	tgid = bpf_get_current_pid_tgid() >> 32;
	mode = bpf_map_lookup_elem(&ustack_modes, &tgid);
	return !mode || *mode != USTACK_FP;
}

/* The per-CPU copy, its times cleared. */
static __always_inline struct ustack_snap *ustack_buf_get(void)
{
	__u32 zero = 0;
	struct ustack_snap *s = bpf_map_lookup_elem(&ustack_buf, &zero);

	if (s)
		__builtin_memset(s->h.ns, 0, sizeof(s->h.ns));
	return s;
}

/*
 * Copies the current thread's user registers and up to ustack_size bytes
 * of its stack from the stack pointer into s, and sends it with key and
 * its weights. The copy goes page by page: it stops where the stack's
 * mapping ends (the top of a stack), instead of failing whole. Returns the
 * copy's number, 0 when the ring buffer had no room for it.
 */
static __always_inline __u32 ustack_send(struct ustack_snap *s, const struct stack_key *key,
					 __u64 requests, __u64 bytes)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u32 got = 0, want = ustack_size;
	__u64 sp;

	__builtin_memcpy(&s->h.key, key, sizeof(s->h.key));
	s->h.tid = (__u32)bpf_get_current_pid_tgid();
	s->h.regs[0] = PT_REGS_IP_CORE(regs);
	s->h.regs[1] = sp = PT_REGS_SP_CORE(regs);
	s->h.regs[2] = PT_REGS_FP_CORE(regs);
#if defined(__TARGET_ARCH_arm64)
	s->h.regs[3] = PT_REGS_RET_CORE(regs);
#else
	s->h.regs[3] = 0;
#endif
	s->h.requests = requests;
	s->h.bytes = bytes;
	/* 0 names no copy: the numbers start at 1, and skip 0 on wrapping. */
	s->h.seq = __sync_fetch_and_add(&ustack_seq, 1) + 1;
	if (!s->h.seq)
		s->h.seq = __sync_fetch_and_add(&ustack_seq, 1) + 1;
	if (want > USTACK_SIZE_MAX)
		want = USTACK_SIZE_MAX;
	for (int i = 0; i < USTACK_SIZE_MAX / USTACK_PAGE + 1; i++) {
		__u32 len = USTACK_PAGE - ((sp + got) & (USTACK_PAGE - 1));

		if (got >= want || got >= USTACK_SIZE_MAX)
			break;
		if (len > want - got)
			len = want - got;
		if (len > USTACK_PAGE)
			break;
		if (bpf_probe_read_user(&s->stack[got & (USTACK_SIZE_MAX - 1)], len,
					(void *)(sp + got)))
			break;
		got += len;
	}
	if (got > USTACK_SIZE_MAX)
		got = USTACK_SIZE_MAX;
	s->h.size = got;
	s->h.asked = want;
	if (bpf_ringbuf_output(&ustack_snaps, s, sizeof(s->h) + got, 0)) {
		stack_loss(STACK_LOSS_SNAPS, 1);
		return 0;
	}
	return s->h.seq;
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
 * empty. Fills key for the completion, and *ucopy with the number of the
 * copy of the user stack (key->ustack STACK_UNWOUND; 0 when the copy was
 * lost). Returns false when not counted.
 */
static __always_inline bool stacks_count(void *ctx, struct stack_key *key, __u32 *ucopy, __u32 tgid,
					 __u32 dev, __u32 op, const char *comm, __u64 requests,
					 __u64 bytes)
{
	struct stack_counts *c;
	struct ustack_snap *s;
	bool dwarf;

	if (!(stacks_ops & (1U << op)))
		return false;
	dwarf = stacks_user && ustack_dwarf();
	key->kstack = stacks_kernel ? stack_of(ctx, 0) : STACK_NONE;
	key->ustack = stacks_user && !dwarf ? stack_of(ctx, BPF_F_USER_STACK) : STACK_NONE;
	key->tgid = per_process || stacks_user ? tgid : 0;
	key->dev = per_disk ? dev : 0;
	key->op = op;
	if (comm && comm[0])
		__builtin_memcpy(key->comm, comm, sizeof(key->comm));
	else
		bpf_get_current_comm(key->comm, sizeof(key->comm));
	if (dwarf) {
		/* Counted by user space once unwound, its time from the
		 * completion's message naming the copy. */
		s = ustack_buf_get();
		*ucopy = s ? ustack_send(s, key, requests, bytes) : 0;
		key->ustack = STACK_UNWOUND;
		return true;
	}
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
	struct ustack_snap *s;

	if (!(stacks_ops & (1U << op)))
		return;
	key.kstack = STACK_NONE;
	key.tgid = id >> 32;
	key.op = op;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (ustack_dwarf()) {
		/* One copy for the call: its times by part, summed by user space. */
		s = ustack_buf_get();
		if (!s)
			return;
		s->h.ns[0] = split ? 0 : delta;
		for (__u32 p = 0; p < NR_PARTS; p++)
			s->h.ns[p + 1] = split ? parts_ns(ts, p) : 0;
		ustack_send(s, &key, 1, 0);
		return;
	}
	key.ustack = stack_of(ctx, BPF_F_USER_STACK);
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

