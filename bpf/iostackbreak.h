/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs and user space. Fixed-width types only:
 * both sides must agree on every byte of these structs.
 */
#ifndef IOSTACKBREAK_H
#define IOSTACKBREAK_H

#include "hist_bucket.h"

/* Layers and operations come from the table of cells (cells.def). */
enum layer {
#define LAYER(id, name, kind, nests, module, help) id,
#include "cells.def"
	NR_LAYERS,
};

/* Operations of the syscall, vfs and file-system layers. */
enum fs_op {
#define FS_OP(id, name) id,
#include "cells.def"
	NR_FS_OPS,
};

/* Operations of the block layer, from cmd_flags & REQ_OP_MASK. */
enum blk_op {
#define BLK_OP(id, name) id,
#include "cells.def"
	NR_BLK_OPS,
};

/* Operations of the io_uring layer; the first four are the fs ops'. */
enum uring_op {
#define URING_OP(id, name) id,
#include "cells.def"
	NR_URING_OPS,
};
_Static_assert((int)UOP_READ == (int)FSOP_READ && (int)UOP_WRITE == (int)FSOP_WRITE &&
		       (int)UOP_OPEN == (int)FSOP_OPEN && (int)UOP_FSYNC == (int)FSOP_FSYNC,
	       "cells.def: io_uring's first ops are the fs ops");

/* Operations of the Linux AIO layer (cells.def), by iocb command. */
enum aio_op {
#define AIO_OP(id, name) id,
#include "cells.def"
	NR_AIO_OPS,
};

/* Operations of the page fault layer (cells.def), by the fault's kind. */
enum fault_op {
#define FAULT_OP(id, name) id,
#include "cells.def"
	NR_FAULT_OPS,
};

/*
 * How a program attaches. One enum for every side: the method --attach
 * forces, the one the planner picks for each cell and target, and the
 * program table's. (How a program then reads its target's arguments is
 * enum arg_method, bpf/files.bpf.h: it also depends on the target's kind,
 * a syscall wrapper holding the user's registers behind one more pointer,
 * and never leaves the BPF side.)
 */
enum attach_method {
	METHOD_NONE,	   /* a cell not traced; --attach=auto: none forced */
	METHOD_TRACEPOINT, /* classic tracepoint: syscalls:*, ext4:* */
	METHOD_TP_BTF,	   /* BTF-typed raw tracepoint; --attach=raw forces it
			    * for the raw syscall pair (raw_tp without BTF) */
	METHOD_RAW_TP,	   /* raw tracepoint */
	METHOD_FENTRY,	   /* fentry/fexit */
	METHOD_KPROBE,	   /* kprobe/kretprobe */
	NR_METHODS,
};

/* The stride of the cell index: room for the ops of any layer. */
#define NR_OPS 6
_Static_assert(NR_OPS >= NR_FS_OPS && NR_OPS >= NR_BLK_OPS && NR_OPS >= NR_URING_OPS &&
		       NR_OPS >= NR_AIO_OPS && NR_OPS >= NR_FAULT_OPS,
	       "NR_OPS too small");
#define NR_CELLS (NR_LAYERS * NR_OPS)
#define CELL_INDEX(layer, op) ((layer)*NR_OPS + (op))
#define CELL_LAYER(idx) ((idx) / NR_OPS)
#define CELL_OP(idx) ((idx) % NR_OPS)

/* One (layer, op) cell: a per-CPU value of the "cells" map. */
struct cell_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 min_ns; /* valid only when count > 0 */
	__u64 max_ns;
	/*
	 * Block requests that completed with an error: counted and timed
	 * apart, never in count, sum_ns or the buckets (a failed request's
	 * latency is not the device's service time). 0 for other layers.
	 */
	__u64 errors;
	__u64 error_sum_ns;
	__u64 buckets[HIST_NR_BUCKETS];
	/*
	 * -u, -m: the values in whole units of the report (floor(ns / unit)),
	 * by power of two: [0] below one unit, [k + 1] from 2^k to 2^(k+1) - 1
	 * units, as biolatency -m counts them. Log-linear ns buckets cannot be
	 * regrouped at 1000-based edges, so the kernel counts these as well.
	 * Filled for the histograms a text report prints (cells, parts of
	 * calls); 0 in ns runs and in breakdown cells.
	 */
	__u64 unit_slots[UNIT_SLOTS];
	/* Block and bio layers: the bytes of the requests or bios counted
	 * (count and errors); 0 for other layers. */
	__u64 bytes;
};

/* Why an event could not be recorded: indexes of the "drops" map. */
enum drop_reason {
	DROP_THREAD_MAP_FULL,	 /* no start slot for a thread */
	DROP_RQ_MAP_FULL,	 /* no start slot for a block request */
	DROP_BREAKDOWN_MAP_FULL, /* no room for a new key of a breakdown (-P/-D/-F) */
	DROP_PROCESS_SET_FULL,	 /* a forked child not followed: the set is full */
	DROP_PARTS_MAP_FULL,	 /* -P: no room for a key of a process's parts of calls */
	/*
	 * A request whose completion never reached block_rq_complete: its
	 * struct request was started again while its last use was still in
	 * flight for us (6.18, loop device, heavy concurrency: a few in
	 * 100,000). Counted where the reuse is seen, so blk counts plus these
	 * equal /proc/diskstats.
	 */
	DROP_RQ_COMPLETION_MISSED,
	/* An event (--slower, --trace) that found the ring buffer full: user
	 * space fell behind. The call is still in the histograms. */
	DROP_EVENT_LOST,
	/*
	 * A thread's slot taken for another thread by the LRU hash (only where
	 * task storage is unavailable) while a call of the thread was in
	 * progress: the call is not timed. One per eviction, at the first exit
	 * that finds the slot gone (bpf/thread_slots.h).
	 */
	DROP_THREAD_SLOT_EVICTED,
	/*
	 * A call of a vfs or file system layer whose exit never came (a
	 * kretprobe out of instances): not timed, closed when a call of an
	 * outer layer of the thread ended.
	 */
	DROP_CALL_EXIT_MISSED,
	/* No start slot for an io_uring request: the map of requests in
	 * flight is full. */
	DROP_URING_MAP_FULL,
	/*
	 * An io_uring request whose completion we never saw: its struct
	 * io_kiocb was submitted again (IOSQE_CQE_SKIP_SUCCESS posts no
	 * completion, or the completion came before we attached). Counted
	 * where the reuse is seen.
	 */
	DROP_URING_COMPLETION_MISSED,
	/*
	 * A block request completed without the time the kernel stamps in it
	 * (one program per request, bpf/blk_stamped.bpf.h): a passthrough
	 * request, or a queue whose stats or iostats went off during the run.
	 * Not timed (never as 0).
	 */
	DROP_RQ_UNSTAMPED,
	/* No start slot for a bio (the bio layer): bio_starts is full. */
	DROP_BIO_MAP_FULL,
	/*
	 * A bio queued again while our entry for it was open: the struct was
	 * reused after an end block_bio_complete did not report (a bio that
	 * failed before it reached its driver). Counted, then replaced.
	 */
	DROP_BIO_COMPLETION_MISSED,
	/* No start slot for an aio request: the map of iocbs in flight is
	 * full. */
	DROP_AIO_MAP_FULL,
	/*
	 * An aio request submitted while our entry for the same iocb of the
	 * same context was open: its completion was not seen (it came before
	 * we attached), or the application submitted an iocb still in flight
	 * again. Counted, then replaced.
	 */
	DROP_AIO_COMPLETION_MISSED,
	/* No slot for a thread's fault: the map of faults in progress is
	 * full. */
	DROP_FAULT_MAP_FULL,
	/* A thread began a fault at another address while its fault after a
	 * VM_FAULT_RETRY was open: it gave up (a fatal signal). The open one
	 * is dropped, uncounted. */
	DROP_FAULT_ABANDONED,
	NR_DROP_REASONS,
};

/*
 * Storage files only (the default; --all-fds counts every descriptor): the
 * syscall and vfs layers time calls on regular files, block devices and
 * directories, told in the kernel from the inode of the call's file when
 * it starts (an open: of the file it returns); the io_uring layer tells a
 * request by its file when it completes. Calls on other files are left out
 * and counted by kind in the "left_out" map, per (layer, op).
 */
enum fd_kind {
	FD_PIPE,   /* S_ISFIFO: pipes and named FIFOs */
	FD_SOCKET, /* S_ISSOCK */
	/* Character devices, anonymous inodes (eventfd, epoll, timerfd, ...),
	 * O_PATH symlinks, and descriptors that are not open (EBADF: the
	 * call fails at once, with no I/O, and has no file to tell). */
	FD_OTHER,
	NR_FD_KINDS,
	FD_STORAGE = NR_FD_KINDS, /* not left out: counted in the cells */
};

/* The layers that leave calls out: syscall, vfs, io_uring and aio. */
#define LAYER_LEAVES_OUT(layer)                                                                    \
	((layer) == LAYER_SYSCALL || (layer) == LAYER_VFS || (layer) == LAYER_IO_URING ||          \
	 (layer) == LAYER_AIO)
#define LEFT_OUT_INDEX(layer, op, kind) (((layer)*NR_OPS + (op)) * NR_FD_KINDS + (kind))
#define NR_LEFT_OUT (NR_LAYERS * NR_OPS * NR_FD_KINDS)

/* Block request flags kept by -F (our own bits, not the kernel's). */
#define RQ_FLAG_SYNC (1U << 0)
#define RQ_FLAG_META (1U << 1)
#define RQ_FLAG_FUA (1U << 2)
#define RQ_FLAG_PREFLUSH (1U << 3)
#define NR_RQ_FLAGS 4

/* Key of a cell broken down by process, disk, request flags or cgroup. */
struct breakdown_key {
	__u32 cell_idx; /* CELL_INDEX(layer, op) */
	__u32 tgid;	/* -P: the process (blk: its submitter); else 0 */
	__u32 dev;	/* -D: kernel dev_t of the disk (bio, blk only); else 0 */
	__u32 flags;	/* -F: RQ_FLAG_* (blk only); else 0 */
	__u64 cgid;	/* -G: cgroup v2 id (blk: the submitter's); else 0 */
};

#define COMM_LEN 16

#include "writeback_types.h" /* buffered writeback charged to the dirtier */

/*
 * -G: a cgroup's path as the kernel had it when its first call or request
 * was recorded (cgroup_paths map), so that a cgroup gone before user space
 * looks still has a name. names[0] is the cgroup's own, names[depth - 1]
 * the one below the root; truncated: there were more above.
 */
#define CG_PATH_DEPTH 8
#define CG_NAME_LEN 128
struct cgroup_path {
	__u32 depth;
	__u32 truncated;
	char names[CG_PATH_DEPTH][CG_NAME_LEN];
};

struct breakdown_cell {
	char comm[COMM_LEN];   /* the process's name when the key was created */
	struct cell_hist cell; /* updated with atomics: the map is shared by CPUs */
};

/* Most PIDs -p takes. */
#define MAX_PID_FILTER 16

/*
 * Where a call's time goes (bpf/call_parts.h): the parts of one call of the
 * outermost traced layer. A part is the self time on CPU of a layer that
 * times threads (the index is the layer's), or time off CPU by kind.
 */
/* The layers of threads: all before io_uring (its requests and blk's are
 * not calls of a thread). */
#define NR_CALL_LAYERS LAYER_IO_URING
_Static_assert(LAYER_BLK == NR_LAYERS - 1 && LAYER_BIO == NR_LAYERS - 2,
	       "cells.def: bio and blk must be the last layers");
enum part {
	PART_IO_WAIT = NR_CALL_LAYERS, /* asleep in io_schedule (task->in_iowait) */
	PART_BLOCKED,		       /* any other sleep: locks, wait queues */
	PART_RUNQUEUE,		       /* runnable, not running: preempted */
	/*
	 * Between lock:contention_begin and contention_end (5.19+), on CPU
	 * (spinning) or asleep: taken out of the layer's self time and of
	 * io_wait or blocked, never out of runqueue.
	 */
	PART_LOCK,
	/* A sleep the journal's thread (jbd2) ended: a commit, or a
	 * transaction's credits. */
	PART_JOURNAL,
	/*
	 * Paused by a limit: the sleep that follows a pause the kernel
	 * announced (policy dirty: writeback:balance_dirty_pages, a writer
	 * that dirtied pages faster than its disk writes them back).
	 */
	PART_THROTTLED,
	NR_PARTS,
};
_Static_assert(NR_PARTS <= 16, "thread_starts.parts_mask holds a bit per part");

/* The kinds of lock in the lock part, from contention_begin's flags. */
enum lock_kind {
	LOCK_MUTEX,	  /* LCB_F_MUTEX (rt_mutex too) */
	LOCK_RWSEM_READ,  /* LCB_F_READ: rwsem, percpu-rwsem */
	LOCK_RWSEM_WRITE, /* LCB_F_WRITE */
	LOCK_OTHER,	  /* spinlocks, rwlocks, anything else */
	NR_LOCK_KINDS,
};

/* A jbd2 thread's slot: where its commit is (see journal.bpf.h). */
#define JBD2_NONE 0
#define JBD2_COMMITTING 1
#define JBD2_COMMITTED 2
#define NO_LAYER 0xff

/* Open calls of one thread, one slot per layer (nested layers coexist). */
struct thread_starts {
	__u64 start_ns[NR_LAYERS];
	__u32 depth[NR_LAYERS]; /* re-entry depth; the outermost call is timed */
	/* The call of the outermost open layer, split as it goes. */
	__u64 last_ns;		 /* the last transition (enter, exit, switch) */
	__u64 part_ns[NR_PARTS]; /* time charged to each part so far */
	__u64 blk_bytes;	 /* block requests started during the call */
	__u32 blk_requests;
	__u32 blk_flushes; /* of those, the device flushes its requests waited for */
	__u8 inner; /* the innermost open layer; NO_LAYER: no call open */
	__u8 root;  /* the outermost layer of the open call */
	__u8 off;   /* 0: on CPU; else the off-CPU part + 1 */
	/* An open(2) under --file: matched at exit on the file it returns. */
	__u8 file_pending;
	/* A program is changing the thread's split (call_parts.h). */
	__u8 busy;
	/* The counts below (blk_*, lock_max_*, journal_*, pages) are the
	 * open call's: set by the first to count one (call_parts.h). */
	__u8 counting;
	/* Bit p: part_ns[p] was charged in this call (so is not 0); a clear
	 * bit's part_ns, and lock_ns without PART_LOCK's, are stale
	 * (call_parts.h: parts_ns()). */
	__u16 parts_mask;
	/* The root call's file and range (--slower, --trace, --file). */
	__u64 file;  /* its struct file (a kernel address); 0: unknown */
	__u64 pos;   /* the position it used; NO_POS: none (open, fsync) */
	__u64 bytes; /* the size it asked for */
	/* The lock part: the contention in progress (0: none), time by kind. */
	__u64 lock_addr;
	__u64 lock_ns[NR_LOCK_KINDS];
	__u64 lock_start;    /* when the contention in progress began */
	__u64 lock_max_ns;   /* the call's longest contention, */
	__u64 lock_max_addr; /* and its lock */
	__u8 lock_kind;	     /* enum lock_kind + 1; 0: not in a contention */
	/*
	 * A jbd2 thread's own slot: JBD2_* of its commit. Its journal_*
	 * fields below then count the commit's requests. In a call's slot,
	 * journal_* are those of the commit the call waited for: the last
	 * whose end woke it.
	 */
	__u8 jbd2_state;
	__u32 journal_requests; /* the commit's, a device flush included */
	__u32 journal_flushes;
	__u64 journal_bytes;
	/* Pages the call added to the page cache, and those of them past
	 * the range the readahead tracepoints said the call asked for. */
	__u64 cache_miss_pages;
	__u64 readahead_pages;
	__u64 ra_req_end; /* first page index past the asked range; 0: none seen */
	/* Pages the call's thread put under writeback (ext4's writepages). */
	__u64 writeback_pages;
	/* Dirty throttling: the pauses announced in the call (pause > 0), and
	 * one announced whose sleep has not begun. */
	__u32 throttle_pauses;
	__u8 throttle_pending;
};

#define NO_POS (~0ULL)

/*
 * Where a call's file, position and size sit in the arguments of the
 * function or system call that times it (the args of cells.def).
 */
enum call_args {
	ARGS_FD,	 /* (fd, buf, count): read, write; (fd): fsync; f_pos */
	ARGS_FD_POS,	 /* (fd, buf, count, pos): pread64, pwrite64 */
	ARGS_FD_VEC,	 /* (fd, iov, iovcnt): readv, writev; f_pos */
	ARGS_FD_VEC_POS, /* (fd, iov, iovcnt, pos, ...): preadv, pwritev and the v2s */
	ARGS_OPEN,	 /* open, openat, openat2, creat: the descriptor returned */
	ARGS_FILE_RW,	 /* (file, buf, count, loff_t *pos): vfs_read, vfs_write */
	ARGS_FILE_VEC,	 /* (file, iov, vlen, loff_t *pos, flags): vfs_readv, vfs_writev */
	ARGS_FILE_ITER,	 /* (file, iter, loff_t *pos, flags): vfs_iter_read/write */
	ARGS_KIOCB,	 /* (kiocb, iter): ->read_iter, ->write_iter */
	ARGS_FILE,	 /* (file, ...): vfs_fsync_range, ->fsync */
	ARGS_OPEN_PATH,	 /* (path, file): vfs_open */
	ARGS_OPEN_INODE, /* (inode, file): ->open */
	ARGS_TP_DEV_INO, /* a tracepoint record with dev and ino (ext4_sync_file_enter) */
};

/* Files --file traces, by device (kernel dev_t of the superblock) and inode. */
#define MAX_FILE_FILTER 8
struct file_id {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/*
 * A call's bios by device level (events with the bio layer, call_bio map).
 * Each bio the call queued, and each bio one of them became on a device
 * below (block_bio_remap, followed by device and sector), adds its time to
 * its device's level when it ends without error; a remapped bio's time
 * also goes to the level of the device above it, as below_ns. A level's
 * own time is ns - below_ns; the levels' own times add up to top_ns when
 * no device ran bios below it side by side (RAID1 writes both mirrors).
 */
#define MAX_CALL_BIO_LEVELS 4
struct call_bio_level {
	__u32 dev;	/* kernel dev_t; 0: unused */
	__u32 bios;	/* the call's bios that ended on it */
	__u64 ns;	/* their time */
	__u64 below_ns; /* the time of the bios they became below */
};

struct call_bio {
	__u64 call_ns; /* the call (its thread's root call start) */
	__u64 top_ns;  /* the bios the call queued itself: its bio time */
	__u32 top_bios;
	__u32 cut; /* bios on more devices than MAX_CALL_BIO_LEVELS: in no level */
	struct call_bio_level lv[MAX_CALL_BIO_LEVELS];
};

/* A call's bio in flight by device and sector, where block_bio_remap
 * names the bio above the one it remaps (bio_calls_at map). */
struct bio_sector {
	__u64 sector;
	__u32 dev;
	__u32 pad;
};

struct bio_call {
	__u64 call_ns;
	__u32 tid;
	__u32 from; /* bio_remapped: the device above (0: none) */
};

/*
 * Events (--slower, --trace), through the "events" ring buffer. Every one
 * starts with its kind. A call is named by its thread and the start time
 * of its root layer (call_ns), which ties slices and requests to it.
 */
enum event_kind {
	EV_CALL = 1, /* a call of the root layer ended */
	EV_SLICE,    /* --trace: a layer's call, or an off-CPU wait, within a call */
	EV_REQUEST,  /* --trace: a block request submitted within a call, completed;
		      * --record: every block request counted in its cell */
};

#define FILE_NAME_LEN 64 /* a dentry name, cut to this (with its NUL) */
#define PATH_DEPTH 24	 /* --full-path: steps up from the file, at most */

/* EV_CALL flags */
#define EVF_PATH_CUT (1U << 0)	/* --full-path: deeper than PATH_DEPTH */
#define EVF_PATH_NONE (1U << 1) /* --full-path: no path (no file, or not a path) */
#define EVF_NO_FILE (1U << 2)	/* the call has no file (a bad fd, a failed open) */
#define EVF_LOCK_INODE (1U << 3) /* lock_addr is the call's file's inode's i_rwsem */
#define EVF_SEQ (1U << 4)	 /* --pattern: a sequential access (bpf/pattern.h) */
#define EVF_RANDOM (1U << 5)	 /* --pattern: a random access */
#define EVF_SPLIT (1U << 6)	 /* the call's parts went to the totals (record_call()) */

struct call_event {
	__u8 kind;
	__u8 layer; /* the root layer */
	__u8 op;
	__u8 path_depth; /* --full-path: steps in path[] */
	__u32 flags;	 /* EVF_* */
	__u32 pid, tid;
	__u64 call_ns; /* start, CLOCK_MONOTONIC */
	__u64 end_ns;
	__s64 ret;
	__u64 pos; /* NO_POS: none */
	__u64 bytes;
	__u64 part_ns[NR_PARTS]; /* 0 each without the parts of calls */
	__u64 blk_bytes;
	__u64 blk_max_ns; /* the slowest request of the call, completed by its end */
	__u32 blk_requests; /* a device flush its requests waited for included */
	__u32 blk_max_dev;
	__u32 blk_flushes; /* of blk_requests, those device flushes */
	__u32 parts_mask;  /* the parts charged (1 << enum part), 0 ns or more */
	__u64 ino;
	__u32 dev;
	/* An io_uring request (layer io_uring): its IORING_OP_*; part_ns[]
	 * then holds its parts by enum uring_part. 0 for other layers. */
	__u32 opcode;
	__u32 journal_requests; /* by the journal commits it waited for */
	__u32 journal_flushes;
	__u64 journal_bytes;
	__u64 cache_miss_pages;
	__u64 readahead_pages;
	__u64 writeback_pages;
	__u64 lock_ns[NR_LOCK_KINDS]; /* the lock part by kind */
	__u64 lock_addr;	      /* the lock of its longest contention; 0: none */
	__u64 lock_max_ns;	      /* that contention's time */
	__u64 throttle_pauses;	      /* balance_dirty_pages pauses (pause > 0) */
	struct call_bio bio;	      /* with the bio layer: its bios by device */
	char comm[COMM_LEN];
	char file[FILE_NAME_LEN];
};

/*
 * A call event with its path (--full-path): path[i] is the name step i
 * passed going up, the file's own first; "" where the step crossed a mount.
 */
struct call_path_event {
	struct call_event call;
	char path[PATH_DEPTH][FILE_NAME_LEN];
};

/* slice_event flags */
#define SLF_CONTENTION (1U << 0) /* a lock contention: what PART_LOCK, op its kind */
#define SLF_LOCK_INODE (1U << 1) /* lock_addr is the call's file's inode's i_rwsem */

struct slice_event {
	__u8 kind;
	__u8 what;  /* a layer (< NR_CALL_LAYERS), or an off-CPU part */
	__u8 op;    /* the layer's op; a contention's enum lock_kind */
	__u8 flags; /* SLF_* */
	__u32 tid;
	__u64 call_ns;
	__u64 start_ns, end_ns;
	__u64 lock_addr; /* SLF_CONTENTION: the lock; else 0 */
};

struct request_event {
	__u8 kind;
	__u8 op; /* enum blk_op */
	__u8 error;
	__u8 flags; /* --pattern: EVF_SEQ or EVF_RANDOM; 0: not judged */
	__u32 tid; /* the submitter */
	__u32 pid;
	__u32 dev;
	__u64 call_ns; /* the submitter's call */
	__u64 start_ns, end_ns;
	__u64 bytes;
	__u64 sector; /* its first sector on its disk */
	/* What its cell and breakdowns took (blk_complete(), for --record) */
	__u32 data_len;	 /* the bytes counted */
	__u32 key_dev;	 /* the disk its -D key names */
	char comm[COMM_LEN]; /* the submitter's, as -P names it */
};

/* The slowest request of a thread's call so far (call_blk map). */
struct call_blk {
	__u64 call_ns;
	__u64 max_ns;
	__u32 dev;
	__u32 pad;
};

/* Indexes of the call_parts map: per op and part, then per op the pages
 * each call added to the page cache (calls with none are not added). */
#define CALL_PARTS_INDEX(op, part) ((op)*NR_PARTS + (part))
#define CALL_PAGES_INDEX(op) (NR_FS_OPS * NR_PARTS + (op))
#define NR_CALL_PARTS_ENTRIES (NR_FS_OPS * (NR_PARTS + 1))

/* Keys of the breakdown map (-P) for the parts of calls, past the cells. */
#define CALL_PART_INDEX(op, part) (NR_CELLS + (op)*NR_PARTS + (part))
#define CALL_TOTAL_INDEX(op) (NR_CELLS + NR_FS_OPS * NR_PARTS + (op))

/*
 * -D with the bio layer: the bios one device remapped onto another
 * (block_bio_remap: dm-0 onto vda), per op, timed on the device below. The
 * key's dev is the device below, its flags field the device above.
 */
#define BIO_EDGE_INDEX(op) (CALL_TOTAL_INDEX(NR_FS_OPS) + (op))

/*
 * -P: what a process's calls of an op did besides their parts, one key
 * each past the bio edges, added for calls where it is not 0 (count: those
 * calls; sum_ns: the figure's sum over them, pages, requests, bytes or ns).
 * PC_CACHE_MISS's buckets are the histogram of pages per call.
 */
enum process_count {
	PC_CACHE_MISS,	     /* cache_miss_pages */
	PC_READAHEAD,	     /* readahead_pages */
	PC_JOURNAL_REQUESTS, /* the journal commits waited for: requests, */
	PC_JOURNAL_FLUSHES,  /* flushes among them, */
	PC_JOURNAL_BYTES,    /* and bytes */
	PC_WRITEBACK,	     /* writeback_pages */
	PC_LOCK,	     /* the lock part by kind: PC_LOCK + enum lock_kind */
	NR_PROCESS_COUNTS = PC_LOCK + NR_LOCK_KINDS,
};
#define PROCESS_COUNT_INDEX(op, what) (BIO_EDGE_INDEX(NR_OPS) + (op)*NR_PROCESS_COUNTS + (what))

/* Per op of the root layer: calls split into parts, and their block I/O. */
struct call_totals {
	__u64 count;
	__u64 total_ns; /* = the sum of every part, by construction */
	__u64 blk_requests;
	__u64 blk_bytes;
	/* By the journal commits the calls waited for (each commit once per
	 * call that waited for it). */
	__u64 journal_requests;
	__u64 journal_flushes;
	__u64 journal_bytes;
	__u64 cache_miss_pages;
	__u64 readahead_pages;
	__u64 writeback_pages;
	__u64 lock_ns[NR_LOCK_KINDS];
	__u64 throttle_pauses; /* balance_dirty_pages pauses (pause > 0) */
};

/* A block request between its first sighting and its completion. */
struct rq_start {
	__u64 origin_ns;     /* block_io_start or insert: queued time starts */
	__u64 issue_ns;	     /* handed to the driver */
	__u32 tgid;	     /* submitter, recorded where it is still current */
	__u32 dev;	     /* the request's disk (of those the filters let in) */
	char comm[COMM_LEN]; /* submitter's name, for -P */
	__u32 excluded;	     /* seen at insert and filtered out: skip it at issue */
	__u32 tid;	     /* submitter thread, when its call is followed (events) */
	__u64 alloc_ns;	     /* rq->start_time_ns: tells a requeue (same) from a reuse */
	__u64 call_ns;	     /* the submitter's call (events); 0: none */
	__u64 cgid;	     /* submitter's cgroup v2 id, for -G */
	/* The io_uring request whose issue started it (its struct
	 * io_kiocb, and its start_ns to tell a reuse); 0: none. */
	__u64 uring_req;
	__u64 uring_ns;
	/* The aio request whose submission or fsync worker started it (its
	 * context and iocb, and its start_ns); aio_ctx 0: none. */
	__u64 aio_ctx;
	__u64 aio_obj;
	__u64 aio_ns;
	/* -K, -U: the stacks it counts under, for its time (stacks.bpf.h). */
	__s32 kstack, ustack;
	__u32 stack_op; /* its op + 1; 0: not counted */
	__u32 ucopy;	/* ustack STACK_UNWOUND: its copy's number, for its time */
};

/* The parts of an io_uring request (cells.def). */
enum uring_part {
#define URING_PART(id, name) id,
#include "cells.def"
	NR_URING_PARTS,
};

/*
 * An io_uring request between its submission and its completion, keyed by
 * its struct io_kiocb: the kernel does not reuse one before the request's
 * completion is posted and the request freed, so the pointer names one
 * request in flight (user_data is the application's and may repeat).
 */
struct uring_start {
	__u64 start_ns; /* io_uring_submit_req */
	__u32 tgid;	/* the submitter, where it is still current */
	__u32 tid;
	__u8 op;     /* enum uring_op */
	__u8 opcode; /* IORING_OP_* */
	__u8 part;   /* the part its time goes to now (enum uring_part) */
	__u8 pad;
	__u32 pad2;
	char comm[COMM_LEN]; /* the submitter's name, for -P */
	__u64 last_ns;			 /* the last change of part */
	__u64 part_ns[NR_URING_PARTS]; /* time in each part so far */
	__u64 pos, bytes;		 /* events: a read's or write's; else NO_POS */
	__u64 cgid;			 /* -G: the submitter's cgroup v2 id */
	/* The block requests its issue started (uring_blk), as a call's. */
	__u64 blk_bytes;
	__u64 blk_max_ns; /* the slowest of them, completed by its end */
	__u32 blk_requests;
	__u32 blk_max_dev;
};

/* The parts of an aio request (cells.def). */
enum aio_part {
#define AIO_PART(id, name) id,
#include "cells.def"
	NR_AIO_PARTS,
};

/*
 * An aio request in flight, keyed by its context (struct kioctx) and the
 * user's struct iocb: both known where io_submit_one() starts, before the
 * kernel allocates its own struct, and both in that struct at completion
 * (ki_ctx, ki_res.obj). io_cancel() finds a request by the same pair.
 */
struct aio_key {
	__u64 ctx;
	__u64 obj;
};

struct aio_start {
	__u64 start_ns; /* io_submit_one() entered */
	__u64 sub_ns;	/* io_submit_one() returned 0; 0: not yet */
	__u64 work_ns;	/* an fsync worker took it; 0: not (yet) */
	__u64 end_ns;	/* completed inside its submission: when (recorded at its end) */
	__u64 cgid; /* -G: the submitter's cgroup v2 id */
	/* The block requests its submission or fsync worker started. */
	__u64 blk_bytes;
	__u64 blk_ns; /* their time (issue, or -Q origin, to completion) */
	__u64 blk_max_ns; /* the slowest of them (events) */
	__u32 blk_max_dev;
	__u32 blk_requests; /* a device flush one waited for included */
	__u32 blk_flushes;
	__u32 tgid, tid; /* the submitter */
	__u16 cmd;	 /* its IOCB_CMD_* */
	__u8 op;	 /* enum aio_op; NR_AIO_OPS: command not read yet */
	__u8 file_ok;	 /* --file: its descriptor's file is traced (at submission) */
	__u64 pos, bytes; /* events: a read's or write's; else NO_POS */
	char comm[COMM_LEN];
};

/* A thread's aio state: the iocb it is submitting (io_submit_one), or the
 * fsync a worker runs (aio_fsync_work); ctx 0: none. */
struct aio_thread {
	struct aio_key submitting;
	struct aio_key working;
};

/* Per op: requests, their time, how many completed inside io_submit, and
 * their block requests. */
struct aio_totals {
	__u64 count;
	__u64 total_ns; /* = the sum of every part, by construction */
	__u64 inline_count;
	__u64 blk_requests;
	__u64 blk_flushes;
	__u64 blk_bytes;
	__u64 blk_ns;
};

/*
 * A thread's fault in progress (bpf/fault.bpf.c), from its first
 * handle_mm_fault() until the one that does not return VM_FAULT_RETRY.
 * What it faults on is read at the first call: after a VM_FAULT_RETRY the
 * mmap lock was dropped and the vma may be gone.
 */
struct fault_start {
	__u64 start_ns;
	__u64 address;	/* the faulting page's address */
	__u64 file;	/* the mapping's struct file; 0: anonymous */
	__u64 ino;	/* its inode's number and device (--file, events) */
	__u64 pgoff;	/* the page's offset in the file, in pages */
	__u64 cgid;	/* -G: the thread's cgroup v2 id */
	__u64 blk_bytes; /* the block requests the thread started in it */
	__u32 blk_requests;
	__u32 dev;
	__u32 flags;	/* the last call's FAULT_FLAG_* (kretprobes have no args) */
	__u8 op;	/* enum fault_op, before major is known */
	__u8 file_ok;	/* --file: its file is traced */
	__u16 pad;
};

/* Per op: major faults, their time and their block requests. */
struct fault_totals {
	__u64 count;
	__u64 total_ns;
	__u64 blk_requests;
	__u64 blk_bytes;
};

/* A bio between block_bio_queue and block_bio_complete (the bio layer). */
struct bio_start {
	__u64 start_ns;
	__u32 tgid;	     /* submitter */
	__u32 dev;	     /* the bio's disk, when filtered or split by it */
	char comm[COMM_LEN]; /* submitter's name, for -P */
	__u32 upper;	     /* -D: the device that remapped it here (dm-0), or 0 */
	__u32 pending;	     /* in a request: its own end and its split pieces' to come */
	__u64 cgid; /* -G: the submitter's cgroup */
	/* Events: the call it is part of (tid 0: none), its first sector. */
	__u64 call_ns;
	__u32 tid;
	__u32 bytes; /* its size when queued (bi_size is 0 at its end) */
	__u64 sector;
};

/* System call numbers the raw syscall source can map to a cell (all the
 * table's on x86-64 and arm64 are below 512). */
#define SYSNR_SLOTS 512

/* Kernel dev_t encoding (MKDEV in include/linux/kdev_t.h), not glibc's. */
#define KDEV_MINORBITS 20
#define KDEV_MAKE(major, minor) (((__u32)(major) << KDEV_MINORBITS) | (__u32)(minor))

/* Sizes of the bounded maps (user space may raise them before load). */
/*
 * Threads with a call open at once, and block requests in flight: 8192
 * threads in I/O at one instant, or 4096 requests (four NVMe queues at
 * depth 1024), are far beyond what one host sustains; a full map is counted.
 */
#define MAX_THREADS 8192
/* Fast thread slots in front of task storage (bpf/thread.bpf.h), a power
 * of 2: 4096 of struct thread_starts, 1.5 MiB. */
#define FAST_SLOTS 4096
#define MAX_INFLIGHT_RQS 4096
/* io_uring requests in flight: rings of 4096 entries, a few of them. */
#define MAX_INFLIGHT_URING 16384
/* aio requests in flight: /proc/sys/fs/aio-max-nr is 65536 by default,
 * shared by every context of the machine. */
#define MAX_INFLIGHT_AIO 16384
/* Bios in flight: every level of a stack (dm-0 and the disk below) holds
 * one for the same I/O, and a bio-based device has no queue depth limit. */
#define MAX_INFLIGHT_BIOS 16384
#define MAX_BREAKDOWN_KEYS 2048
/* Processes followed at once under a traced one (-- COMMAND, -p --children):
 * a build of a large tree runs a few hundred; a full set is counted. */
#define MAX_FOLLOWED 8192

#endif /* IOSTACKBREAK_H */
