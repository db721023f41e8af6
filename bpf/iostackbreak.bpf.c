// SPDX-License-Identifier: GPL-2.0
/*
 * iostackbreak: latency of I/O per layer of the storage stack.
 *
 * Every (layer, op) cell is timed by an entry/exit pair. User space decides
 * which programs load and where they attach (the plan); the programs here
 * only know their layer and op. Hot paths touch a per-CPU array and, for
 * start times, one hash lookup.
 *
 * One compilation unit, in files by concern. The headers hold shared state,
 * each saying what it owns (the maps and knobs that concern it); the .bpf.c
 * files hold the programs of one layer or source each. They are included
 * here rather than linked (bpftool gen object) because every program
 * inlines the same helpers and reads the same const volatile knobs: one
 * unit keeps one .rodata and one set of maps with no extern declarations,
 * and the skeleton's names are those of the single object. Order matters:
 * each file uses only what the files above it define.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "iostackbreak.h"
#include "call_parts.h"
#include "thread_slots.h"

char LICENSE[] SEC("license") = "GPL";

/* Shared state and the helpers around it. */
#include "record.bpf.h" /* histograms, breakdowns, drops */
#include "cgpath.bpf.h" /* -G: the paths of cgroups */
#include "filter.bpf.h" /* which tasks are traced */
#include "thread.bpf.h" /* the per-thread slot of open calls */
#include "files.bpf.h"	/* a call's file, position and size; --file */
#include "storage.bpf.h" /* storage files only: the kind of a call's file */
#include "pattern.bpf.h" /* --pattern: sequential or random */
#include "events.bpf.h" /* --slower and --trace events */
#include "stacks.bpf.h" /* -K, -U: counts by stack */
#include "layer.bpf.h"	/* entry and exit of a layer's call */

/* The programs, by layer or source. */
#include "syscall.bpf.c"  /* system call layer */
#include "fs.bpf.c"	  /* vfs and file systems */
#include "why.bpf.c"	  /* lock and journal parts, page cache pages */
#include "throttle.bpf.c" /* the throttled part: dirty throttling pauses */
#include "offcpu.bpf.c"	  /* off-CPU parts: sched_switch, sched_waking */
#include "proctree.bpf.c" /* children of traced processes */
#include "thread.bpf.c"	  /* fast thread slots freed at exit */
#include "uring.bpf.c"	  /* io_uring requests */
#include "uring_parts.bpf.c" /* where io_uring requests change part */
#include "aio.bpf.c"	  /* Linux AIO requests */
#include "fault.bpf.c"	  /* major page faults */
#include "blk.bpf.c"	  /* block layer */
#include "blk_bio.bpf.c"  /* bios joining requests; PREFLUSH bios before 6.5 */
#include "bio.bpf.c"	  /* bio layer: bios per device */
#include "writeback.bpf.c" /* written-back requests charged to their dirtiers */
#include "pattern_blk.bpf.c" /* --pattern: block requests by sector */
#include "hist_add.bpf.c"  /* one value into a histogram: a global function */
