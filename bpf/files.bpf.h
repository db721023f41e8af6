/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A call's file, position and size, read from its arguments wherever they
 * sit (a fentry context, a kprobe's registers, a syscall tracepoint's
 * record, the user's syscall registers), and the --file match by device
 * and inode.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef FILES_BPF_H
#define FILES_BPF_H

/*
 * want_args: read each call's file (and, for events, its position and
 * size) from its arguments; off, the programs never touch them. nr_files,
 * targ_files: --file (0: every file).
 */
const volatile bool want_args;
const volatile __u32 nr_files; /* --file: 0, every file */
const volatile struct file_id targ_files[MAX_FILE_FILTER];
#ifdef BENCH_WITHOUT_OPTIONS
/* bench/sysprog.py's build without --file (and the arguments only it and
 * events read): compiled out, as in events.bpf.h. */
#define want_args false
#define nr_files 0
#endif

/*
 * How a program reaches its function's arguments: the same argument sits in
 * a fentry context slot, a kprobe's registers, a syscall tracepoint's record,
 * or the registers of the user's system call (raw sys_enter, and the arch's
 * syscall wrappers under fentry or kprobe).
 */
enum arg_method {
	AM_FENTRY,     /* ctx: the function's arguments, then its return value */
	AM_KPROBE,     /* ctx: pt_regs at the function's entry or return */
	AM_SYS_TP,     /* ctx: syscalls:sys_enter_* / sys_exit_* record */
	AM_SYS_RAW,    /* ctx: raw sys_enter/sys_exit (regs, id or ret) */
	AM_SYS_BTF,    /* the same from tp_btf: regs is a pointer it may load from */
	AM_SYS_FENTRY, /* ctx: the wrapper's (regs), then its return value */
	AM_SYS_KPROBE, /* ctx: pt_regs of the wrapper, whose first argument is regs */
	AM_CELL_TP,    /* ctx: a cell's own tracepoint record */
};

/*
 * Argument n (0-3) of the user's system call, from its saved registers;
 * btf: regs is BTF-typed (tp_btf), read with plain loads, not helpers.
 */
static __always_inline __u64 sys_arg(struct pt_regs *regs, int n, bool btf)
{
	switch (n) {
	case 0:
		return btf ? PT_REGS_PARM1_SYSCALL(regs) : PT_REGS_PARM1_CORE_SYSCALL(regs);
	case 1:
		return btf ? PT_REGS_PARM2_SYSCALL(regs) : PT_REGS_PARM2_CORE_SYSCALL(regs);
	case 2:
		return btf ? PT_REGS_PARM3_SYSCALL(regs) : PT_REGS_PARM3_CORE_SYSCALL(regs);
	default:
		return btf ? PT_REGS_PARM4_SYSCALL(regs) : PT_REGS_PARM4_CORE_SYSCALL(regs);
	}
}

static __always_inline __u64 arg_n(void *ctx, int method, int n)
{
	struct pt_regs *regs = ctx;

	switch (method) {
	case AM_FENTRY:
		return ((__u64 *)ctx)[n];
	case AM_KPROBE:
		if (n == 0)
			return PT_REGS_PARM1(regs);
		if (n == 1)
			return PT_REGS_PARM2(regs);
		if (n == 2)
			return PT_REGS_PARM3(regs);
		return PT_REGS_PARM4(regs);
	case AM_SYS_TP: {
		/* Copied, not loaded: clang may fold the field's offset into a
		 * moved context pointer, which the verifier refuses to load. */
		__u64 v = 0;

		bpf_probe_read_kernel(&v, sizeof(v),
				      &((struct trace_event_raw_sys_enter *)ctx)->args[n]);
		return v;
	}
	case AM_SYS_BTF:
		return sys_arg((struct pt_regs *)((__u64 *)ctx)[0], n, true);
	case AM_SYS_RAW:
	case AM_SYS_FENTRY:
		return sys_arg((struct pt_regs *)((__u64 *)ctx)[0], n, false);
	case AM_SYS_KPROBE:
		return sys_arg((struct pt_regs *)PT_REGS_PARM1(regs), n, false);
	}
	return 0;
}

/* The arguments of a function of each kind (fexit finds its return value
 * after them). */
static __always_inline int args_count(int args)
{
	switch (args) {
	case ARGS_FILE_VEC:
		return 5;
	case ARGS_FILE_RW:
	case ARGS_FILE_ITER:
	case ARGS_FILE:
		return 4;
	case ARGS_KIOCB:
	case ARGS_OPEN_PATH:
	case ARGS_OPEN_INODE:
		return 2;
	}
	return 1; /* a syscall wrapper: (regs) */
}

/* The value the call returned, seen by its exit program. */
static __always_inline __s64 ret_of(void *ctx, int method, int args)
{
	switch (method) {
	case AM_FENTRY:
	case AM_SYS_FENTRY:
		return ((__s64 *)ctx)[args_count(args)];
	case AM_KPROBE:
	case AM_SYS_KPROBE:
		return PT_REGS_RC((struct pt_regs *)ctx);
	case AM_SYS_TP:
		return ((struct trace_event_raw_sys_exit *)ctx)->ret;
	case AM_SYS_RAW:
	case AM_SYS_BTF:
		return ((__s64 *)ctx)[1];
	}
	return 0;
}

/* The open file behind a descriptor of the current task, or NULL. */
static __always_inline struct file *file_of_fd(__u64 fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if ((__s64)fd < 0 || !fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/*
 * bpf_rdonly_cast() (6.2+; inlined by the verifier since 6.12) makes the
 * file pointer read from the descriptor table one the program loads from
 * directly: two plain loads where BPF_CORE_READ makes two helper calls,
 * on every call the raw syscall pair sees. rdonly_cast: user space found
 * the kfunc in the kernel's BTF. Weak, and behind a knob the verifier
 * resolves: on a kernel without it the call stays unresolved in code
 * the verifier removes as dead.
 */
#ifndef IOSB_NO_KFUNCS
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#endif
/* In both objects (Makefile), so that their .rodata is laid out alike. */
const volatile bool rdonly_cast;

/*
 * The same from tp_btf: the task, its files and fdtable are BTF pointers
 * it loads from. The array of files is not typed for the verifier (a
 * pointer to pointers): where the kfunc is, its slot is cast to the one
 * struct every kernel has with a pointer at offset 0, struct
 * callback_head (next), and read by a plain load, a fault reading 0, as
 * any load through a cast pointer; else one probe read fetches it. On an
 * AMD EPYC the check cost 41 ns per call with the probe read, 10 with the
 * load (bench/results/sysprog-2026-11-27.md).
 */
static __always_inline struct file *file_of_fd_btf(__u64 fd, struct task_struct *cur)
{
	struct fdtable *fdt = cur->files->fdt;
	struct file *f = NULL;

	if (!fdt || fd >= fdt->max_fds) /* a negative fd is a huge __u64 */
		return NULL;
#ifndef IOSB_NO_KFUNCS
	if (rdonly_cast) {
		struct callback_head *slot = bpf_rdonly_cast(
			&fdt->fd[fd], bpf_core_type_id_kernel(struct callback_head));

		return (struct file *)slot->next;
	}
#endif
	bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]);
	return f;
}

/* cur: the current task (a BTF pointer), read by the caller under tp_btf. */
static __always_inline struct file *fd_file(__u64 fd, int method, struct task_struct *cur)
{
	return method == AM_SYS_BTF ? file_of_fd_btf(fd, cur) : file_of_fd(fd);
}

/* Is (superblock dev, inode number) one of the --file files? */
static __always_inline bool file_id_wanted(__u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < MAX_FILE_FILTER; i++) {
		if (i >= nr_files)
			break;
		if (targ_files[i].ino == ino && targ_files[i].dev == dev)
			return true;
	}
	return false;
}

static __always_inline bool inode_wanted(struct inode *inode)
{
	if (!inode)
		return false;
	return file_id_wanted(BPF_CORE_READ(inode, i_sb, s_dev), BPF_CORE_READ(inode, i_ino));
}

/* A loff_t the function takes by pointer (NULL for streams: no position). */
static __always_inline __u64 pos_at(__u64 ppos)
{
	__s64 pos = 0;

	if (!ppos || bpf_probe_read_kernel(&pos, sizeof(pos), (void *)ppos))
		return NO_POS;
	return (__u64)pos;
}

/*
 * What a layer's call is about: its file (and, under --file, whether it is
 * one of ours), its position and size. Returns false when --file leaves the
 * call out. An open's file is only known at its exit (ARGS_OPEN: pending).
 * known: the file behind the call's descriptor if it was read already.
 */
static __always_inline bool call_args_read(struct thread_starts *ts, void *ctx, int method,
					   int args, __u32 layer, __u32 op, struct file *known,
					   struct task_struct *cur)
{
	struct file *f = NULL;
	struct inode *inode = NULL;
	__u64 pos = NO_POS, bytes = NO_POS; /* NO_POS: not known, or none */
	bool root = layer == root_layer;

	switch (args) {
	case ARGS_FD:
	case ARGS_FD_POS:
	case ARGS_FD_VEC:
	case ARGS_FD_VEC_POS:
		f = known ? known : fd_file(arg_n(ctx, method, 0), method, cur);
		if (!f || op == FSOP_FSYNC)
			break;
		if (args == ARGS_FD || args == ARGS_FD_POS)
			bytes = arg_n(ctx, method, 2);
		if (args == ARGS_FD_POS || args == ARGS_FD_VEC_POS)
			pos = arg_n(ctx, method, 3);
		/* preadv2/pwritev2 take -1 for "the file position" */
		if (args == ARGS_FD || args == ARGS_FD_VEC || pos == NO_POS)
			pos = BPF_CORE_READ(f, f_pos);
		break;
	case ARGS_OPEN:
		if (nr_files)
			ts->file_pending = 1;
		if (root) {
			ts->file = 0;
			ts->pos = NO_POS;
			ts->bytes = NO_POS;
		}
		return true;
	case ARGS_FILE_RW:
		f = (struct file *)arg_n(ctx, method, 0);
		bytes = arg_n(ctx, method, 2);
		pos = pos_at(arg_n(ctx, method, 3));
		break;
	case ARGS_FILE_VEC:
		f = (struct file *)arg_n(ctx, method, 0);
		pos = pos_at(arg_n(ctx, method, 3));
		break;
	case ARGS_FILE_ITER:
		f = (struct file *)arg_n(ctx, method, 0);
		bytes = BPF_CORE_READ((struct iov_iter *)arg_n(ctx, method, 1), count);
		pos = pos_at(arg_n(ctx, method, 2));
		break;
	case ARGS_KIOCB: {
		struct kiocb *iocb = (struct kiocb *)arg_n(ctx, method, 0);

		f = BPF_CORE_READ(iocb, ki_filp);
		pos = BPF_CORE_READ(iocb, ki_pos);
		bytes = BPF_CORE_READ((struct iov_iter *)arg_n(ctx, method, 1), count);
		break;
	}
	case ARGS_FILE:
		f = (struct file *)arg_n(ctx, method, 0);
		break;
	case ARGS_OPEN_PATH: /* the file is not set up yet: its path is */
		f = (struct file *)arg_n(ctx, method, 1);
		inode = BPF_CORE_READ((struct path *)arg_n(ctx, method, 0), dentry, d_inode);
		break;
	case ARGS_OPEN_INODE:
		f = (struct file *)arg_n(ctx, method, 1);
		inode = (struct inode *)arg_n(ctx, method, 0);
		break;
	}
	if (nr_files && args != ARGS_TP_DEV_INO) {
		if (!inode && f)
			inode = BPF_CORE_READ(f, f_inode);
		if (!inode_wanted(inode))
			return false;
	}
	if (root) {
		ts->file = (__u64)f;
		ts->pos = op == FSOP_READ || op == FSOP_WRITE ? pos : NO_POS;
		ts->bytes = op == FSOP_READ || op == FSOP_WRITE ? bytes : NO_POS;
	}
	return true;
}

/*
 * An open(2) ends: f is the file of the descriptor it returned (found once,
 * by open_left_out()), for both --file and its event. Under --file the open
 * is decided on that file: returns true when it is to be left out.
 */
static __always_inline bool open_exit(struct thread_starts *ts, struct file *f)
{
	ts->file = (__u64)f;
	if (!nr_files || !ts->file_pending)
		return false;
	ts->file_pending = 0;
	return !f || !inode_wanted(BPF_CORE_READ(f, f_inode));
}

#endif /* FILES_BPF_H */
