/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffered writeback charged to the task that dirtied the pages: the types
 * the BPF side (bpf/writeback.bpf.c) and user space share. Fixed-width
 * types only. Included by iostackbreak.h.
 */
#ifndef WRITEBACK_TYPES_H
#define WRITEBACK_TYPES_H

/*
 * A page cache folio as its dirtying names it: the address_space of its
 * inode (which names the inode while it has dirty pages: an inode is not
 * evicted before they are written) and the folio's index in it. The
 * written-back bio names the same folio, so one key serves both ends.
 */
struct wb_page {
	__u64 mapping;
	__u64 index;
};

/* Who dirtied a folio, and when it went from clean to dirty. */
struct wb_dirtier {
	__u64 first_ns; /* writeback:writeback_dirty_folio, CLOCK_MONOTONIC */
	__u64 cgid;	/* the dirtier's cgroup v2 id */
	__u32 tgid, pid;
	__u32 nr_pages; /* the folio's pages when it was dirtied */
	__u32 pad;
	char comm[COMM_LEN];
};

/*
 * The dirtied-folio map's size: 4 KiB folios of 512 MiB of dirty page
 * cache. A full map drops its least recently dirtied entry; what that
 * costs shows as written-back bytes with an unknown dirtier, and the
 * evictions are counted (user space: dirtied - freed - still present).
 */
#define MAX_DIRTY_FOLIOS 131072

/* A block request key flag (breakdown_key.flags, past the RQ_FLAG_* bits
 * of -F): the cell counts requests written back for its process or cgroup,
 * not requests it submitted. */
#define RQ_FLAG_WRITEBACK (1U << 8)

/* -P: the key of written-back pages whose dirtier is not known (dirtied
 * before the run, a journal's or a file system's own blocks). */
#define WB_UNKNOWN_TGID 0xffffffffU

/*
 * Dirty age, per written-back request and dirtier: breakdown keys (cell_idx)
 * of the time from the first dirtying of its pages to the request's start
 * and to its completion, split as the blk cells are (-P, -D, -G). Far past
 * the other indexes, so a report that does not know them skips them.
 */
#define WB_AGE_SUBMIT_INDEX 0x10000U
#define WB_AGE_DONE_INDEX 0x10001U

/* The counters of the wb_counts map. */
enum wb_count {
	WBC_DIRTIED,	    /* entries made at a folio's dirtying */
	WBC_DIRTIED_PAGES,  /* their pages */
	WBC_REDIRTIED,	    /* a dirtying that found its folio's entry still there */
	WBC_FREED,	    /* entries removed when their folio's last page was written */
	WBC_REQUESTS,	    /* write requests with pages of a traced dirtier */
	WBC_BYTES,	    /* those pages' bytes (written back for a traced dirtier) */
	WBC_SELF_BYTES,	    /* bytes of requests their dirtier submitted itself */
	WBC_UNKNOWN_REQUESTS, /* write requests with page cache pages of no known dirtier */
	WBC_UNKNOWN_BYTES,  /* those pages' bytes */
	WBC_CUT_BYTES,	    /* bytes past the pages walked per request */
	WBC_CROWDED_BYTES,  /* bytes of dirtiers past the slots of one request */
	/* Bytes that are not page cache (direct I/O from user memory, a
	 * driver's own pages): nobody dirtied them. */
	WBC_OTHER_BYTES,
	NR_WB_COUNTS,
};

/* Dirty age: indexes of the wb_ages map (all traced dirtiers together). */
enum wb_age {
	WB_AGE_SUBMIT, /* first dirtying -> the request's start */
	WB_AGE_DONE,   /* first dirtying -> its completion */
	NR_WB_AGES,
};

#endif /* WRITEBACK_TYPES_H */
