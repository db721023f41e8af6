/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks of block I/O (-K, -U) for a report: the kernel's counts by stack
 * id, their frames named, and the keys that name the same frames merged
 * (without -P, the processes of a name are one; addresses that differ in
 * two processes may be the same function).
 */
#ifndef STACK_REPORT_H
#define STACK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "iostackbreak.h"
#include "opts.h"
#include "report.h"
#include "stacks.h"

/* One frame as reports print it. */
struct stack_frame {
	char *name;	  /* "blk_mq_submit_bio", "pread64", "[unknown] (libfoo.so)" */
	char *module;	  /* user frames: the file; NULL: none known */
	uint64_t addr;	  /* as the kernel gave it */
	uint64_t elf_addr; /* user frames: the address looked up, in the file's terms */
	bool resolved;
};

/* The weights of one key or merged entry, by op. */
struct stack_weights {
	uint64_t requests[NR_BLK_OPS];
	uint64_t bytes[NR_BLK_OPS];
	uint64_t time_ns[NR_BLK_OPS];
	uint64_t timed[NR_BLK_OPS];
};

struct stack_entry {
	char comm[16];
	uint32_t tgid; /* -P: the process; 0 otherwise */
	uint32_t dev;  /* -D: the disk; 0 otherwise */
	/* Innermost first, as the kernel gives them. */
	struct stack_frame *kframes, *uframes;
	unsigned int nr_kframes, nr_uframes;
	bool klost, ulost; /* the stack map had no room for it */
	unsigned int part; /* calls: the part + 1 (a leaf frame "[io_wait]"); 0: none */
	struct stack_weights w;
	uint64_t weight; /* of the report's kind, every op */
};

/* What the kernel's maps held: one row per key. */
struct stack_raw {
	struct stack_key key;
	struct stack_counts counts;
};

/* The sources of frames a report reads (the BPF maps and symbolizers in a
 * run, fakes in the unit tests). */
struct stack_source {
	void *ctx;
	/* The ips of stack id, innermost first; returns how many (0: none). */
	unsigned int (*ips)(void *ctx, __s32 id, uint64_t ips[STACK_DEPTH]);
	/* A kernel address's function; returns 0 when resolved. */
	int (*kname)(void *ctx, uint64_t addr, char *buf, size_t sz);
	/* A user address of tgid (return_addr: every frame but the first). */
	int (*uname)(void *ctx, uint32_t tgid, uint64_t addr, bool return_addr,
		     struct stack_frame *f);
};

/* DWARF: the copies of user stacks unwound in the run, and how they ended. */
struct stack_unwinding {
	uint64_t unwound;      /* copies unwound with call frame information */
	uint64_t fp_walked;    /* auto: copies of processes with frame pointers, walked by them */
	uint64_t truncated;    /* ended in [truncated]: the copy was too small */
	uint64_t no_cfi;       /* ended in [no unwind info: FILE] */
	uint64_t failed;       /* ended in [unwind failed: FILE] */
	uint64_t copied_bytes; /* bytes of stack copied, all copies (both kinds) */
	uint64_t unwind_ns;    /* user space's time unwinding them */
};

struct stack_report {
	struct stack_entry *entries; /* heaviest first */
	size_t nr_entries;
	bool kernel, user, per_process, per_disk, queued;
	bool calls; /* stacks of calls (ops: enum fs_op), not of block requests */
	enum stack_weight weight;
	unsigned int top; /* text: per disk; 0: all */
	enum unit unit;
	disk_namer disk_name;
	uint64_t losses[NR_STACK_LOSSES];
	uint64_t keys;		   /* keys the kernel held */
	uint64_t max_keys;	   /* its room (--max-stacks) */
	uint64_t unresolved;	   /* frames printed as [unknown] */
	unsigned int procs_unread; /* processes whose maps could not be read */
	struct stack_unwinding unw; /* --user-stack=dwarf, auto */
};

/*
 * Builds the report of raw's n keys: frames from src, entries merged and
 * sorted by weight (r is cleared first: the caller fills in disk_name,
 * losses and procs_unread after). Returns 0 or -ENOMEM; stack_report_free() frees it.
 */
int stack_report_build(struct stack_report *r, const struct config *cfg,
		       const struct stack_raw *raw, size_t n, const struct stack_source *src);
void stack_report_free(struct stack_report *r);

/* An entry's weight in the report's kind: requests, bytes, or time in
 * the report's unit (rounded). */
uint64_t stack_entry_weight(const struct stack_report *r, const struct stack_entry *e);

#endif /* STACK_REPORT_H */
