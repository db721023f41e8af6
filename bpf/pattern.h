/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Access patterns (--pattern): the types the BPF programs (pattern.bpf.h,
 * pattern_blk.bpf.c) and user space (src/report/pattern.c) share. Fixed-width
 * types only.
 *
 * An access is sequential when it starts where the previous access of its
 * stream ended, else random, with the gap (start - previous end) by its
 * signed log2. A stream is, at the call level, the reads or the writes of
 * one open file description (a struct file, not a thread: the kernel's
 * read-ahead state and the position read() and write() advance for every
 * thread that shares it live there); at the block level, one disk (its
 * requests in the order they are issued to the driver, as the device sees
 * them); at the bio level, one device of a stack (its bios as they are
 * queued: dm-0's, and those it remaps onto the disk below, apart).
 */
#ifndef PATTERN_H
#define PATTERN_H

#include "iostackbreak.h"

/* Gaps by power of two of their bytes: slot k holds [2^k, 2^(k+1)); the
 * last slot holds every larger gap too. */
#define PAT_DIST_SLOTS 48
/* Sizes by power of two of their bytes, as gaps (the last slot: 2 GiB and up). */
#define PAT_SIZE_SLOTS 32

enum pattern_level {
	PAT_CALL, /* system calls with a file position */
	PAT_BLK,  /* block requests, by sector */
	PAT_BIO,  /* bios, by sector, per device of a stack (dm-0, the disk below) */
	NR_PAT_LEVELS,
};

/*
 * A pattern's key. Unused fields are 0: with no breakdown, one key per
 * (level, op). op: an enum fs_op (call) or enum blk_op (blk).
 */
struct pattern_key {
	__u8 level;
	__u8 op;
	__u16 file; /* call level under --file: the file's index + 1 */
	__u32 tgid; /* -P: the process (blk: the submitter) */
	__u32 dev;  /* -D, blk and bio levels: the disk or device (kernel dev_t) */
	__u32 pad;
	__u64 cgid; /* -G: the cgroup v2 id (blk: the submitter's) */
};

struct pattern_hist {
	__u64 seq;		    /* accesses that started where the last one ended */
	__u64 rand;		    /* the others */
	__u64 bytes;		    /* bytes of all accesses */
	__u64 fwd[PAT_DIST_SLOTS];  /* random accesses ahead of the last end */
	__u64 back[PAT_DIST_SLOTS]; /* and behind it */
	__u64 size[PAT_SIZE_SLOTS]; /* every access by its size */
};

struct pattern_value {
	char comm[COMM_LEN]; /* -P: the process's name */
	struct pattern_hist h;
};

/* Keys of the patterns map: a level's cells times a breakdown's keys. */
#define MAX_PATTERN_KEYS MAX_BREAKDOWN_KEYS
/* Open files whose last access is remembered (an LRU: the oldest go). */
#define MAX_PATTERN_FILES 16384
/* Disks whose last request is remembered. */
#define MAX_PATTERN_DISKS 1024

#endif /* PATTERN_H */
