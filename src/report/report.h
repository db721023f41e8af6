/* SPDX-License-Identifier: GPL-2.0 */
/* One report: the cells of an interval (or of the whole run) and what was
 * skipped, independent of how it is printed. */
#ifndef REPORT_H
#define REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "hist.h"
#include "opts.h"
#include "planner.h"
#include "uring_parts.h"
#include "aio_parts.h"
#include "breakdown.h"
#include "pattern_report.h"
#include "snapshot.h"
#include "stats.h"

/* Names a disk by its kernel dev_t, e.g. "nvme0n1"; "259:0" if unknown. */
typedef void (*disk_namer)(uint32_t dev, char *buf, size_t sz);

/* A disk the report covers that went away during the run (-d, -D). */
#define MAX_GONE_DISKS 16
struct gone_disk {
	uint32_t dev;  /* kernel dev_t */
	char name[32]; /* its /sys/block name, or "major:minor" */
};

struct report {
	struct timespec wall; /* when it was taken (CLOCK_REALTIME) */
	double interval_s;    /* the time it covers */
	struct cell_hist cells[NR_LAYERS][NR_OPS];
	uint64_t dropped;		 /* events that could not be recorded */
	uint64_t drops[NR_DROP_REASONS]; /* the same, by reason */
	const struct plan *plan;
	/* What the command line asked for: the report reads its options
	 * (--timestamp, --no-verdict, -d, -P/-D/-F/-G, --top, -B, ...) there. */
	const struct config *cfg;
	/* Breakdowns (-P, -D, -F, -G): entries in report order, or none. */
	const struct breakdown_set *breakdowns;
	disk_namer disk_name;
	const struct self_stats *stats; /* --stats: the tracer's own cost, or NULL */
	/*
	 * Where the time goes: calls of split_layer (the plan's; -1: not split) per op,
	 * and per part a histogram of its time per call, calls where it took
	 * no time included (in the first bucket).
	 */
	int split_layer;
	struct call_totals calls[NR_FS_OPS];
	struct cell_hist parts[NR_FS_OPS][NR_PARTS];
	/* io_uring requests split into parts, when r->plan->uring_parts. */
	struct uring_split uring;
	/* aio requests split into parts, when r->plan->aio_parts. */
	struct aio_split aio;
	/* Major faults per op: count, time, block requests (the fault layer). */
	struct fault_totals faults[NR_FAULT_OPS];
	struct cell_hist pages[NR_FS_OPS]; /* pages added per call, every call */
	struct wb_snapshot wb; /* written back for the dirtiers, when r->plan->wb */
	/*
	 * Calls on descriptors that are not storage files (pipes, sockets,
	 * ...), left out of the syscall and vfs layers; none with --all-fds
	 * (cfg->all_fds), which counts them in the cells.
	 */
	uint64_t left_out[NR_LAYERS][NR_OPS][NR_FD_KINDS]; /* LAYER_LEAVES_OUT layers */
	/* Disks traced (-d) or seen (-D) that are gone now. */
	struct gone_disk gone[MAX_GONE_DISKS];
	unsigned int nr_gone;
	/* -K, -U: the stacks of block I/O (src/report/stack_report.h), or NULL. */
	const struct stack_report *stacks;
	/* --pattern: the accesses of the interval by key, or NULL. */
	const struct pattern_set *patterns;
	/* What report_build() allocated for the pointers above. */
	struct breakdown_set own_breakdowns;
	struct self_stats own_stats;
	struct pattern_set own_patterns;
};

/*
 * Assembles the report of cur - prev (prev NULL: since the start) covering
 * secs seconds, with what the configuration asks for. Returns 0 or -ENOMEM;
 * report_release() frees it.
 */
int report_build(struct report *r, const struct config *cfg, const struct plan *plan,
		 const struct snapshot *cur, const struct snapshot *prev, double secs,
		 disk_namer disk_name);
void report_release(struct report *r);

/*
 * Notes in r the disks of the run that are gone (present() false): the -d
 * disk (filter_dev, named filter_name; 0: none) and, with -D, every disk
 * with a cell since the start (seen: the run's cumulative breakdowns, so a
 * disk gone quiet in this interval is still named).
 */
void report_find_gone_disks(struct report *r, const struct breakdown_set *seen, uint32_t filter_dev,
			    const char *filter_name, bool (*present)(uint32_t dev));

/* The name of a part: a layer's ("ext4": its self time) or a wait's. */
const char *part_name(unsigned int part);

/* The name of an enum lock_kind: "mutex", "rwsem_read", "rwsem_write", "other". */
const char *lock_kind_name(unsigned int kind);

/*
 * Is part a part of op's calls (-1: of any op's) by the plan: a wait when
 * waits are measured (offcpu), a layer's self time where the plan traces
 * the layer for op? Reports and events show these, and any other part
 * that took time in a call anyway (an O_SYNC write reaches a file
 * system's fsync).
 */
bool part_traced(const struct plan *plan, bool offcpu, int op, unsigned int part);

/* Is a part reported for op (-1: for any op)? (part_traced, or took time) */
bool report_has_part(const struct report *r, int op, unsigned int part);

/*
 * -P: the calls of one process and op (e, a CALL_TOTAL_INDEX entry of the
 * breakdowns) split into parts: parts[] from its CALL_PART_INDEX entries,
 * calls where a part took no time added as zeros. Returns the op.
 */
unsigned int report_process_parts(const struct report *r, const struct breakdown_entry *e,
				  struct cell_hist parts[NR_PARTS]);

/*
 * -P: what the calls of one process and op (e, as above) did besides their
 * parts: t's count, total, pages, journal commits' requests and lock part
 * by kind (its blk_* stay 0: not kept per process), and pages, the
 * histogram of pages each call added (calls with none as zeros).
 */
void report_process_counts(const struct report *r, const struct breakdown_entry *e,
			   struct call_totals *t, struct cell_hist *pages);

/* Is e the calls of one process and op (a CALL_TOTAL_INDEX entry)? */
bool report_is_process_calls(const struct breakdown_entry *e);

/* Timed operations of a layer in the report: the events its programs served. */
uint64_t report_layer_events(const struct report *r, unsigned int layer);

/* Is this layer broken down in this report? */
bool report_layer_broken_down(const struct report *r, unsigned int layer);

/*
 * -G: the name of e's cgroup: its path from the cgroup v2 root, "#ID" when
 * it went before it could be named, or NULL where nobody can be named (a
 * device flush asked for by a request that began before the run: id 0).
 * The container id and pod uid in the path go to ids (cgname.h).
 */
struct cgroup_ids {
	char container[80];
	char pod[40];
};
const char *report_cgroup_name(const struct breakdown_entry *e, char *buf, size_t sz,
			       struct cgroup_ids *ids);

const char *drop_reason_name(unsigned int reason);

/* "pipe", "socket", "other": a kind of file calls are left out on. */
const char *fd_kind_name(unsigned int kind);

/* Does the report leave calls of this layer out (syscall or vfs traced,
 * without --all-fds)? */
bool report_leaves_out(const struct report *r, unsigned int layer);

/*
 * The layer whose left-out calls stand for the report's (JSON "left_out"):
 * the outermost of syscall and vfs it leaves out of, as the calls a program
 * made; -1: none.
 */
int report_left_out_layer(const struct report *r);

/* Calls of a layer left out on a kind of file, all ops together. */
uint64_t report_left_out_total(const struct report *r, unsigned int layer, unsigned int kind);

/* A disk's name as reports give it (r->disk_name's, else "major:minor")
 * into name, and its "major:minor" into kdev. */
void report_disk_name(const struct report *r, uint32_t dev, char *name, size_t namesz, char *kdev,
		      size_t kdevsz);

/* Value in the unit, for printing. */
double ns_to_unit(uint64_t ns, enum unit unit);

/* "2026-11-22T07:50:01.123Z" */
void format_iso8601(const struct timespec *ts, char *buf, size_t sz);

/* Lines naming each skipped cell of the plan, for stderr in text mode. */
void report_skipped_text(FILE *out, const struct plan *plan);

#endif /* REPORT_H */
