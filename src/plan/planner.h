/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attach planner: a pure function from what this kernel has (struct
 * kcaps, filled by probe.c or by a test) and what the user asked for
 * (struct config) to what gets attached (struct plan), with the reason for
 * every source that was passed over.
 */
#ifndef PLANNER_H
#define PLANNER_H

#include <stdbool.h>
#include <stdio.h>
#include "iostackbreak.h"
#include "opts.h"

struct kcaps {
	bool btf;		/* the kernel's own BTF: /sys/kernel/btf/vmlinux loads */
	bool fentry;		/* a trial fentry/fexit loaded and attached */
	bool fentry_untried;	/* fentry predicted, not tried (--plan) */
	const char *fentry_why; /* if not, why (one phrase) */
	bool kprobes;		/* the kernel can create kprobes */
	const char *kprobe_why;
	const char *syscall_prefix; /* "__x64_sys_", "__arm64_sys_", ... or NULL */
	bool blk_rq_q_arg;	    /* insert/issue take (q, rq): before 5.11 */
	bool rdonly_cast; /* the bpf_rdonly_cast kfunc (6.2+) is in the kernel's BTF */
	/* net.core.bpf_jit_enable = 0: programs run in the interpreter, which
	 * refuses kfunc calls and callbacks (bpf_loop) */
	bool jit_off;
	/* io_uring_complete takes (ctx, req, user_data, res, cflags, ...),
	 * not (ctx, req, cqe): before 6.3 */
	bool uring_complete_fields;
	/* io_uring_queue_async_work/poll_arm/task_add do not take the request
	 * first: the parts are not read */
	bool uring_parts_other_args;
	bool bio_q_arg;		    /* block_bio_queue takes (q, bio): before 5.11 */
	void *ctx;
	/* category/event, e.g. ("syscalls", "sys_enter_read") */
	bool (*tracepoint_exists)(void *ctx, const char *category, const char *event);
	/* a function fentry can be pointed at (in BTF, vmlinux or module) */
	bool (*func_in_btf)(void *ctx, const char *func);
	/* a function kprobes can attach to (kallsyms, not blacklisted) */
	bool (*func_in_kallsyms)(void *ctx, const char *func);
	/* the file system is registered; if not, why (e.g. module not loaded) */
	bool (*fs_registered)(void *ctx, const char *fs);
	/* file-system layers with a file system mounted (1 << layer), read by
	 * kcaps_probe() from /proc/self/mounts: an input, as the rest */
	unsigned int fs_mounted;
	/*
	 * Does the kernel stamp the requests of disk (NULL: of every disk)
	 * with the time this mode reads (blk_stamps.h)? why: what says so, or
	 * why not. NULL: not known (never).
	 */
	bool (*blk_stamped)(void *ctx, const char *disk, bool queued, char *why, size_t whysz);
};

/* The most targets of any cell (syscalls or functions of bpf/cells.def). */
#define MAX_TARGETS 8

struct cell_plan {
	bool wanted;		/* its layer was asked for */
	enum attach_method src; /* METHOD_NONE: not traced */
	unsigned int nr_targets;
	const char *targets[MAX_TARGETS];	 /* syscall, function or tracepoint names */
	unsigned short target_ids[MAX_TARGETS];	 /* index in cell_targets (not blk) */
	enum attach_method tgt_src[MAX_TARGETS]; /* per target: may fall back at attach */
	char why[400];				 /* sources passed over, and why */
};

/* What the tracepoints of bpf/why.bpf.c add to split calls. */
enum why {
	WHY_LOCK,      /* the lock part: lock:contention_begin/end */
	WHY_JOURNAL,   /* the journal part: jbd2:jbd2_start_commit/end_commit */
	WHY_CACHE,     /* cache_miss_pages: filemap:mm_filemap_add_to_page_cache */
	WHY_READAHEAD, /* readahead_pages: readahead:page_cache_sync_ra/async_ra */
	WHY_WRITEBACK, /* writeback_pages: ext4:ext4_writepages_result */
	WHY_THROTTLE,  /* the throttled part: writeback:balance_dirty_pages */
	NR_WHYS,
};

struct plan {
	struct cell_plan cells[NR_LAYERS][NR_OPS];
	/* Block layer programs, shared by all its ops. */
	const char *blk_origin; /* "block_io_start", "block_rq_insert" or NULL */
	/* block_getrq: PREFLUSH bios' submitters, where insert is the origin */
	bool blk_preflush_bios;
	bool blk_rq_q_arg;
	bool uring_complete_fields; /* as in struct kcaps */
	bool uring_parts;	    /* io_uring requests split into parts */
	/* Block requests tied to the io_uring request whose issue started
	 * them (bpf/uring.bpf.c): the blk and io_uring layers, with parts or
	 * events. */
	bool uring_blk;
	/* io-wq-queued told from io-wq: fentry on io_wq_submit_work, where a
	 * worker takes a request (no tracepoint marks it). */
	bool uring_iowq_run;
	/* Where a request is submitted: io_uring_submit_req, else (before
	 * "io_uring: rename trace_io_uring_submit_sqe() tracepoint")
	 * io_uring_submit_sqe, which also takes the request first. */
	const char *uring_submit_tp;
	/*
	 * The aio layer (bpf/aio.bpf.c), by fentry/fexit or kprobes on
	 * io_submit_one and aio_complete: aio_worker, aio_fsync_work is
	 * attached too (an fsync's wait for a worker, its block requests);
	 * aio_parts, requests split into parts; aio_blk, block requests tied
	 * to the request whose submission or worker started them (with blk,
	 * and the parts or events).
	 */
	bool aio_worker;
	bool aio_parts;
	bool aio_blk;
	/* The fault layer (bpf/fault.bpf.c), by fentry/fexit or kprobes on
	 * handle_mm_fault: fault_blk, block requests a faulting thread starts
	 * tied to its fault (with blk). */
	bool fault_blk;
	/*
	 * One program per request, at completion, reading the kernel's stamps
	 * (bpf/blk_stamped.bpf.h); blk_timing says how blk times requests
	 * and why (--plan).
	 */
	bool blk_stamped;
	char blk_timing[400];
	bool bio_q_arg;
	enum attach_method mode;
	const char *syscall_prefix; /* for syscall cells traced by function */
	bool kprobe_fallback;	    /* a fentry target may fall back to kprobe */
	bool btf;		    /* tp_btf programs can load (else raw_tp) */
	/*
	 * File-system layers (1 << layer) taken by default, not named by -T,
	 * with nothing mounted: not worth a word in the skipped lines or the
	 * reports (no time is spent there); --plan still shows them.
	 */
	unsigned int quiet_layers;
	bool rdonly_cast;	    /* kcaps.rdonly_cast: the storage check's cheaper reads */
	bool unloaded;		    /* --plan without --check: nothing loaded or attached */
	/*
	 * The root layer, decided here once: the outermost layer of threads
	 * with a traced cell (-1: none), whose calls are sent as events; and
	 * the same layer when its calls are split into parts, else -1
	 * (--no-parts).
	 */
	int root_layer;
	int split_layer;
	/*
	 * Why a split call waited, and its pages (bpf/why.bpf.c): each of the
	 * lock part, the journal part, the page cache pages and readahead
	 * pages, with its tracepoints present and the off-CPU parts on; else
	 * false, and plan_print says why.
	 */
	bool why[NR_WHYS];
	const char *why_not[NR_WHYS];
	/*
	 * The block requests of the journal commits calls waited for: only
	 * where every request is seen where it starts (block_io_start, 6.5+);
	 * else false, and journal_blk_not says why.
	 */
	bool journal_blk;
	const char *journal_blk_not;
	/*
	 * Written-back requests charged to the tasks that dirtied their
	 * pages (bpf/writeback.bpf.c): where the blk layer is keyed by request
	 * and something asks who (a task filter, -P, -G, --file); else false,
	 * and wb_not says why.
	 */
	bool wb;
	const char *wb_not;
};

/* Fills plan. Never fails: cells that cannot be traced say why. */
void plan_build(const struct kcaps *caps, const struct config *cfg, struct plan *plan);

/* Layers asked for with -T of which not one cell can be traced. */
unsigned int plan_failed_layers(const struct plan *plan, const struct config *cfg);

/* Why a layer cannot be traced at all, with the remedy, in one line. */
void plan_layer_error(const struct plan *plan, unsigned int layer, char *buf, size_t sz);

/* Does any traced cell time calls of threads (every layer but bio, blk)? */
bool plan_traces_threads(const struct plan *plan);

/* Bit l set for each layer of threads (l < NR_CALL_LAYERS) with a cell traced. */
__u32 plan_timed_layers(const struct plan *plan);

/* Number of traced cells. */
unsigned int plan_nr_traced(const struct plan *plan);

/* The method as --plan names it ("tp_btf", "-" for METHOD_NONE). */
const char *method_name(enum attach_method method);

/* Under a plan that loaded nothing (--plan without --check). */
#define PLAN_UNLOADED_NOTE                                                                         \
	"note: nothing was loaded: this plan is read from BTF, tracefs and /proc/kallsyms, and "  \
	"fentry was not tried (a lockdown or a BPF LSM policy can still refuse it); "            \
	"--plan --check loads and attaches every program as a run does"

/* The table printed by --plan and -v. */
void plan_print(const struct plan *plan, FILE *out);

/* Sets plan->why from the kernel's tracepoints (planner_why.c). */
void plan_why(const struct kcaps *caps, const struct config *cfg, struct plan *plan);

/* --plan's lines for them: what each attaches to, or why it does not. */
void plan_why_print(const struct plan *plan, FILE *out);

/* Sets plan->wb (planner_wb.c), after the blk layer is planned. */
void plan_wb(const struct kcaps *caps, const struct config *cfg, struct plan *plan);
void plan_wb_print(const struct plan *plan, FILE *out);

#endif /* PLANNER_H */
