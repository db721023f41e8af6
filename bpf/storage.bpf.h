/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Storage files only (enum fd_kind in iostackbreak.h): the syscall and vfs
 * layers time calls on regular files, block devices and directories, told
 * from the inode of the call's file before anything else is done; calls on
 * other files are counted by kind and leave. --all-fds (all_fds) counts
 * every call as a storage call.
 *
 * Part of the one compilation unit of iostackbreak.bpf.c (see there).
 */
#ifndef STORAGE_BPF_H
#define STORAGE_BPF_H

const volatile bool all_fds;

/* Calls left out, per CPU, by LEFT_OUT_INDEX(layer, op, kind). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_LEFT_OUT);
	__type(key, __u32);
	__type(value, __u64);
} left_out SEC(".maps");

/* File types, from include/uapi/linux/stat.h: vmlinux.h has no macros. */
#define KS_IFMT 00170000
#define KS_IFSOCK 0140000
#define KS_IFREG 0100000
#define KS_IFBLK 0060000
#define KS_IFDIR 0040000
#define KS_IFIFO 0010000

static __always_inline __u32 mode_kind(__u16 mode)
{
	switch (mode & KS_IFMT) {
	case KS_IFREG:
	case KS_IFBLK:
	case KS_IFDIR: /* fsync of a directory makes a rename durable */
		return FD_STORAGE;
	case KS_IFIFO:
		return FD_PIPE;
	case KS_IFSOCK:
		return FD_SOCKET;
	}
	return FD_OTHER; /* also 0: no file, or its inode could not be read */
}

static __always_inline __u32 file_kind(struct file *f)
{
	return f ? mode_kind(BPF_CORE_READ(f, f_inode, i_mode)) : FD_OTHER;
}

/* file_kind() for the raw syscall pair under tp_btf (AM_SYS_BTF). */
static __always_inline __u32 file_kind_of(struct file *f, int method)
{
#ifdef IOSB_NO_KFUNCS
	(void)method;
	return file_kind(f);
#else
	struct file *bf;

	if (!rdonly_cast || method != AM_SYS_BTF)
		return file_kind(f);
	if (!f)
		return FD_OTHER;
	bf = bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
	return mode_kind(bf->f_inode->i_mode);
#endif
}

/*
 * The kind of file a call of the syscall or vfs layer is on, as it starts;
 * *fp: the file behind a descriptor, for call_args_read() to reuse. Opens
 * are told at their exit, by the file they return (open_left_out()); the
 * file systems' own functions see regular files only.
 */
static __always_inline __u32 call_kind(void *ctx, int method, int args, struct file **fp,
				       struct task_struct *cur)
{
	switch (args) {
	case ARGS_FD:
	case ARGS_FD_POS:
	case ARGS_FD_VEC:
	case ARGS_FD_VEC_POS:
		*fp = fd_file(arg_n(ctx, method, 0), method, cur);
		return file_kind_of(*fp, method);
	case ARGS_FILE_RW:
	case ARGS_FILE_VEC:
	case ARGS_FILE_ITER:
	case ARGS_FILE:
		return file_kind((struct file *)arg_n(ctx, method, 0));
	case ARGS_OPEN_PATH: /* vfs_open(path, file): the file is not set up yet */
		return mode_kind(
			BPF_CORE_READ((struct path *)arg_n(ctx, method, 0), dentry, d_inode, i_mode));
	}
	return FD_STORAGE;
}

static __always_inline void count_left_out(__u32 layer, __u32 op, __u32 kind)
{
	__u32 idx = LEFT_OUT_INDEX(layer, op, kind);
	__u64 *n = bpf_map_lookup_elem(&left_out, &idx);

	if (n)
		(*n)++;
}

/*
 * An open(2) ends. Without --all-fds, one that returned a file that is not
 * storage is left out and counted by kind (a failed open is kept: it
 * looked a path up in a file system); under --file, one of another file
 * (open_exit()). Returns true when the open is to be left out.
 */
static __always_inline bool open_left_out(struct thread_starts *ts, void *ctx, int method,
					  int args, struct task_struct *cur)
{
	struct file *f;
	__s64 ret;

	if (all_fds && !want_args)
		return false;
	ret = ret_of(ctx, method, args);
	f = ret >= 0 ? fd_file((__u64)ret, method, cur) : NULL;
	if (!all_fds && ret >= 0) {
		__u32 kind = file_kind_of(f, method);

		if (kind != FD_STORAGE) {
			count_left_out(LAYER_SYSCALL, FSOP_OPEN, kind);
			ts->file_pending = 0;
			return true;
		}
	}
	return want_args && open_exit(ts, f);
}

#endif /* STORAGE_BPF_H */
