// SPDX-License-Identifier: GPL-2.0
/*
 * The system call layer: read, write, open and fsync calls, timed from
 * their entry to their exit, by whichever source the plan picked: the raw
 * sys_enter/sys_exit pair filtered by number, a syscalls: tracepoint pair
 * per system call, or fentry/kprobe on the arch's syscall wrappers.
 *
 * Included by iostackbreak.bpf.c (one compilation unit, see there).
 */

/* A syscalls:sys_enter_/sys_exit_ pair, fentry/fexit and kprobe/kretprobe
 * on the wrapper, per system call of the table. */
#define SYSCALL(op, name, args)                                                                    \
	ENTRY_EXIT("tracepoint/syscalls/sys_enter_" #name, se_##name,                              \
		   "tracepoint/syscalls/sys_exit_" #name, sx_##name, LAYER_SYSCALL, op, AM_SYS_TP, \
		   args)                                                                           \
	ENTRY_EXIT("fentry", fe_sys_##name, "fexit", fx_sys_##name, LAYER_SYSCALL, op,             \
		   AM_SYS_FENTRY, args)                                                            \
	ENTRY_EXIT("kprobe", kp_sys_##name, "kretprobe", kr_sys_##name, LAYER_SYSCALL, op,         \
		   AM_SYS_KPROBE, args)
#include "cells.def"

/*
 * Two programs see every system call and keep those of the table by
 * number: fewer links than a tracepoint pair per syscall (attach and detach
 * are per link), and a cheaper dispatch per traced call. sysnr_op[nr] is
 * the cell's op + 1, 0 for a syscall we do not trace; user space fills it
 * from the build architecture's numbers (bpf/cells.def); sysnr_args[nr]
 * says where the call's file is in its arguments (enum call_args).
 */
const volatile __u8 sysnr_op[SYSNR_SLOTS];
const volatile __u8 sysnr_args[SYSNR_SLOTS];

/*
 * A 32-bit task on a 64-bit kernel makes its system calls with the other
 * ABI's numbers (ia32 read is 3, x86-64's close; arm's dup2 is 63, arm64's
 * read): they are left out, as the syscalls:sys_enter_* tracepoints leave
 * them out on x86 and arm64 (the kernel's ARCH_TRACE_IGNORE_COMPAT_SYSCALLS).
 * x86: TS_COMPAT in thread_info.status, per system call (arch/x86/include/
 * asm/thread_info.h); x32 calls carry __X32_SYSCALL_BIT and miss the table.
 * arm64: TIF_32BIT, bit 22 of thread_info.flags, set for an AArch32 task
 * (arch/arm64/include/asm/thread_info.h: is_compat_task()).
 */
#define X86_TS_COMPAT 0x0002
#define ARM64_TIF_32BIT (1UL << 22)

static __always_inline bool compat_syscall(struct task_struct *cur, bool btf)
{
#if defined(__TARGET_ARCH_x86)
	if (btf)
		return cur->thread_info.status & X86_TS_COMPAT;
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), thread_info.status) &
	       X86_TS_COMPAT;
#elif defined(__TARGET_ARCH_arm64)
	if (btf)
		return cur->thread_info.flags & ARM64_TIF_32BIT;
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), thread_info.flags) &
	       ARM64_TIF_32BIT;
#else
#error "the raw syscall source needs this architecture's compat task test"
#endif
}

/* The number of the system call a sys_exit reports, from its registers. */
static __always_inline __u64 exit_syscall_nr(struct pt_regs *regs, bool btf)
{
#if defined(__TARGET_ARCH_x86)
	return btf ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	/* An s32 here: zero-extended, so that the 64-bit bound check against
	 * SYSNR_SLOTS is one the verifier follows (sign-extended, 6.1's
	 * refused the table lookup; NO_SYSCALL, -1, stays out of the table). */
	return (__u32)(btf ? regs->syscallno : BPF_CORE_READ(regs, syscallno));
#else
#error "the raw syscall source needs this architecture's syscall number register"
#endif
}

/*
 * ctx: (regs, id) at entry, (regs, ret) at exit, in both program types.
 * Under tp_btf the current task is read once, here, for every use of it
 * in the call's program: each read is a helper call (~5 ns).
 */
static __always_inline int raw_sys_enter(void *ctx, __u64 nr, bool btf)
{
	struct task_struct *cur;

	if (nr >= SYSNR_SLOTS || !sysnr_op[nr])
		return 0;
	cur = btf ? bpf_get_current_task_btf() : NULL;
	if (compat_syscall(cur, btf))
		return 0;
	return layer_enter(LAYER_SYSCALL, sysnr_op[nr] - 1, false, ctx, btf ? AM_SYS_BTF : AM_SYS_RAW,
			   sysnr_args[nr], cur);
}

static __always_inline int raw_sys_exit(void *ctx, struct pt_regs *regs, bool btf)
{
	__u64 nr = exit_syscall_nr(regs, btf);
	struct task_struct *cur;
	__u32 op;

	if (nr >= SYSNR_SLOTS || !sysnr_op[nr])
		return 0;
	cur = btf ? bpf_get_current_task_btf() : NULL;
	/* Compat exits too: an execve of a 32-bit binary returns as one. */
	if (compat_syscall(cur, btf))
		return 0;
	op = sysnr_op[nr] - 1;
	return layer_exit(LAYER_SYSCALL, op, false, ctx, btf ? AM_SYS_BTF : AM_SYS_RAW,
			  sysnr_args[nr], cur);
}

SEC("tp_btf/sys_enter")
int tb_sys_enter(__u64 *ctx)
{
	return raw_sys_enter(ctx, ctx[1], true);
}

SEC("tp_btf/sys_exit")
int tb_sys_exit(__u64 *ctx)
{
	return raw_sys_exit(ctx, (struct pt_regs *)ctx[0], true);
}

SEC("raw_tp/sys_enter")
int rt_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return raw_sys_enter(ctx, ctx->args[1], false);
}

SEC("raw_tp/sys_exit")
int rt_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return raw_sys_exit(ctx, (struct pt_regs *)ctx->args[0], false);
}
