/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line into the BPF object: struct config, and what its
 * targets were resolved to on this machine, set the programs' const
 * volatile globals and the sizes of the maps, in one place (knobs.c).
 */
#ifndef KNOBS_H
#define KNOBS_H

#include <stdbool.h>
#include <linux/types.h>
#include "iostackbreak.h"
#include "opts.h"
#include "planner.h"

struct iostackbreak_bpf;

/* What the options that name things resolve to (session.c checks each). */
struct targets {
	int tgids[MAX_PID_FILTER]; /* -p, or the command's process; none: all */
	unsigned int nr_tgids;
	int cgroup_fd;			       /* --cgroup; -1: any cgroup */
	__u32 dev;			       /* -d: the disk's kernel dev_t */
	struct file_id files[MAX_FILE_FILTER]; /* --file, cfg->nr_files of them */
};

/* Are processes followed into the children they fork? A command's are,
 * unless --no-children (as strace -f and perf stat do); -p's with -f. */
bool knobs_follow_children(const struct config *cfg);

/* Sets the globals and map sizes of an opened, not yet loaded, object;
 * start slots in task storage, or in a hash of hash_slots (0: MAX_THREADS);
 * with task storage, fast_slots in front of it (0: none). */
void knobs_set(struct iostackbreak_bpf *skel, const struct config *cfg, const struct targets *tg,
	       const struct plan *plan, bool task_storage, long hash_slots, long fast_slots);

#endif /* KNOBS_H */
