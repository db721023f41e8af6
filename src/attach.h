/* SPDX-License-Identifier: GPL-2.0 */
/* Carries out a plan: opens the BPF object, sets its knobs, loads what the
 * plan needs and attaches it, exits before entries. */
#ifndef ATTACH_H
#define ATTACH_H

#include <stddef.h>
#include "planner.h"
#include "progtab.h"

struct iostackbreak_bpf;
struct bpf_link;

struct tracer {
	struct iostackbreak_bpf *skel;
	struct progtab progs; /* the object's programs, by cell target */
	struct bpf_link **links;
	size_t nr_links;
	size_t cap_links;
	bool breaking_down; /* -P, -D or -F: the breakdown map is in use */
	bool with_stats;    /* --stats: read the programs' run time too */
	bool task_storage;  /* start slots in task storage, not the hash */
	int root_layer;	    /* the layer whose calls are split into parts; -1: none */
	int events_fd;	    /* the events ring buffer map (with knobs->events); else -1 */
};

struct tracer_knobs {
	int tgids[MAX_PID_FILTER]; /* none: all processes */
	unsigned int nr_tgids;
	int tid;	  /* 0: all threads */
	const char *comm; /* NULL: any name */
	int cgroup_fd;	  /* -1: any cgroup */
	bool filter_dev;
	unsigned int dev_major, dev_minor;
	bool queued;
	bool by_pid, by_disk, by_flags;
	unsigned int max_keys; /* 0: the object's default */
	bool follow_children;  /* the tgids' descendants too, forked from now on */
	bool seed_children;    /* and those that exist already (-p --children) */
	bool split_calls;      /* split calls of the root layer into parts */
	bool offcpu;	       /* with their off-CPU parts (sched_switch) */
	bool all_fds;	       /* syscall and vfs: every descriptor, not storage only */
	/* Single calls: events to user space, and the file filter. */
	bool events;		      /* --slower or --trace */
	bool trace;		      /* --trace: slices and requests too */
	bool full_path;		      /* --full-path */
	unsigned long long slower_ns; /* the kernel sends calls this long or more */
	unsigned int ring_bytes;      /* the ring buffer's size (a power of two) */
	struct file_id files[MAX_FILE_FILTER];
	unsigned int nr_files;
};

/*
 * Loads and attaches per plan. Cells whose targets all fail to attach are
 * marked METHOD_NONE with the reason; a target that fell back from fentry to
 * kprobe says so. Returns 0, or -1 with one line in err.
 */
int tracer_start(struct tracer *t, struct plan *plan, const struct tracer_knobs *knobs, char *err,
		 size_t errsz);

/* Detaches and unloads everything. */
void tracer_stop(struct tracer *t);

#endif /* ATTACH_H */
