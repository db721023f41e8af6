/* SPDX-License-Identifier: GPL-2.0 */
/* Carries out a plan: opens the BPF object, has knobs.c set its globals,
 * loads what the plan needs and attaches it, exits before entries. */
#ifndef ATTACH_H
#define ATTACH_H

#include <stddef.h>
#include "knobs.h"
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
	bool breaking_down;	 /* -P, -D or -F: the breakdown map is in use */
	bool with_stats;	 /* --stats: read the programs' run time too */
	bool task_storage;	 /* start slots in task storage, not the hash */
	unsigned int fast_slots; /* fast slots in front of task storage (0: none) */
	unsigned int hash_slots; /* with the hash: its entries */
	const struct plan *plan; /* what it carries out */
	int events_fd;		 /* the events ring buffer map (--slower, --trace); else -1 */
	/* Found at detach: requests whose completion no program saw. */
	uint64_t blk_missed_at_end;
	uint64_t aio_missed_at_end; /* aio_leftovers_count() before detaching */
};

/*
 * Loads and attaches per plan, which it never writes: what happened goes
 * to *done, which starts as a copy of the plan. There a cell whose targets
 * all failed to attach is METHOD_NONE with the reason, and a target that
 * fell back from fentry to kprobe says so (tgt_src, why). Reports read
 * *done. Returns 0, or -1 with one line in err.
 */
int tracer_start(struct tracer *t, const struct plan *plan, const struct config *cfg,
		 const struct targets *tg, struct plan *done, char *err, size_t errsz);

/* Where the threads' state lives, for -v: one line, no newline. */
void tracer_thread_state(const struct tracer *t, char *buf, size_t sz);

/* Detaches and unloads everything. */
/*
 * Detaches every program and keeps the maps: once it returns no program
 * runs (the kernel waits for those under way), so what the maps hold is
 * final and consistent across them, however long reading them takes.
 */
void tracer_detach(struct tracer *t);

void tracer_stop(struct tracer *t);

#endif /* ATTACH_H */
