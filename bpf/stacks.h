/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks of block I/O (-K, -U): the types the BPF side (stacks.bpf.h) and
 * user space (src/kernel/stacks_read.c, src/report/stacks.c) share.
 */
#ifndef IOSB_STACKS_H
#define IOSB_STACKS_H

/* Frames kept per stack: the kernel's own bound (perf_event_max_stack's
 * default); a deeper stack keeps its innermost frames. */
#define STACK_DEPTH 127

/* --max-stacks: keys (stack, process, disk, op) counted in the kernel. */
#define DEFAULT_MAX_STACKS 1024

/* A stack id that names no stack in stack_traces. */
#define STACK_NONE (-1) /* not asked for, or none (a kernel thread's user stack) */
#define STACK_LOST (-2) /* the stack map had no room for it: counted, see below */
#define STACK_UNWOUND (-3) /* copied for user space to unwind (struct ustack_head) */

/*
 * One key of the counts. tgid: with -P, or with -U (user addresses mean
 * something only in their process; user space merges processes of a name
 * again without -P). dev: with -D.
 */
struct stack_key {
	__u32 tgid;
	__u32 dev;
	__s32 kstack;
	__s32 ustack;
	__u32 op;   /* enum blk_op; calls: enum fs_op */
	__u32 part; /* calls: the part + 1; 0: the whole call, or a block request */
	char comm[16];
};

/*
 * Block requests: counted at their origin (requests, bytes) and completion
 * (time). Calls: requests are the calls (with the part), time their time
 * (in the part).
 */
struct stack_counts {
	__u64 requests;
	__u64 bytes;
	__u64 time_ns; /* device time; with -Q from the origin */
	__u64 timed;   /* requests whose completion added their time */
};

/* -U: a new key's user stack, told to user space (stack_proc_news). */
struct stack_news {
	__u32 tgid;
	__s32 ustack;
};

/* What the bounded maps could not hold: indexes of stack_losses. */
enum stack_loss {
	STACK_LOSS_TRACES,   /* a stack the stack map had no room for (STACK_LOST) */
	STACK_LOSS_KEYS,     /* requests with no room for their key (--max-stacks) */
	STACK_LOSS_KEY_BYTES, /* their bytes */
	STACK_LOSS_PROCS,    /* new user stacks user space was not told of (ring full) */
	STACK_LOSS_SNAPS,    /* DWARF: stack copies the ring buffer had no room for */
	NR_STACK_LOSSES,
};

/*
 * --user-stack=fp|dwarf|auto: how user stacks are walked. fp: the kernel
 * follows frame pointers (bpf_get_stackid). dwarf: the thread's user
 * registers and the top of its user stack are copied (struct ustack_snap)
 * and user space unwinds the copy with the binaries' call frame
 * information (.eh_frame, .debug_frame), as perf --call-graph=dwarf does.
 * auto: per process, fp where its executable has frame pointers, dwarf
 * where it has not or until user space has looked (ustack_modes).
 */
enum ustack_mode {
	USTACK_AUTO,
	USTACK_FP,
	USTACK_DWARF,
};

/*
 * The copy's room: the bound of the BPF program's copy loop. The option
 * (--user-stack-size) goes to USTACK_SIZE_OPT_MAX only: Linux 6.1's
 * verifier refuses the block layer's programs, which copy at a request's
 * origin, when they may copy 12 or 16 KiB, and also when this room is cut
 * to 8 KiB; with this room and copies of at most 8 KiB it takes them.
 */
#define USTACK_SIZE_MAX 16384
#define USTACK_SIZE_OPT_MAX 8192
#define DEFAULT_USTACK_SIZE 8192
#define USTACK_PAGE 4096

/* The times a call's copy carries: by key.part (0: the whole call). */
#define USTACK_NS 17

/* A copy of a thread's user stack, as it goes to user space. */
struct ustack_head {
	struct stack_key key; /* ustack unused; kstack: -K's id */
	__u32 tid;
	__u32 size;  /* bytes copied from regs[1] (the stack pointer) up */
	__u32 asked; /* bytes asked: fewer were copied where the stack ends */
	__u32 seq;   /* the copy's number, that its request's time names */
	__u64 regs[4]; /* ip, sp, frame pointer; arm64: its link register */
	__u64 requests;
	__u64 bytes;
	__u64 ns[USTACK_NS];
};

/* A block request whose user stack was copied (seq) completed after ns:
 * sent after its copy on the same ring, its time for that copy's key. */
struct ustack_done {
	__u32 seq;
	__u32 pad;
	__u64 ns;
};

struct ustack_snap {
	struct ustack_head h;
	/* A page more than the most copied: each piece's bounds are then
	 * plain to the verifier. */
	__u8 stack[USTACK_SIZE_MAX + USTACK_PAGE];
};

#endif /* IOSB_STACKS_H */
