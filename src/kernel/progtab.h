/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF programs of the object, resolved once after open into a table:
 * which program times which target of which cell, by which method. The
 * attach code and --stats both read it; nothing looks a program up by a
 * name built at run time.
 */
#ifndef PROGTAB_H
#define PROGTAB_H

#include "cells.h"
#include "planner.h"

struct iostackbreak_bpf;
struct bpf_program;

/* What a program is for. */
enum prog_role {
	ROLE_TARGET,	    /* times a target of a cell (cells.def) */
	ROLE_RAW_SYSCALLS,  /* the raw sys_enter/sys_exit pair: every syscall cell */
	ROLE_BLK,	    /* a block tracepoint: every blk cell */
	ROLE_FOLLOW,	    /* sched_process_fork/exit: following children */
	ROLE_OFFCPU,	    /* sched_switch: the off-CPU parts of calls */
	ROLE_URING,	    /* io_uring submit/complete: every io_uring cell */
	ROLE_URING_PUNT,    /* io_uring_queue_async_work: the io-wq part */
	ROLE_URING_POLL,    /* io_uring_poll_arm/task_add: the poll part */
	ROLE_URING_IOWQ_RUN, /* fentry io_wq_submit_work: io-wq-queued ends */
	ROLE_AIO_SUBMIT,    /* io_submit_one entry/exit: every aio cell */
	ROLE_AIO_COMPLETE,  /* aio_complete (lone): every aio cell */
	ROLE_AIO_WORK,	    /* aio_fsync_work entry/exit: an fsync's worker */
	ROLE_FAULT,	    /* handle_mm_fault entry/exit: every fault cell */
	ROLE_LOCK,	    /* contention_begin/end: the lock part */
	ROLE_JOURNAL,	    /* jbd2_start_commit/end_commit: the journal part */
	ROLE_JOURNAL_WAKER, /* sched_waking (lone): who woke a sleep in a call */
	ROLE_THREAD_GONE,   /* sched_process_exit (lone): a fast thread slot freed */
	ROLE_CACHE,	    /* mm_filemap_add_to_page_cache (tracepoint, lone) */
	ROLE_READAHEAD,	    /* page_cache_sync_ra/async_ra (tracepoint) */
	ROLE_WRITEBACK,	    /* ext4_writepages_result (tracepoint, lone) */
	ROLE_DIRTY,	    /* writeback_dirty_folio (lone): who dirtied a folio */
	ROLE_THROTTLE,	    /* balance_dirty_pages (tracepoint, lone): dirty pauses */
	ROLE_PATTERN,	    /* block_rq_issue (lone): --pattern's block level */
	ROLE_PATTERN_BIO,   /* block_bio_queue (lone): --pattern's bio level */
};

struct prog_ref {
	enum prog_role role;
	struct bpf_program *entry; /* blk: the program */
	struct bpf_program *exit;  /* blk: NULL */
	unsigned char layer, op;   /* blk: op is 0, the program serves every op */
	enum attach_method method;
	int target_id;	    /* index in cell_targets; blk: -1 */
	enum blk_tp blk_tp; /* blk only */
};

/* Per target, its tracepoint, fentry and kprobe pairs; the blk programs;
 * the tp_btf and raw_tp pairs of the shared roles (raw syscalls, follow,
 * off-CPU, io_uring, lock, journal); the page cache's tracepoints. */
#define NR_PROG_REFS (NR_CELL_TARGETS * 3 + NR_BLK_TPS * 2 + 13 * 2 + 5 + 4 * 2)

/* The layer of programs that time no cell (following forks and exits). */
#define LAYER_NONE NR_LAYERS

struct progtab {
	struct prog_ref refs[NR_PROG_REFS];
	unsigned int n;
};

/* Fills the table from an opened (not necessarily loaded) skeleton. */
void progtab_resolve(struct progtab *pt, struct iostackbreak_bpf *skel);

/* The pair of a cell target for a method, or NULL if it has none. */
const struct prog_ref *progtab_target(const struct progtab *pt, unsigned int target_id,
				      enum attach_method method);

/* The program of a block tracepoint for tp_btf or raw_tp. */
const struct prog_ref *progtab_blk(const struct progtab *pt, enum blk_tp tp,
				   enum attach_method method);

/* The programs of a role other than ROLE_TARGET and ROLE_BLK (a pair, or a
 * lone program in entry), for tp_btf or raw_tp (the page cache roles:
 * METHOD_TRACEPOINT; the aio roles: METHOD_FENTRY or METHOD_KPROBE). */
const struct prog_ref *progtab_role(const struct progtab *pt, enum prog_role role,
				    enum attach_method method);

#endif /* PROGTAB_H */
